//! Every `studyloop … --json` answer is the one envelope (issue 30 item 1,
//! docs/schemas/envelope.schema.json): each success names its documented command
//! (the CLI table in docs/using-studyloop.md "The JSON envelope") and validates
//! against the schema; each failure under `--json` is the `{"error": …}` object on
//! stdout with a non-zero exit, and still one line on stderr.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::World;

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schemas/envelope.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the schema")).expect("JSON")
}

fn validator() -> (boon::Schemas, boon::SchemaIndex) {
    let mut c = boon::Compiler::new();
    c.set_default_draft(boon::Draft::V2020_12);
    c.add_resource("urn:test:envelope", schema())
        .expect("resource");
    let mut schemas = boon::Schemas::new();
    let idx = c
        .compile("urn:test:envelope", &mut schemas)
        .expect("compiles");
    (schemas, idx)
}

/// `"studyloop ARGS" -> command`, the CLI rows of the docs table.
fn documented() -> BTreeMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/using-studyloop.md");
    let doc = std::fs::read_to_string(path).expect("docs/using-studyloop.md");
    let section = doc
        .split("## The JSON envelope")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the section");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            match cells[..] {
                [_, cmd, name, _] if cmd.starts_with("`studyloop ") && name.starts_with('`') => {
                    Some((
                        cmd.trim_matches('`').to_owned(),
                        name.trim_matches('`').to_owned(),
                    ))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn every_json_success_and_failure_is_the_envelope() {
    let (schemas, idx) = validator();
    let documented = documented();
    let w = World::new();
    w.run(&["plan", "new", "SQL windows", "--id", "sql-windows"])
        .ok();
    // Each documented command, as run here (placeholders filled in).
    let runs: [(&str, &[&str]); 9] = [
        ("studyloop status --json", &["status", "--json"]),
        ("studyloop doctor --json", &["doctor", "--json"]),
        (
            "studyloop doctor --fix --json",
            &["doctor", "--fix", "--json"],
        ),
        (
            "studyloop search QUERY --json",
            &["search", "windows", "--json"],
        ),
        ("studyloop plan list --json", &["plan", "list", "--json"]),
        (
            "studyloop plan show ID --json",
            &["plan", "show", "sql-windows", "--json"],
        ),
        (
            "studyloop plan interview --json",
            &["plan", "interview", "--json"],
        ),
        ("studyloop now --json", &["now", "--json"]),
        (
            "studyloop module list --json",
            &["module", "list", "--json"],
        ),
    ];
    let mut broken = Vec::new();
    for (row, args) in runs {
        let out = w.run(args);
        let v: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        let want = documented.get(row);
        if schemas.validate(&v, idx).is_err()
            || v.get("result").is_none()
            || want.is_none_or(|n| v["command"] != n.as_str())
        {
            broken.push(format!(
                "{row} (documented {want:?}) -> exit {}: {}",
                out.code, out.stdout
            ));
        }
    }
    assert_eq!(
        documented.len(),
        runs.len(),
        "docs table rows: {documented:?}"
    );
    // Failures: a refusal of the command, a bad argument and a clap usage error.
    for (args, code) in [
        (&["plan", "show", "nope", "--json"][..], "not_found"),
        (&["search", "  ", "--json"][..], "invalid_input"),
        (
            &["now", "--energy", "sky-high", "--json"][..],
            "invalid_input",
        ),
        (&["status", "--json", "--no-such-flag"][..], "invalid_input"),
    ] {
        let out = w.run(args);
        let v: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        if out.code == 0
            || schemas.validate(&v, idx).is_err()
            || v["error"]["code"] != code
            || out.stderr.trim().is_empty()
        {
            broken.push(format!(
                "{args:?} -> exit {}: {} / {}",
                out.code, out.stdout, out.stderr
            ));
        }
    }
    assert!(broken.is_empty(), "not the envelope: {broken:#?}");
    // Without --json a failure prints nothing on stdout (one line on stderr, as before).
    let plain = w.run(&["plan", "show", "nope"]);
    assert!(plain.code != 0 && plain.stdout.is_empty(), "{plain:?}");
}
