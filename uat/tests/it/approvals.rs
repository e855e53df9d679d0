//! Issue 29: the UAT runner asks the one approval policy for every graded journey
//! before it may run. Under real-auth the graded journeys require their chosen
//! harness (so the runner's approval gate and login preflight apply, as to a lane)
//! and every billed seat of the council that grades them. An unapproved harness is a
//! listed skip naming `harness:codex` and is never started (the counting stand-ins
//! log 0 calls, the login probe included); with only the harness approved the graded
//! journeys are a listed skip naming each `judge:release/<seat>` with its reasons and
//! entry, and the journey never launches (its ACP adapter logs 0 calls, no results line).

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::runner::run_with_words;
use studyloop_uat::journey::{STUDY_ARC, STUDY_SESSION, catalogue_for};

/// A stand-in that logs every invocation to `calls` and prints a version.
fn counting(bin: &Path, name: &str, calls: &Path) {
    let script = format!(
        "#!/bin/sh\necho \"{name} $*\" >> '{}'\necho '{name} 1.0.0'\n",
        calls.display()
    );
    let path = bin.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs the UAT runner's two graded journeys under real-auth with `approve`; returns
/// (each journey's skip reason, the stand-ins' calls, the results lines).
fn run(approve: &str) -> (Vec<String>, String, Vec<Value>) {
    let tmp = tempfile::tempdir().unwrap();
    let (bin, home, calls) = (
        tmp.path().join("bin"),
        tmp.path().join("home"),
        tmp.path().join("calls"),
    );
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    counting(&bin, "codex", &calls);
    counting(&bin, "codex-acp", &calls);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let run = tmp.path().join("run");
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_UAT", "1"),
        ("STUDYLOOP_ACC_REAL_AUTH", "1"),
        ("STUDYLOOP_ACC_HARNESS", "codex"),
        ("STUDYLOOP_ACC_APPROVE", approve),
        ("STUDYLOOP_ACC_RESULTS_DIR", run.to_str().unwrap()),
        ("HOME", home.to_str().unwrap()),
        ("PATH", path.as_str()),
    ]);
    // The runner's catalogue, decided against this caller (its PATH) rather than the
    // test process's own environment.
    let code = run_with_words(Tier::Uat, &caller, &["uat", "journey::study_"], |s| {
        catalogue_for(s, &caller)
    });
    assert_eq!(code, ExitCode::SUCCESS, "{approve:?}");
    let skips = lines(&run.join("skip-ledger.jsonl"));
    let reasons = [STUDY_SESSION, STUDY_ARC]
        .iter()
        .map(|cell| {
            skips
                .iter()
                .find(|s| s["trial"] == *cell)
                .unwrap_or_else(|| panic!("{approve:?}: {cell} is not a listed skip: {skips:?}"))
                ["reason"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let made = std::fs::read_to_string(&calls).unwrap_or_default();
    (reasons, made, lines(&run.join("results.jsonl")))
}

#[test]
fn an_unapproved_harness_or_judge_seat_makes_the_graded_journeys_a_listed_skip() {
    for approve in [
        "",
        "judge:release/openai-gpt4o",
        "harness:codex[chargeable]",
    ] {
        let (reasons, calls, results) = run(approve);
        for reason in &reasons {
            assert!(
                reason.contains("capability `harness:codex` is not approved")
                    && reason.contains("add the entry `harness:codex`"),
                "{approve:?}: {reason}"
            );
        }
        assert_eq!(calls, "", "{approve:?}: the unapproved harness was started");
        assert!(results.is_empty(), "{approve:?}: {results:?}");
    }
    // Only the harness approved (certify's common case): the judges are named.
    let (reasons, calls, results) = run("harness:codex");
    for reason in &reasons {
        assert!(
            !reason.contains("harness:codex` is not approved"),
            "{reason}"
        );
        for seat in ["anthropic-sonnet", "openai-gpt4o", "gemini-flash"] {
            assert!(
                reason.contains(&format!(
                    "capability `judge:release/{seat}` is not approved"
                )) && reason.contains(&format!("add the entry `judge:release/{seat}`")),
                "{reason}"
            );
        }
        assert!(reason.contains("graded by council `release`"), "{reason}");
    }
    assert!(
        !calls.contains("codex-acp"),
        "the journey launched its harness: {calls}"
    );
    assert!(results.is_empty(), "{results:?}");
}
