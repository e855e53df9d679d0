//! The strict runner over real run directories: zero cells, missing, skipped and failed
//! required cells, outcomes read by value, and shards merged before the verdict.

use std::fs;
use std::path::Path;

use studyloop_acceptance::ledger::{RunLog, RunRecords, TrialOutcome};
use studyloop_uat::signoff::rule::{Cell, CellResult, Results, evaluate};

fn cells(spec: &[(&str, bool)]) -> Vec<Cell> {
    spec.iter()
        .map(|(id, required)| Cell {
            id: (*id).to_owned(),
            required: *required,
        })
        .collect()
}

fn read(dir: &Path) -> Results {
    Results::from_records(&RunRecords::read(dir).unwrap())
}

fn shard(root: &Path, name: &str) -> RunLog {
    RunLog::open(root.join(name)).unwrap()
}

#[test]
fn zero_cells_fail_even_with_results() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shard(tmp.path(), "a");
    log.record_result("journey_smoke", TrialOutcome::Passed, None, None, None)
        .unwrap();
    let verdict = evaluate(&[], &read(log.dir()));
    assert!(!verdict.passed());
    assert!(
        verdict.reasons[0].contains("zero cells selected"),
        "{:?}",
        verdict.reasons
    );
}

#[test]
fn no_recorded_result_for_any_cell_is_zero_cells_selected() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shard(tmp.path(), "a");
    let verdict = evaluate(&cells(&[("optional", false)]), &read(log.dir()));
    assert_eq!(verdict.word(), "FAIL");
    assert!(
        verdict.reasons[0].contains("zero cells selected"),
        "{:?}",
        verdict.reasons
    );
}

#[test]
fn every_required_cell_problem_is_its_own_reason_naming_the_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shard(tmp.path(), "a");
    log.record_result("ok", TrialOutcome::Passed, None, None, None)
        .unwrap();
    log.record_skip("skipped_one", "STUDYLOOP_UAT is not 1")
        .unwrap();
    log.record_result(
        "failed_one",
        TrialOutcome::Failed,
        Some("reply never arrived"),
        None,
        None,
    )
    .unwrap();
    log.record_result(
        "optional_failed",
        TrialOutcome::Failed,
        Some("x"),
        None,
        None,
    )
    .unwrap();
    let spec = cells(&[
        ("ok", true),
        ("skipped_one", true),
        ("failed_one", true),
        ("never_ran", true),
        ("optional_failed", false),
    ]);
    let verdict = evaluate(&spec, &read(log.dir()));
    assert_eq!(verdict.reasons.len(), 3, "{:#?}", verdict.reasons);
    assert!(verdict.reasons[0].contains("`skipped_one` was skipped (STUDYLOOP_UAT is not 1)"));
    assert!(verdict.reasons[0].contains("cannot pass through skips"));
    assert!(verdict.reasons[1].contains("`failed_one` failed: reply never arrived"));
    assert!(verdict.reasons[2].contains("`never_ran` has no recorded result"));
}

#[test]
fn all_required_cells_passed_is_a_pass_whatever_optional_cells_did() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shard(tmp.path(), "a");
    log.record_result("a", TrialOutcome::Passed, None, None, None)
        .unwrap();
    log.record_skip("b", "not selected").unwrap();
    let verdict = evaluate(&cells(&[("a", true), ("b", false)]), &read(log.dir()));
    assert!(verdict.passed(), "{:?}", verdict.reasons);
    assert_eq!(verdict.word(), "PASS");
}

/// Regression for the reference's identity comparison (anchor §18 item 3): outcomes
/// written as plain JSON strings by any writer are read as values, so "skipped" and
/// "failed" can never count as a pass.
#[test]
fn plain_string_outcomes_are_compared_by_value() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hand-written");
    fs::create_dir(&dir).unwrap();
    fs::write(
        dir.join("results.jsonl"),
        concat!(
            r#"{"trial":"s","outcome":"skipped","time":"2026-01-01T00:00:00Z","message":null,"bundle":null}"#,
            "\n",
            r#"{"trial":"f","outcome":"failed","time":"2026-01-01T00:00:00Z","message":null,"bundle":null}"#,
            "\n",
        ),
    )
    .unwrap();
    let verdict = evaluate(&cells(&[("s", true), ("f", true)]), &read(&dir));
    assert_eq!(verdict.reasons.len(), 2, "{:?}", verdict.reasons);
}

#[test]
fn shards_are_merged_before_the_verdict_and_a_skip_in_one_shard_is_not_hidden() {
    let tmp = tempfile::tempdir().unwrap();
    let one = shard(tmp.path(), "shard-1");
    let two = shard(tmp.path(), "shard-2");
    one.record_result("a", TrialOutcome::Passed, None, None, None)
        .unwrap();
    two.record_result("b", TrialOutcome::Passed, None, None, None)
        .unwrap();
    let spec = cells(&[("a", true), ("b", true)]);
    assert!(
        !evaluate(&spec, &read(one.dir())).passed(),
        "one shard alone misses b"
    );
    let merged = RunRecords::read_all(&[one.dir(), two.dir()]).unwrap();
    assert!(evaluate(&spec, &Results::from_records(&merged)).passed());

    // b also appears skipped in a third shard: the worse outcome wins.
    let three = shard(tmp.path(), "shard-3");
    three.record_skip("b", "harness not selected").unwrap();
    let merged = RunRecords::read_all(&[one.dir(), two.dir(), three.dir()]).unwrap();
    let verdict = evaluate(&spec, &Results::from_records(&merged));
    assert_eq!(verdict.reasons.len(), 1, "{:?}", verdict.reasons);
    assert!(verdict.reasons[0].contains("`b` was skipped"));
}

#[test]
fn another_source_can_only_make_a_cell_worse() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shard(tmp.path(), "a");
    log.record_result("a", TrialOutcome::Passed, None, None, None)
        .unwrap();
    let mut results = read(log.dir());
    let from_manifest = |outcome| CellResult {
        outcome,
        message: Some("from the manifest".into()),
        bundle: None,
    };
    results.record("a", from_manifest(TrialOutcome::Passed));
    assert_eq!(
        results.get("a").unwrap().message,
        None,
        "an equal outcome does not replace the log's"
    );
    results.record("a", from_manifest(TrialOutcome::Failed));
    assert!(!evaluate(&cells(&[("a", true)]), &results).passed());
    results.record("a", from_manifest(TrialOutcome::Passed));
    assert_eq!(results.get("a").unwrap().outcome, TrialOutcome::Failed);
}

#[test]
fn relative_bundle_paths_resolve_against_their_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shard(tmp.path(), "a");
    log.record_result(
        "a",
        TrialOutcome::Passed,
        None,
        Some(Path::new("evidence/x")),
        None,
    )
    .unwrap();
    let results = read(log.dir());
    assert_eq!(
        results.get("a").unwrap().bundle.as_deref(),
        Some(log.dir().join("evidence/x").as_path())
    );
}
