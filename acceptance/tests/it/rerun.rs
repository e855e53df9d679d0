//! Issue 32 item 2: `STUDYLOOP_ACC_RERUN_FAILED` (`just rerun-failed`) reruns
//! exactly the trials an earlier run failed, into a new run directory linked to
//! it; merged, the rerun's results are later attempts of the same trials: a
//! failure that now passes stays in the record (flaky, never passed), and no
//! conflict between "shards" is claimed.

use std::path::Path;
use std::process::ExitCode;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::ledger::{
    RESULTS_LOG, RunRecords, ShardRecord, TrialOutcome, merge_shards, shard_record_file,
};
use studyloop_acceptance::runner::{TrialReport, TrialSpec, run_with_words};

/// Six cells; in the first run `cell-1` and `cell-4` fail; `fixed` makes `cell-1`
/// pass (a flaky or fixed trial), `cell-4` fails either way.
fn catalogue(fixed: bool) -> Vec<TrialSpec> {
    (0..6)
        .map(|i| {
            let fails = i == 4 || (i == 1 && !fixed);
            TrialSpec::gated(format!("cell-{i}::stub"), move |_| {
                if fails {
                    TrialReport::failed("scripted failure")
                } else {
                    TrialReport::passed()
                }
            })
        })
        .collect()
}

fn run(dir: &Path, key: &str, rerun: Option<&str>, fixed: bool) -> ExitCode {
    let mut pairs = vec![
        ("STUDYLOOP_ACC", "1".to_owned()),
        (
            "STUDYLOOP_ACC_RESULTS_DIR",
            dir.to_str().unwrap().to_owned(),
        ),
        ("NEXTEST_RUN_ID", key.to_owned()),
    ];
    if let Some(r) = rerun {
        pairs.push(("STUDYLOOP_ACC_RERUN_FAILED", r.to_owned()));
    }
    let caller = CallerEnv::from_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())));
    run_with_words(
        Tier::Acceptance,
        &caller,
        &["acceptance", "--test-threads", "1", "-q"],
        move |_| catalogue(fixed),
    )
}

fn results(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(RESULTS_LOG))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn shard(dir: &Path) -> ShardRecord {
    serde_json::from_slice(&std::fs::read(dir.join(shard_record_file("acceptance"))).unwrap())
        .unwrap()
}

#[test]
fn a_rerun_runs_only_the_failed_trials_as_later_attempts_and_the_merge_keeps_the_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    let _ = run(&first, "first-run", None, false);
    assert_eq!(results(&first).len(), 6);

    // `latest` finds the first run beside the new one.
    let again = tmp.path().join("again");
    let _ = run(&again, "again-run", Some("latest"), true);
    let lines = results(&again);
    let ran: Vec<(&str, u64, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["trial"].as_str().unwrap(),
                l["attempt"].as_u64().unwrap(),
                l["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ran,
        [("cell-1::stub", 2, "passed"), ("cell-4::stub", 2, "failed")],
        "exactly the failed trials, numbered after the first run's attempt"
    );
    let record = shard(&again);
    assert_eq!(record.rerun_of.as_deref(), Some("first-run"));
    assert_eq!(record.owned, ["cell-1::stub", "cell-4::stub"]);

    // Merged: no conflict is claimed, and the earlier failure is not hidden.
    let records = RunRecords::read_all(&[&first, &again]).unwrap();
    let merged = merge_shards(&records);
    assert!(merged.problems.is_empty(), "{:?}", merged.problems);
    assert_eq!(merged.cells.len(), 6);
    assert_eq!(
        merged.cells["cell-1::stub"],
        TrialOutcome::Failed,
        "flaky stays failed"
    );
    assert_eq!(merged.cells["cell-4::stub"], TrialOutcome::Failed);
    assert_eq!(merged.cells["cell-0::stub"], TrialOutcome::Passed);
    let attempts: Vec<(Option<u32>, TrialOutcome)> = records.trials()["cell-1::stub"]
        .records
        .iter()
        .map(|r| (r.meta.attempt, r.outcome))
        .collect();
    assert_eq!(
        attempts,
        [
            (Some(1), TrialOutcome::Failed),
            (Some(2), TrialOutcome::Passed)
        ]
    );

    // The rerun alone would hide the first run's failures: a named problem.
    let alone = merge_shards(&RunRecords::read_all(&[&again]).unwrap());
    assert!(
        alone
            .problems
            .iter()
            .any(|p| p.contains("reruns the failed trials of run first-run, which is not given")),
        "{:?}",
        alone.problems
    );

    // Without the link the same two directories are two verdicts that conflict.
    let mut unlinked = record.clone();
    unlinked.rerun_of = None;
    let path = again.join(shard_record_file("acceptance"));
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, serde_json::to_vec(&unlinked).unwrap()).unwrap();
    let merged = merge_shards(&RunRecords::read_all(&[&first, &again]).unwrap());
    assert!(
        merged
            .problems
            .iter()
            .any(|p| p.contains("cell `cell-1::stub` has different outcomes")),
        "{:?}",
        merged.problems
    );
}

#[test]
fn a_rerun_of_a_clean_run_runs_nothing_and_bad_values_refuse_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    // A catalogue with no failure: every trial passes.
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_RESULTS_DIR", clean.to_str().unwrap()),
        ("NEXTEST_RUN_ID", "clean-run"),
    ]);
    let _ = run_with_words(Tier::Acceptance, &caller, &["acceptance", "-q"], |_| {
        vec![TrialSpec::gated("only::stub".to_owned(), |_| {
            TrialReport::passed()
        })]
    });
    let nothing = tmp.path().join("nothing");
    let code = run(&nothing, "nothing-run", Some(clean.to_str().unwrap()), true);
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(results(&nothing).is_empty(), "nothing failed: nothing ran");

    for value in ["/no/such/run", "latest"] {
        let lonely = tempfile::tempdir().unwrap();
        let dir = lonely.path().join("alone");
        let code = run(&dir, "alone-run", Some(value), true);
        assert_eq!(code, ExitCode::from(2), "{value}");
        assert!(results(&dir).is_empty(), "{value}: nothing ran");
    }
    // Its own directory is refused, not read as the earlier run.
    let own = tmp.path().join("own");
    std::fs::create_dir_all(&own).unwrap();
    let code = run(&own, "own-run", Some(own.to_str().unwrap()), true);
    assert_eq!(code, ExitCode::from(2));
}

#[test]
fn a_rerun_of_a_filtered_run_is_not_the_same_shard_given_twice() {
    // The earlier run was `TESTS="cell-4::stub --exact"`: its catalogue is that one
    // trial, exactly the rerun's. Found live (2026-12-02, `mcp::codex` with a
    // stub 500 fault, then `just rerun-failed`): the merge said "shard unsharded
    // was given 2 times".
    let tmp = tempfile::tempdir().unwrap();
    let first = tmp.path().join("first");
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_RESULTS_DIR", first.to_str().unwrap()),
        ("NEXTEST_RUN_ID", "filtered-run"),
    ]);
    let _ = run_with_words(
        Tier::Acceptance,
        &caller,
        &["acceptance", "-q", "cell-4::stub", "--exact"],
        |_| catalogue(false),
    );
    let again = tmp.path().join("again");
    let _ = run(&again, "again-run", Some(first.to_str().unwrap()), true);
    assert_eq!(shard(&first).catalogue, shard(&again).catalogue);
    let merged = merge_shards(&RunRecords::read_all(&[&first, &again]).unwrap());
    assert!(merged.problems.is_empty(), "{:?}", merged.problems);
    assert_eq!(merged.cells["cell-4::stub"], TrialOutcome::Failed);
}
