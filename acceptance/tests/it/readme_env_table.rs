//! The README's environment-variable table and the code's `ENV_VARS` lists stay
//! in step, both directions: every variable a crate documents has exactly one
//! README row with the same owner, meaning and default, and every README row
//! is documented by its owner.
//!
//! Owners are the crates exporting `ENV_VARS`: `studyloop-acceptance`,
//! `studyloop-actors` and `studyloop` (the product; linked here as a
//! dev-dependency used only by this test), plus `studyloop-stubs`, whose
//! `acp::KNOBS` lists the stub ACP agent's `STUB_ACP_*` knobs. The product's
//! `EnvVarDoc` and the knobs have no default field, so those README default
//! cells are prose and not compared. On a
//! mismatch the test prints the rows the code expects, ready to paste.

use std::collections::BTreeMap;

/// One expected row: `None` default means "not documented in code".
struct Expected {
    meaning: String,
    default: Option<String>,
}

/// A README row.
struct Row {
    meaning: String,
    default: String,
}

const NO_DEFAULT: &str = "—";

fn expected() -> BTreeMap<(String, &'static str), Expected> {
    let mut rows = BTreeMap::new();
    for doc in studyloop_acceptance::selection::ENV_VARS {
        let default = Some(doc.default.unwrap_or(NO_DEFAULT).to_owned());
        rows.insert(
            (doc.name.to_owned(), "studyloop-acceptance"),
            Expected {
                meaning: doc.meaning.to_owned(),
                default,
            },
        );
    }
    for doc in studyloop_actors::ENV_VARS {
        let default = Some(doc.default.unwrap_or(NO_DEFAULT).to_owned());
        rows.insert(
            (doc.name.to_owned(), "studyloop-actors"),
            Expected {
                meaning: doc.meaning.to_owned(),
                default,
            },
        );
    }
    // The stub ACP agent's knobs: read by a test double, still variables a
    // developer sets, so they are in the one table.
    for (name, meaning) in studyloop_stubs::acp::KNOBS {
        rows.insert(
            ((*name).to_owned(), "studyloop-stubs"),
            Expected {
                meaning: (*meaning).to_owned(),
                default: None,
            },
        );
    }
    for doc in studyloop::ENV_VARS {
        rows.insert(
            (doc.name.to_owned(), "studyloop"),
            Expected {
                meaning: doc.meaning.to_owned(),
                default: None,
            },
        );
    }
    rows
}

/// Rows of the table under `## Environment variables`, keyed by (name, owner).
fn readme_rows() -> BTreeMap<(String, String), Row> {
    let readme =
        std::fs::read_to_string(studyloop_acceptance::bins::workspace_root().join("README.md"))
            .unwrap();
    let section = readme
        .split("\n## Environment variables\n")
        .nth(1)
        .expect("README.md has no `## Environment variables` section");
    let section = section.split("\n## ").next().unwrap();
    let mut rows = BTreeMap::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells = split_row(line);
        assert_eq!(cells.len(), 4, "README row does not have 4 cells: {line}");
        let name = cells[0].trim_matches('`').to_owned();
        let key = (name, cells[1].clone());
        let row = Row {
            meaning: cells[2].clone(),
            default: cells[3].clone(),
        };
        assert!(
            rows.insert(key.clone(), row).is_none(),
            "duplicate README row for {key:?}"
        );
    }
    rows
}

/// Splits a markdown table row on unescaped `|`, unescaping `\|`.
fn split_row(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            other => cells.last_mut().unwrap().push(other),
        }
    }
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

fn render(name: &str, owner: &str, e: &Expected) -> String {
    let default = e
        .default
        .clone()
        .unwrap_or_else(|| "(see meaning)".to_owned());
    format!(
        "| `{name}` | {owner} | {} | {} |",
        e.meaning.replace('|', "\\|"),
        default.replace('|', "\\|")
    )
}

#[test]
fn readme_env_table_matches_every_crates_env_vars() {
    let expected = expected();
    let readme = readme_rows();
    let mut problems = Vec::new();
    for ((name, owner), e) in &expected {
        match readme.get(&(name.clone(), (*owner).to_owned())) {
            None => problems.push(format!("missing row: {}", render(name, owner, e))),
            Some(row) => {
                if row.meaning != e.meaning {
                    problems.push(format!(
                        "meaning differs for {name} ({owner}):\n  README: {}\n  code:   {}",
                        row.meaning, e.meaning
                    ));
                }
                if let Some(default) = &e.default
                    && &row.default != default
                {
                    problems.push(format!(
                        "default differs for {name} ({owner}):\n  README: {}\n  code:   {default}",
                        row.default
                    ));
                }
            }
        }
    }
    for (name, owner) in readme.keys() {
        if !expected.keys().any(|(n, o)| n == name && o == owner) {
            problems.push(format!(
                "README row {name} ({owner}) is not in {owner}'s ENV_VARS"
            ));
        }
    }
    if !problems.is_empty() {
        let table: Vec<String> = expected.iter().map(|((n, o), e)| render(n, o, e)).collect();
        panic!(
            "{}\n\nThe rows the code expects:\n{}",
            problems.join("\n"),
            table.join("\n")
        );
    }
    assert!(
        expected.len() >= 8 + 10 + 19,
        "fewer documented variables than expected: {}",
        expected.len()
    );
}

#[test]
fn every_seed_table_variable_is_documented() {
    // The seed's "Every environment variable" table, which the README must cover.
    let seed = [
        "STUDYLOOP_ACC",
        "STUDYLOOP_ACC_HARNESS",
        "STUDYLOOP_ACC_ACTOR",
        "STUDYLOOP_ACC_REAL_AUTH",
        "LITELLM_API_KEY",
        "LITELLM_BASE_URL",
        "STUDYLOOP_ACC_GATEWAY_MODEL",
        "STUDYLOOP_ACC_DIRECT_PROVIDER",
        "STUDYLOOP_ACC_DIRECT_MODEL",
        "STUDYLOOP_ACC_HARNESS_ACTOR_CMD",
        "STUDYLOOP_UAT",
        "STUDYLOOP_UAT_EVIDENCE_ROOT",
    ];
    let readme = readme_rows();
    for name in seed {
        assert!(
            readme.keys().any(|(n, _)| n == name),
            "{name} is missing from the README env table"
        );
    }
}
