//! Shared fixtures for the UAT tests: bundles written with the real evidence writer, run
//! directories written with the real ledger, judge replies, and the stub provider
//! started as a real child process playing judge seats.

#![allow(
    dead_code,
    reason = "each test binary uses a different subset of these fixtures"
)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::selection::AuthMode;
use studyloop_redaction::pinned;
use studyloop_stubs::StubProvider;

pub mod world;

/// The rubric's criteria, in order.
pub const CRITERIA: [&str; 4] = [
    "accuracy",
    "pedagogy",
    "session_lifecycle",
    "learner_record",
];

/// A graded-journey bundle with the evidence layout the rubric names, from a real-auth
/// run (the only auth mode whose conversation can sign off a release).
pub fn bundle(root: &Path, cell: &str, transcript: &str) -> PathBuf {
    bundle_in_mode(root, cell, transcript, Some(AuthMode::RealAuth))
}

/// As [`bundle`], recording `mode` as the run's auth mode.
pub fn bundle_in_mode(
    root: &Path,
    cell: &str,
    transcript: &str,
    mode: Option<AuthMode>,
) -> PathBuf {
    let run_id = RunId::generate();
    let mut manifest = Manifest::new(&run_id, Tier::Uat, cell, Surface::Journey);
    manifest.auth_mode = mode;
    manifest.outcome = Outcome::Completed;
    manifest.repo_sha = Some("0123456789abcdef0123456789abcdef01234567".into());
    manifest.dirty = Some(false);
    // Positive evidence of a real harness (the sign-off demands it of a real-auth
    // graded cell): its name, the version line it printed and the binary it ran.
    manifest.harness = Some("claude".into());
    manifest.harness_version = Some("2.1.3 (Claude Code)".into());
    manifest.binary_path = Some("/opt/harnesses/node_modules/.bin/claude".into());
    manifest.actor_backend = Some("scripted".into());
    // A genuine real-auth run records the approvals it billed under (issue 29): its
    // harness, and the release council's seats that grade it.
    if mode == Some(AuthMode::RealAuth) {
        manifest.approvals = Some(genuine_approvals());
    }
    let mut w = BundleWriter::create(root.join(run_id.as_str()), manifest).unwrap();
    w.write_file("transcript.jsonl", transcript.as_bytes())
        .unwrap();
    w.write_json(
        "lifecycle/start.json",
        &json!({"step": "start", "ok": true}),
    )
    .unwrap();
    w.write_json("db/topics.json", &json!([{"topic": "closures"}]))
        .unwrap();
    w.finish().unwrap()
}

/// What a genuine real-auth certification with its judges approved records:
/// `harness:claude` and every `release` seat, each for every reason it declares.
pub fn genuine_approvals() -> Vec<studyloop_acceptance::approval::ApprovalRecord> {
    use studyloop_acceptance::approval::{ApprovalRecord, Capability, REASONS};
    let judge = |seat: &str| Capability::Judge {
        council: "release".into(),
        seat: seat.into(),
    };
    let mut all = vec![ApprovalRecord {
        capability: "harness:claude".into(),
        reasons: REASONS.to_vec(),
    }];
    all.extend(
        ["anthropic-sonnet", "openai-gpt4o", "gemini-flash"]
            .map(judge)
            .iter()
            .map(|c| ApprovalRecord {
                capability: c.to_string(),
                reasons: c.reasons().to_vec(),
            }),
    );
    all
}

/// A run directory as the uat runner opens it: its run marker and an unsharded shard
/// record whose catalogue (and owned cells) are `cells`.
pub fn run_log(dir: &Path, cells: &[&str]) -> studyloop_acceptance::ledger::RunLog {
    let log = studyloop_acceptance::ledger::RunLog::open(dir).unwrap();
    let mut cells: Vec<String> = cells.iter().map(|c| (*c).to_owned()).collect();
    cells.sort();
    log.record_shard(&studyloop_acceptance::ledger::ShardRecord {
        run: log.key().to_owned(),
        tier: "uat".into(),
        partition: None,
        catalogue: cells.clone(),
        owned: cells,
        rerun_of: None,
    })
    .unwrap();
    log
}

/// A plain two-turn transcript.
pub const TRANSCRIPT: &str = concat!(
    r#"{"learner":"what is a closure?","mentor_reply":"What do you think a function keeps from where it was made?"}"#,
    "\n",
    r#"{"learner":"its variables?","mentor_reply":"Yes: it captures its environment. Try writing one."}"#,
    "\n"
);

/// One criterion of a judge reply: (criterion, score, citations).
pub type Entry<'a> = (&'a str, u8, &'a [&'a str]);

/// A judge reply scoring every criterion with the citations its evidence needs.
pub fn good_reply(score: u8) -> String {
    reply(&[
        ("accuracy", score, &["transcript.jsonl"]),
        ("pedagogy", score, &["transcript.jsonl"]),
        (
            "session_lifecycle",
            score,
            &["manifest.json", "lifecycle/start.json"],
        ),
        ("learner_record", score, &["db/topics.json"]),
    ])
}

/// A judge reply from explicit entries.
pub fn reply(entries: &[Entry<'_>]) -> String {
    let scores: serde_json::Map<String, Value> = entries
        .iter()
        .map(|(c, s, cites)| ((*c).to_owned(), json!({"score": s, "citations": cites, "rationale": format!("{c} judged from the cited turns")})))
        .collect();
    json!({ "scores": scores }).to_string()
}

/// Starts the stub provider as judge seats: `replies` maps a seat's model to its reply.
pub fn judges(dir: &Path, replies: &[(&str, String)]) -> StubProvider {
    let by_model: serde_json::Map<String, Value> = replies
        .iter()
        .map(|(model, text)| ((*model).to_owned(), json!({"judge": [text]})))
        .collect();
    let script = dir.join("roles.json");
    std::fs::write(
        &script,
        json!({"version": 1, "by_model": by_model}).to_string(),
    )
    .unwrap();
    let binary = studyloop_acceptance::bins::path("studyloop-stub-provider")
        .unwrap_or_else(|e| panic!("{e}"));
    let args = [
        OsString::from("--script"),
        script.into_os_string(),
        "--role".into(),
        "judge".into(),
    ];
    StubProvider::spawn(&binary, &dir.join("stub"), args).unwrap_or_else(|e| panic!("{e}"))
}

/// A registry pinning `bytes` as version 1.
pub fn registry_for(bytes: &[u8]) -> String {
    format!("{{\"1\": \"{}\"}}", pinned::digest(bytes))
}

/// Runs the real `studyloop-uat` binary with only `HOME` set (a scratch one: nothing the
/// command does may depend on the real one).
pub fn uat(args: &[&std::ffi::OsStr], home: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_studyloop-uat"))
        .env_clear()
        .env("HOME", home)
        .args(args)
        .output()
        .unwrap()
}

/// The shipped pins (rules, rubric, roster) with the sign-off definition `text`
/// (`signoff_test.yaml`, pinned by its own registry).
pub fn pins_with_definition(text: &str) -> studyloop_uat::signoff::Pins {
    let definition = studyloop_uat::definition::SignoffDefinition::from_bytes(
        "signoff_test.yaml",
        text.as_bytes(),
        "registry.json",
        registry_for(text.as_bytes()).as_bytes(),
    )
    .unwrap();
    studyloop_uat::signoff::Pins::new(
        studyloop_redaction::RedactionRules::load_default().unwrap(),
        studyloop_rubrics::Rubric::load_default().unwrap(),
        definition,
        studyloop_uat::council::Roster::load_default().unwrap(),
    )
    .unwrap()
}
