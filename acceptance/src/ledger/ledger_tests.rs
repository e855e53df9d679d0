//! Unit tests of the run-directory logs: round trip, precedence, merging and
//! strict parsing.

use super::*;
use crate::ledger::RunLog;

#[test]
fn round_trip_and_precedence_within_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let log = RunLog::open(tmp.path().join("run")).unwrap();
    log.record_skip("probe::kiro", "kiro-cli not found on PATH")
        .unwrap();
    log.record_skip("probe::kiro", "kiro-cli not found on PATH")
        .unwrap();
    log.record_skip("probe::codex", "gate closed").unwrap();
    // Forced to run later, and failed: the result beats the build-time skip.
    log.record_result("probe::codex", TrialOutcome::Failed, Some("boom"), None)
        .unwrap();
    log.record_result("probe::pi", TrialOutcome::Failed, Some("flaky"), None)
        .unwrap();
    log.record_result(
        "probe::pi",
        TrialOutcome::Passed,
        None,
        Some(Path::new("/b")),
    )
    .unwrap();
    let records = RunRecords::read(log.dir()).unwrap();
    assert_eq!(records.trials().len(), 3);
    let kiro = records.get("probe::kiro").unwrap();
    assert_eq!(kiro.outcome, TrialOutcome::Skipped);
    assert_eq!(kiro.message.as_deref(), Some("kiro-cli not found on PATH"));
    assert_eq!(
        records.get("probe::codex").unwrap().outcome,
        TrialOutcome::Failed
    );
    let pi = records.get("probe::pi").unwrap();
    assert_eq!(pi.outcome, TrialOutcome::Passed);
    assert_eq!(pi.bundle.as_deref(), Some("/b"));
    let counts = records.counts();
    assert_eq!((counts.passed, counts.skipped, counts.failed), (1, 1, 1));
}

#[test]
fn merge_lets_the_worse_outcome_win() {
    let tmp = tempfile::tempdir().unwrap();
    let a = RunLog::open(tmp.path().join("a")).unwrap();
    let b = RunLog::open(tmp.path().join("b")).unwrap();
    a.record_result("x", TrialOutcome::Passed, None, None)
        .unwrap();
    b.record_skip("x", "not selected").unwrap();
    a.record_result("y", TrialOutcome::Failed, Some("bad"), None)
        .unwrap();
    b.record_result("y", TrialOutcome::Passed, None, None)
        .unwrap();
    b.record_result("z", TrialOutcome::Passed, None, None)
        .unwrap();
    let merged = RunRecords::read_all(&[a.dir(), b.dir()]).unwrap();
    assert_eq!(merged.get("x").unwrap().outcome, TrialOutcome::Skipped);
    assert_eq!(merged.get("y").unwrap().outcome, TrialOutcome::Failed);
    assert_eq!(merged.get("z").unwrap().outcome, TrialOutcome::Passed);
    assert_eq!(merged.get("y").unwrap().source, a.dir());
}

#[test]
fn a_missing_dir_and_a_malformed_line_are_errors_naming_the_place() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = RunRecords::read(&tmp.path().join("nope")).unwrap_err();
    assert!(matches!(missing, LedgerError::NoRunDir { .. }));
    let log = RunLog::open(tmp.path().join("run")).unwrap();
    log.record_skip("a", "b").unwrap();
    let ledger = log.dir().join(crate::ledger::SKIP_LEDGER);
    let mut text = std::fs::read_to_string(&ledger).unwrap();
    text.push_str("{\"trial\": \"x\"}\n");
    std::fs::write(&ledger, text).unwrap();
    let err = RunRecords::read(log.dir()).unwrap_err().to_string();
    assert!(err.contains("skip-ledger.jsonl:2"), "{err}");
}

#[test]
fn an_empty_run_dir_reads_as_no_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let records = RunRecords::read(tmp.path()).unwrap();
    assert!(records.trials().is_empty());
}

#[test]
fn concurrent_appends_never_interleave() {
    let tmp = tempfile::tempdir().unwrap();
    let log = RunLog::open(tmp.path()).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let log = log.clone();
            s.spawn(move || {
                for i in 0..200 {
                    log.record_skip(&format!("t{t}::{i}"), &"r".repeat(300))
                        .unwrap();
                }
            });
        }
    });
    let records = RunRecords::read(log.dir()).unwrap();
    assert_eq!(records.trials().len(), 800);
}

#[test]
fn results_dir_prefers_override_then_nextest_run_id() {
    use crate::caller_env::CallerEnv;
    use crate::ledger::results_dir;
    let target = Path::new("/t");
    let over = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC_RESULTS_DIR", "/r"),
        ("NEXTEST_RUN_ID", "abc"),
    ]);
    assert_eq!(results_dir(&over, target).unwrap(), Path::new("/r"));
    let nextest = CallerEnv::from_pairs([("NEXTEST_RUN_ID", "0b1c-22")]);
    assert_eq!(
        results_dir(&nextest, target).unwrap(),
        Path::new("/t/studyloop/runs/0b1c-22")
    );
    let hostile = CallerEnv::from_pairs([("NEXTEST_RUN_ID", "../../x")]);
    let fresh = results_dir(&hostile, target).unwrap();
    assert!(fresh.starts_with("/t/studyloop/runs/") && !fresh.to_string_lossy().contains(".."));
    let relative = CallerEnv::from_pairs([("STUDYLOOP_ACC_RESULTS_DIR", "runs")]);
    let err = results_dir(&relative, target).unwrap_err().to_string();
    assert!(err.contains("not an absolute path"), "{err}");
}
