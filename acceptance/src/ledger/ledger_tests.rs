//! Unit tests of the run-directory logs: round trip, precedence, merging and
//! strict parsing.

use super::*;
use crate::ledger::RunLog;

#[test]
fn round_trip_keeps_every_line_and_the_worst_outcome_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let log = RunLog::open(tmp.path().join("run")).unwrap();
    log.record_skip("probe::kiro", "kiro-cli not found on PATH")
        .unwrap();
    log.record_skip("probe::kiro", "kiro-cli not found on PATH")
        .unwrap();
    log.record_skip("probe::codex", "gate closed").unwrap();
    // Forced to run later, and failed: the result beats the build-time skip.
    log.record_result(
        "probe::codex",
        TrialOutcome::Failed,
        Some("boom"),
        None,
        None,
    )
    .unwrap();
    log.record_result("probe::pi", TrialOutcome::Failed, Some("flaky"), None, None)
        .unwrap();
    log.record_result(
        "probe::pi",
        TrialOutcome::Passed,
        None,
        Some(Path::new("/b")),
        None,
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
    // Failed then passed: every line is kept with its place, and no later line
    // hides an earlier failure (issue 11: the last line no longer wins).
    let pi = records.get("probe::pi").unwrap();
    assert_eq!(pi.outcome, TrialOutcome::Failed);
    assert_eq!(pi.message.as_deref(), Some("flaky"));
    let places: Vec<String> = pi.records.iter().map(|r| r.origin.to_string()).collect();
    let results = log.dir().join(crate::ledger::RESULTS_LOG);
    assert_eq!(
        places,
        [
            format!("{}:2", results.display()),
            format!("{}:3", results.display())
        ]
    );
    assert_eq!(pi.records[1].bundle.as_deref(), Some("/b"));
    assert!(
        pi.records
            .iter()
            .all(|r| r.run.as_deref() == Some(log.key()))
    );
    // A build-time skip and a later result are both kept; the worse one wins.
    let codex = records.get("probe::codex").unwrap();
    assert_eq!(codex.records.len(), 2);
    let counts = records.counts();
    assert_eq!((counts.passed, counts.skipped, counts.failed), (0, 1, 2));
}

#[test]
fn merge_lets_the_worse_outcome_win() {
    let tmp = tempfile::tempdir().unwrap();
    let a = RunLog::open(tmp.path().join("a")).unwrap();
    let b = RunLog::open(tmp.path().join("b")).unwrap();
    a.record_result("x", TrialOutcome::Passed, None, None, None)
        .unwrap();
    b.record_skip("x", "not selected").unwrap();
    a.record_result("y", TrialOutcome::Failed, Some("bad"), None, None)
        .unwrap();
    b.record_result("y", TrialOutcome::Passed, None, None, None)
        .unwrap();
    b.record_result("z", TrialOutcome::Passed, None, None, None)
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

#[test]
fn a_run_directory_belongs_to_one_run() {
    use crate::ledger::{RUN_MARKER, open_run, run_key};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let first = RunLog::open_as(&dir, "run-a").unwrap();
    first.record_skip("x", "gate").unwrap();
    // Another process of the same run (nextest's list, then run phase) may reopen it.
    RunLog::open_as(&dir, "run-a").unwrap();
    let err = RunLog::open_as(&dir, "run-b").unwrap_err().to_string();
    assert!(
        err.contains("belongs to run `run-a`, not to this run `run-b`"),
        "{err}"
    );
    assert!(
        RunLog::open(&dir).is_err(),
        "a fresh run is refused as well"
    );
    // Logs with no marker (another tool's, or from before markers) are refused too.
    std::fs::remove_file(dir.join(RUN_MARKER)).unwrap();
    let err = RunLog::open_as(&dir, "run-a").unwrap_err().to_string();
    assert!(err.contains("unmarked"), "{err}");
    let records = RunRecords::read(&dir).unwrap();
    assert_eq!(records.runs()[0].key, None);
    // The runner's key: NEXTEST_RUN_ID when set, shared by list and run phases.
    use crate::caller_env::CallerEnv;
    let nextest = CallerEnv::from_pairs([
        ("NEXTEST_RUN_ID", "0b1c-22"),
        ("STUDYLOOP_ACC_RESULTS_DIR", "/nonexistent-unused"),
    ]);
    assert_eq!(run_key(&nextest), "0b1c-22");
    let shared = CallerEnv::from_pairs([
        ("NEXTEST_RUN_ID", "0b1c-22"),
        (
            "STUDYLOOP_ACC_RESULTS_DIR",
            tmp.path().join("shared").to_str().unwrap(),
        ),
    ]);
    let list = open_run(&shared, tmp.path()).unwrap();
    let run = open_run(&shared, tmp.path()).unwrap();
    assert_eq!(list.dir(), run.dir());
    let other = CallerEnv::from_pairs([
        ("NEXTEST_RUN_ID", "ffff-00"),
        (
            "STUDYLOOP_ACC_RESULTS_DIR",
            tmp.path().join("shared").to_str().unwrap(),
        ),
    ]);
    assert!(open_run(&other, tmp.path()).is_err());
}

#[test]
fn fifos_and_symlinks_in_place_of_the_logs_are_errors_not_hangs() {
    let tmp = tempfile::tempdir().unwrap();
    let log = RunLog::open(tmp.path().join("run")).unwrap();
    for file in [crate::ledger::RESULTS_LOG, crate::ledger::SKIP_LEDGER] {
        let path = log.dir().join(file);
        crate::private_fs::tests::fifo(&path);
        let err = RunRecords::read(log.dir()).unwrap_err().to_string();
        assert!(err.contains("a FIFO, not a regular file"), "{err}");
        let appended = if file == crate::ledger::SKIP_LEDGER {
            log.record_skip("x", "y")
        } else {
            log.record_result("x", TrialOutcome::Passed, None, None, None)
        };
        assert!(appended.is_err(), "append to a FIFO {file}");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
        let err = RunRecords::read(log.dir()).unwrap_err().to_string();
        assert!(err.contains("a symlink"), "{err}");
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn processes_of_one_run_starting_at_once_share_one_marker() {
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let dir = tmp.path().join(format!("run-{round}"));
        let opened: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| RunLog::open_as(&dir, "one-run").is_ok()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(opened.iter().all(|ok| *ok), "round {round}: {opened:?}");
        let records = RunRecords::read(&dir).unwrap();
        assert_eq!(records.runs()[0].key.as_deref(), Some("one-run"));
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1, "only run.json, no temp file");
    }
}

/// A results line carries the cell's reply fidelity: the ratio when turns
/// were scored, `null` when none could be (no stub log), and no field at all
/// for a trial that recorded no mentor reply. Before, results.jsonl had no
/// fidelity.
#[test]
fn results_lines_carry_the_cells_fidelity_and_unknown_is_null() {
    use crate::fidelity::CellFidelity;
    let tmp = tempfile::tempdir().unwrap();
    let log = RunLog::open(tmp.path().join("run")).unwrap();
    let scored: CellFidelity = serde_json::from_value(serde_json::json!({
        "ratio": 0.96, "floor": 0.95, "pass": true, "scored_turns": 3, "turns": 3,
        "sources": ["screen"]
    }))
    .unwrap();
    let unscored = CellFidelity {
        ratio: None,
        pass: false,
        scored_turns: 0,
        ..scored.clone()
    };
    let pass = TrialOutcome::Passed;
    log.record_result("cli-tmux::grok", pass, None, None, Some(&scored))
        .unwrap();
    log.record_result("cli-tmux::codex", pass, None, None, Some(&unscored))
        .unwrap();
    log.record_result("probe::pi", pass, None, None, None)
        .unwrap();
    let text = std::fs::read_to_string(log.dir().join("results.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["fidelity"]["ratio"], 0.96);
    assert_eq!(
        lines[0]["fidelity"]["sources"],
        serde_json::json!(["screen"])
    );
    assert!(lines[1]["fidelity"]["ratio"].is_null(), "{}", lines[1]);
    assert!(lines[1]["fidelity"].is_object(), "unknown is null, not 0");
    assert!(lines[2].get("fidelity").is_none(), "{}", lines[2]);
    // The strict reader accepts the lines it wrote.
    assert_eq!(RunRecords::read(log.dir()).unwrap().trials().len(), 3);
}
