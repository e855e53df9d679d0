//! The environment chapter (`docs/environment.md`) and the code stay in step.
//! Its table of every variable StudyLoop reads and the code's `ENV_VARS` lists
//! agree both directions: every variable a crate documents has exactly one row
//! with the same owner, meaning and default, and every row is documented by its
//! owner. And every variable-name literal of the crates' non-test source (see
//! `env_literals`) is in that table or in the table of variables StudyLoop sets
//! for its children, which lists only names the source holds.
//!
//! Owners are the crates exporting `ENV_VARS`: `studyloop-acceptance`,
//! `studyloop-actors` and `studyloop` (the product; linked here as a
//! dev-dependency used only by this test), plus `studyloop-stubs`, whose
//! `acp::KNOBS` lists the stub ACP agent's `STUB_ACP_*` knobs. The product's
//! `EnvVarDoc` and the knobs have no default field, so those default cells are
//! prose and not compared. On a
//! mismatch the test prints the rows the code expects, ready to paste.

use std::collections::{BTreeMap, BTreeSet};

use crate::env_literals::{NOT_VARIABLES, variable_literals};
use crate::markdown::{table_under, workspace_root};

/// The chapter, and the headings of its two tables.
const CHAPTER: &str = "docs/environment.md";
const READ_TABLE: &str = "Every variable StudyLoop reads";
const SET_TABLE: &str = "Variables StudyLoop sets for its children";

/// One expected row: `None` default means "not documented in code".
struct Expected {
    meaning: String,
    default: Option<String>,
}

/// A row of the chapter's table.
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

fn chapter() -> String {
    std::fs::read_to_string(workspace_root().join(CHAPTER)).unwrap()
}

/// The names in the first column of the table under `title`.
fn names_under(text: &str, title: &str) -> Vec<String> {
    table_under(text, title)
        .unwrap_or_else(|| panic!("{CHAPTER} has no table under `## {title}`"))
        .into_iter()
        .map(|row| row[0].trim_matches('`').to_owned())
        .collect()
}

/// Rows of the table under `## Every variable StudyLoop reads`, keyed by (name, owner).
fn chapter_rows() -> BTreeMap<(String, String), Row> {
    let mut rows = BTreeMap::new();
    let table = table_under(&chapter(), READ_TABLE)
        .unwrap_or_else(|| panic!("{CHAPTER} has no table under `## {READ_TABLE}`"));
    for cells in table {
        assert_eq!(
            cells.len(),
            4,
            "{CHAPTER} row does not have 4 cells: {cells:?}"
        );
        let name = cells[0].trim_matches('`').to_owned();
        let key = (name, cells[1].clone());
        let row = Row {
            meaning: cells[2].clone(),
            default: cells[3].clone(),
        };
        assert!(
            rows.insert(key.clone(), row).is_none(),
            "duplicate {CHAPTER} row for {key:?}"
        );
    }
    rows
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
fn env_chapter_matches_every_crates_env_vars() {
    let expected = expected();
    let documented = chapter_rows();
    let mut problems = Vec::new();
    for ((name, owner), e) in &expected {
        match documented.get(&(name.clone(), (*owner).to_owned())) {
            None => problems.push(format!("missing row: {}", render(name, owner, e))),
            Some(row) => {
                if row.meaning != e.meaning {
                    problems.push(format!(
                        "meaning differs for {name} ({owner}):\n  chapter: {}\n  code:    {}",
                        row.meaning, e.meaning
                    ));
                }
                if let Some(default) = &e.default
                    && &row.default != default
                {
                    problems.push(format!(
                        "default differs for {name} ({owner}):\n  chapter: {}\n  code:    {default}",
                        row.default
                    ));
                }
            }
        }
    }
    for (name, owner) in documented.keys() {
        if !expected.keys().any(|(n, o)| n == name && o == owner) {
            problems.push(format!(
                "{CHAPTER} row {name} ({owner}) is not in {owner}'s ENV_VARS"
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
    // The seed's "Every environment variable" table, which the chapter must cover.
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
    let documented = chapter_rows();
    for name in seed {
        assert!(
            documented.keys().any(|(n, _)| n == name),
            "{name} is missing from the table of {CHAPTER}"
        );
    }
}

#[test]
fn every_variable_named_in_the_source_is_in_the_chapter() {
    let text = chapter();
    let read: BTreeSet<String> = names_under(&text, READ_TABLE).into_iter().collect();
    let set: BTreeSet<String> = names_under(&text, SET_TABLE).into_iter().collect();
    let found = variable_literals(&workspace_root());
    let mut problems = Vec::new();
    for (name, at) in &found {
        if !read.contains(name) && !set.contains(name) && !NOT_VARIABLES.contains(&name.as_str()) {
            problems.push(format!(
                "{at}: `{name}` is not in {CHAPTER}: add it to its crate's ENV_VARS (and the row \
                 under `## {READ_TABLE}`) if the code reads it, or a row under `## {SET_TABLE}` \
                 if it only sets it for a child"
            ));
        }
    }
    for name in &set {
        if !found.contains_key(name) {
            problems.push(format!(
                "{CHAPTER}: `{name}` is under `## {SET_TABLE}` but no non-test source names it; \
                 drop the row"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(found.len() >= 60, "too few names found: {}", found.len());
}
