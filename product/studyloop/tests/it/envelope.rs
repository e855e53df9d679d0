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
    // The `--json JSON` input rows are run by the test below.
    assert_eq!(
        documented
            .keys()
            .filter(|k| !k.ends_with("--json JSON"))
            .count(),
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

/// Issue 30 item 2: the plan commands that change something take their fields as
/// `--json JSON|-|@PATH` (inline, stdin, a file relative to the working directory)
/// under the doors' rule (a create names `request_id`, a change `if_revision`),
/// answer with the documented envelope, and refuse an unknown field, a stale or
/// missing revision, input over 64 MiB, a FIFO and bytes that are not UTF-8 by name,
/// writing nothing.
#[test]
fn plan_changes_take_their_fields_as_json_and_answer_the_envelope() {
    use std::io::Write as _;
    let (schemas, idx) = validator();
    let documented = documented();
    let w = World::new();
    let envelope = |args: &[&str], stdin: Option<&str>| -> (i32, Value, String) {
        let mut c = w.cmd(args);
        if stdin.is_some() {
            c.stdin(std::process::Stdio::piped());
        }
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = c.spawn().expect("run studyloop");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), v, stderr)
    };
    let used = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let ok = |row: &str, (code, v, err): (i32, Value, String)| -> Value {
        used.borrow_mut().insert(row.to_owned());
        assert_eq!(code, 0, "{row}: {v} {err}");
        assert!(
            schemas.validate(&v, idx).is_ok(),
            "{row}: not the envelope: {v}"
        );
        assert_eq!(
            Some(v["command"].as_str().unwrap_or_default()),
            documented.get(row).map(String::as_str),
            "{row}: {v}"
        );
        v["result"].clone()
    };
    let create = r#"{"request_id": "script-1", "title": "SQL windows", "plan_id": "sql-windows",
        "answers": {"why": "reports", "success": ["a running total"], "milestones": ["OVER", "Frames"]}}"#;
    let new_row = "studyloop plan new --json JSON";
    let first = ok(new_row, envelope(&["plan", "new", "--json", create], None));
    // The retry answers with the same plan and creates nothing.
    let again = ok(new_row, envelope(&["plan", "new", "--json", create], None));
    assert_eq!(again["revision"], first["revision"]);
    let plans = w.home.path().join(".local/share/studyloop/study-plans");
    let docs = || {
        std::fs::read_dir(&plans)
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "md")
                })
                .count()
            })
            .unwrap_or(0)
    };
    assert_eq!(docs(), 1, "a retried create made a second plan");
    let doc = plans.join("sql-windows.md");
    let before = std::fs::read(&doc).unwrap();
    let rev = first["revision"].as_str().unwrap().to_owned();
    // @PATH, relative to the working directory (the world's home).
    let status =
        format!(r#"{{"plan_id": "sql-windows", "status": "active", "if_revision": "{rev}"}}"#);
    std::fs::write(w.home.path().join("status.json"), &status).unwrap();
    // Refusals first, each writing nothing: a misspelt field, no revision, a stale one,
    // a FIFO, more than 64 MiB, bytes that are not UTF-8, and positionals beside --json.
    let fifo = w.home.path().join("fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let big = w.home.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    std::fs::write(
        w.home.path().join("latin1.json"),
        b"{\"plan_id\": \"caf\xe9\"}",
    )
    .unwrap();
    let misspelt = status.replace("if_revision", "if_revison");
    let no_rev = r#"{"plan_id": "sql-windows", "status": "active"}"#.to_owned();
    let stale = status.replace(&rev, "r0000000000000000");
    let mut refusals: Vec<(Vec<String>, &str, Vec<String>)> = vec![
        (
            vec!["--json".into(), misspelt],
            "invalid_input",
            vec!["`if_revison`".into(), "`if_revision`".into()],
        ),
        (
            vec!["--json".into(), no_rev],
            "invalid_input",
            vec!["`if_revision` is required".into()],
        ),
        (
            vec!["--json".into(), stale],
            "conflict",
            vec!["stale_revision".into(), rev.clone()],
        ),
        (
            vec!["--json".into(), "@big.json".into()],
            "invalid_input",
            vec!["64 MiB".into()],
        ),
        (
            vec!["--json".into(), "@latin1.json".into()],
            "invalid_input",
            vec!["not UTF-8".into()],
        ),
        (
            vec!["--json".into(), "@nowhere.json".into()],
            "invalid_input",
            vec!["does not exist".into()],
        ),
        (
            vec!["sql-windows".into(), "--json".into(), status.clone()],
            "invalid_input",
            vec!["cannot be used with".into()],
        ),
    ];
    if made {
        refusals.push((
            vec!["--json".into(), "@fifo.json".into()],
            "invalid_input",
            vec!["fifo.json".into()],
        ));
    } else {
        eprintln!("SKIP the FIFO case: mkfifo is not available here");
    }
    for (args, code, words) in &refusals {
        let mut argv = vec!["plan", "status"];
        argv.extend(args.iter().map(String::as_str));
        let (exit, v, err) = envelope(&argv, None);
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            exit != 0
                && schemas.validate(&v, idx).is_ok()
                && v["error"]["code"] == *code
                && words.iter().all(|w| message.contains(w.as_str())),
            "{argv:?} -> exit {exit}: {v} / {err}"
        );
    }
    assert_eq!(
        std::fs::read(&doc).unwrap(),
        before,
        "a refusal wrote the plan"
    );
    let active = ok(
        "studyloop plan status --json JSON",
        envelope(&["plan", "status", "--json", "@status.json"], None),
    );
    assert_eq!(active["status"], "active");
    // `-`: stdin.
    let milestone = format!(
        r#"{{"plan_id": "sql-windows", "index": 0, "done": true, "if_revision": "{}"}}"#,
        active["revision"].as_str().unwrap()
    );
    let ms = ok(
        "studyloop plan milestone --json JSON",
        envelope(&["plan", "milestone", "--json", "-"], Some(&milestone)),
    );
    assert_eq!(ms["milestone_done"], 1);
    let ev = ok(
        "studyloop plan evaluate --json JSON",
        envelope(
            &[
                "plan",
                "evaluate",
                "--json",
                &format!(
                    r#"{{"plan_id": "sql-windows", "phase": "mid", "record": true, "if_revision": "{}"}}"#,
                    ms["revision"].as_str().unwrap()
                ),
            ],
            None,
        ),
    );
    assert_eq!(ev["recording_complete"], true, "{ev}");
    let rec = ok(
        "studyloop plan record --json JSON",
        envelope(
            &[
                "plan",
                "record",
                "--json",
                &format!(
                    r#"{{"plan_id": "sql-windows", "title": "Frames", "body": "ROWS", "if_revision": "{}"}}"#,
                    ev["revision"].as_str().unwrap()
                ),
            ],
            None,
        ),
    );
    assert_eq!(rec["created"], true, "{rec}");
    let del = ok(
        "studyloop plan delete --json JSON",
        envelope(
            &[
                "plan",
                "delete",
                "--json",
                &format!(
                    r#"{{"plan_id": "sql-windows", "confirmed": true, "if_revision": "{}"}}"#,
                    rec["revision"].as_str().unwrap()
                ),
            ],
            None,
        ),
    );
    assert_eq!((del["deleted"].clone(), docs()), (Value::Bool(true), 0));
    let rows: std::collections::BTreeSet<String> = documented
        .keys()
        .filter(|k| k.ends_with("--json JSON"))
        .cloned()
        .collect();
    assert_eq!(
        *used.borrow(),
        rows,
        "every documented --json input row is run"
    );
}
