//! Issue 28 item 8: `studyloop-uat export-trajectory` writes a bundle's
//! conversation as an ATIF trajectory and as OTLP/JSON GenAI spans that their
//! own readers accept: Harbor's pydantic model and opentelemetry-proto's
//! message (`uat/tests/data/trajectory/validate.py`, installed hash-pinned by
//! `just deps-trajectory`). Without them each validation is a named skip. The
//! exported text is redacted (a planted token never comes out).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};

const SECRET: &str = "ghp_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The pinned readers' Python, or `None` after printing the named skip.
fn validator(test: &str) -> Option<PathBuf> {
    let py = root().join(".deps/trajectory-venv/bin/python");
    if py.is_file() {
        return Some(py);
    }
    eprintln!(
        "SKIP {test}: the pinned ATIF/OTLP readers are not installed ({} is missing): run `just deps-trajectory` (part of `just deps`; it needs Python 3.12)",
        py.display()
    );
    None
}

/// `Ok(what it read)` when the reader accepts `file` as `kind`, else its words.
fn validate(py: &Path, kind: &str, file: &Path) -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/trajectory/validate.py");
    let out = Command::new(py)
        .arg(script)
        .arg(kind)
        .arg(file)
        .output()
        .unwrap();
    let words = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(words)
    } else {
        Err(words)
    }
}

/// A sealed codex bundle with a two-turn conversation holding a secret and markup.
fn bundle(dir: &Path, jsonl: bool) -> PathBuf {
    let run_id = RunId::generate();
    let mut m = Manifest::new(
        &run_id,
        Tier::Acceptance,
        "cli-tmux::codex",
        Surface::CliTmux,
    );
    m.harness = Some("codex".into());
    m.harness_version = Some("codex-cli 0.99.0".into());
    m.outcome = Outcome::Completed;
    let mut w = BundleWriter::create(dir.join(run_id.as_str()), m).unwrap();
    let turns = [
        json!({"learner": "What is recursion?", "mentor_reply": format!("A function calling itself. token {SECRET}"), "elapsed_ms": 1200}),
        json!({"learner": "<script>x</script> an example?", "mentor_reply": "fact(n) = n * fact(n - 1)", "elapsed_ms": 800}),
    ];
    if jsonl {
        let text: String = turns.iter().map(|t| format!("{t}\n")).collect();
        w.write_file("transcript.jsonl", text.as_bytes()).unwrap();
    } else {
        w.write_json(
            "transcript.json",
            &json!({"turns": turns, "outcome": "completed"}),
        )
        .unwrap();
    }
    w.finish().unwrap()
}

fn export(bundle: &Path, format: &str, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_studyloop-uat"))
        .env_clear()
        .env("HOME", out.parent().unwrap())
        .arg("export-trajectory")
        .arg(bundle)
        .args(["--format", format, "--out"])
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn issue28_exports_validate_in_their_own_readers_and_are_redacted() {
    let tmp = tempfile::tempdir().unwrap();
    for jsonl in [false, true] {
        let b = bundle(&tmp.path().join(format!("evidence-{jsonl}")), jsonl);
        for format in ["atif", "otlp"] {
            let file = tmp.path().join(format!("{format}-{jsonl}.json"));
            let o = export(&b, format, &file);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                !text.contains(SECRET),
                "{format} leaks the planted token: {text}"
            );
            assert!(text.contains("A function calling itself."), "{text}");
            assert!(text.contains("fact(n - 1)"), "{text}");
            let doc: Value = serde_json::from_str(&text).unwrap();
            if format == "atif" {
                let steps = doc["steps"].as_array().unwrap();
                let sources: Vec<&str> = steps
                    .iter()
                    .map(|s| s["source"].as_str().unwrap())
                    .collect();
                assert_eq!(sources, ["user", "agent", "user", "agent"]);
                assert_eq!(doc["agent"]["name"], "codex");
                assert_eq!(doc["agent"]["version"], "codex-cli 0.99.0");
            } else {
                let spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
                    .as_array()
                    .unwrap();
                assert_eq!(spans.len(), 3, "a root and one span per turn");
                let ns = |s: &Value, k: &str| s[k].as_str().unwrap().parse::<u128>().unwrap();
                assert_eq!(
                    ns(&spans[1], "endTimeUnixNano") - ns(&spans[1], "startTimeUnixNano"),
                    1_200_000_000
                );
                assert_eq!(
                    ns(&spans[2], "startTimeUnixNano"),
                    ns(&spans[1], "endTimeUnixNano")
                );
            }
            if let Some(py) =
                validator("issue28_exports_validate_in_their_own_readers_and_are_redacted")
            {
                let read = validate(&py, format, &file).unwrap_or_else(|e| {
                    panic!("the {format} reader refused our export: {e}\n{text}")
                });
                eprintln!(
                    "{format} ({}): {}",
                    if jsonl { "jsonl" } else { "json" },
                    read.trim()
                );
            }
        }
    }
}

/// The readers can refuse: an ATIF step id out of sequence, an unknown OTLP
/// field and a short span id are each rejected (else a pass above proves nothing).
#[test]
fn issue28_the_trajectory_readers_refuse_broken_documents() {
    let Some(py) = validator("issue28_the_trajectory_readers_refuse_broken_documents") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let b = bundle(&tmp.path().join("evidence"), false);
    let atif = tmp.path().join("atif.json");
    let otlp = tmp.path().join("otlp.json");
    assert!(export(&b, "atif", &atif).status.success());
    assert!(export(&b, "otlp", &otlp).status.success());
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let broken = tmp.path().join("broken.json");
    let mut cases: Vec<(&str, Value, &str)> = Vec::new();
    let mut a = read(&atif);
    a["steps"][1]["step_id"] = json!(7);
    cases.push(("atif", a, "step_id"));
    let mut a = read(&atif);
    a["steps"][0]["tool_calls"] = json!([]);
    cases.push(("atif", a, "only applicable when source is 'agent'"));
    let mut o = read(&otlp);
    o["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["colour"] = json!("red");
    cases.push(("otlp", o, "colour"));
    let mut o = read(&otlp);
    o["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["spanId"] = json!("abcd");
    cases.push(("otlp", o, "spanId"));
    for (kind, doc, why) in cases {
        std::fs::write(&broken, doc.to_string()).unwrap();
        let err = validate(&py, kind, &broken)
            .expect_err(&format!("{kind} accepted a broken document ({why})"));
        assert!(err.contains(why), "{kind}: {err}");
    }
}

#[test]
fn issue28_export_refuses_to_write_into_the_bundle_and_names_a_missing_transcript() {
    let tmp = tempfile::tempdir().unwrap();
    let b = bundle(&tmp.path().join("evidence"), false);
    let o = export(&b, "atif", &b.join("trajectory.json"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("inside the bundle"), "{err}");
    assert!(!b.join("trajectory.json").exists());
    // A bundle with no conversation (a probe): the error says so, exit 2.
    let run_id = RunId::generate();
    let m = Manifest::new(&run_id, Tier::Acceptance, "probe::codex", Surface::Probe);
    let probe = BundleWriter::create(tmp.path().join("p").join(run_id.as_str()), m)
        .unwrap()
        .finish()
        .unwrap();
    let o = export(&probe, "otlp", &tmp.path().join("x.json"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no transcript.json or transcript.jsonl"),
        "{err}"
    );
}

/// The report writes both exports beside each cell page and links them as
/// "Trajectory (ATIF)" and "Spans (OTLP)"; the files are redacted even in the
/// unredacted report, and are what their readers accept.
#[test]
fn issue28_the_report_links_each_cells_exports() {
    use studyloop_acceptance::ledger::{ResultMeta, RunLog, TrialOutcome};
    let tmp = tempfile::tempdir().unwrap();
    let run = RunLog::open(tmp.path().join("runs/run-1")).unwrap();
    let b = bundle(&run.dir().join("evidence"), false);
    let meta = ResultMeta {
        attempt: Some(1),
        elapsed_ms: Some(2000),
        category: None,
    };
    run.record_result_meta(
        "cli-tmux::codex",
        TrialOutcome::Passed,
        None,
        Some(&b),
        None,
        meta,
    )
    .unwrap();
    let site = super::report::site(run.dir(), tmp.path());
    let page = std::fs::read_to_string(site.join("cells/cli-tmux..codex.html")).unwrap();
    for (label, file, kind) in [
        (
            "Trajectory (ATIF)",
            "trajectories/cli-tmux..codex.atif.json",
            "atif",
        ),
        (
            "Spans (OTLP)",
            "trajectories/cli-tmux..codex.otlp.json",
            "otlp",
        ),
    ] {
        assert!(
            page.contains(&format!("<a href=\"../{file}\">{label}</a>")),
            "no {label} link: {page}"
        );
        let path = site.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(SECRET), "{file} leaks the planted token");
        assert!(text.contains("fact(n - 1)"), "{text}");
        if let Some(py) = validator("issue28_the_report_links_each_cells_exports") {
            validate(&py, kind, &path).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
    }
}
