use super::*;

use crate::ledger::RunLog;

fn log(dir: &Path, key: &str) -> RunLog {
    RunLog::open_as(dir, key).unwrap()
}

#[test]
fn failed_errored_and_flaky_trials_are_rerun_with_their_attempt_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("earlier");
    let run = log(&dir, "earlier");
    let meta = |attempt| crate::ledger::ResultMeta {
        attempt: Some(attempt),
        elapsed_ms: Some(1),
        category: None,
    };
    let _ = run.record_result_meta("a::x", TrialOutcome::Passed, None, None, None, meta(1));
    let _ = run.record_result_meta(
        "b::x",
        TrialOutcome::Failed,
        Some("boom"),
        None,
        None,
        meta(1),
    );
    // Flaky under REPEAT=3: passed, failed, passed.
    for (i, o) in [
        TrialOutcome::Passed,
        TrialOutcome::Failed,
        TrialOutcome::Passed,
    ]
    .into_iter()
    .enumerate()
    {
        let _ = run.record_result_meta(
            "c::x",
            o,
            None,
            None,
            None,
            meta(u32::try_from(i).unwrap() + 1),
        );
    }
    let _ = run.record_skip("d::x", "not on PATH");
    let names: Vec<String> = ["a::x", "b::x", "c::x", "d::x"].map(str::to_owned).to_vec();
    run.record_shard(&crate::ledger::ShardRecord {
        run: "earlier".into(),
        tier: "acceptance".into(),
        partition: None,
        catalogue: names.clone(),
        owned: names,
        rerun_of: None,
    })
    .unwrap();
    let this = tmp.path().join("now");
    std::fs::create_dir_all(&this).unwrap();
    let rerun = resolve(dir.to_str().unwrap(), &this, "acceptance").unwrap();
    assert_eq!(
        rerun.trials.into_iter().collect::<Vec<_>>(),
        [("b::x".to_owned(), 1), ("c::x".to_owned(), 3)],
        "a skip and a pass are not rerun"
    );
    assert_eq!(rerun.key, "earlier");
    // `latest` from beside it finds it; from a lone directory, nothing.
    assert_eq!(resolve("latest", &this, "acceptance").unwrap().of, dir);
    assert!(matches!(
        resolve("latest", &this, "uat"),
        Err(RerunError::NoEarlierRun { .. })
    ));
    let err = resolve(this.to_str().unwrap(), &this, "acceptance").unwrap_err();
    assert!(
        err.to_string().contains("this run's own directory"),
        "{err}"
    );
}
