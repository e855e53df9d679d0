//! The sign-off over the run directories of a partitioned run (issue 18): the
//! shards' `shard-<tier>.json` must add up, so a missing shard FAILs naming the cells it
//! held, and a cell two shards recorded differently FAILs naming both.

use std::path::Path;

use crate::common::{TRANSCRIPT, bundle};
use studyloop_acceptance::ledger::{RunLog, ShardRecord, TrialOutcome};
use studyloop_redaction::Redactor;
use studyloop_uat::signoff::{self, Pins, SignoffReport};

const SMOKE: &str = "journey::smoke";
/// A cell outside the definition: only the shard records account for it.
const PROBE: &str = "probe::codex";

/// The shipped pins with a definition whose one cell is the ungraded smoke.
fn smoke_only() -> Pins {
    let text = format!(
        "version: 1\ncouncil: hermetic\nrequired_cell_skipped: fail\ncells:\n  - {{id: '{SMOKE}', required: true, graded: false}}\nfloors: {{accuracy: 3, pedagogy: 3, session_lifecycle: 3, learner_record: 3}}\n"
    );
    crate::common::pins_with_definition(&text)
}

fn shard(dir: &Path, partition: &str, owned: &[&str]) -> RunLog {
    let log = RunLog::open(dir).unwrap();
    log.record_shard(&ShardRecord {
        run: log.key().to_owned(),
        tier: "uat".into(),
        partition: Some(partition.into()),
        catalogue: vec![PROBE.into(), SMOKE.into()],
        owned: owned.iter().map(|c| (*c).to_owned()).collect(),
        rerun_of: None,
    })
    .unwrap();
    log
}

fn signoff(pins: &Pins, inputs: &[&Path], out: &Path) -> SignoffReport {
    let inputs: Vec<_> = inputs.iter().map(|p| p.to_path_buf()).collect();
    signoff::run(pins, &inputs, &Redactor::new(&pins.rules), out).unwrap()
}

fn reasons(report: &SignoffReport) -> String {
    report.verdict.reasons.join("\n")
}

#[test]
fn a_missing_shard_and_a_cell_two_shards_disagree_about_are_named_fails() {
    let pins = smoke_only();
    let tmp = tempfile::tempdir().unwrap();
    let one = shard(&tmp.path().join("shard-1"), "hash:1/2", &[SMOKE]);
    let smoke = bundle(&tmp.path().join("durable"), SMOKE, TRANSCRIPT);
    one.record_result(SMOKE, TrialOutcome::Passed, None, Some(&smoke), None)
        .unwrap();
    let two = shard(&tmp.path().join("shard-2"), "hash:2/2", &[PROBE]);
    two.record_result(PROBE, TrialOutcome::Passed, None, None, None)
        .unwrap();
    let out = tmp.path().join("releases");

    let both = signoff(&pins, &[one.dir(), two.dir()], &out);
    assert!(both.verdict.passed(), "{}", reasons(&both));

    // Shard 2 lost (a CI job that never uploaded): the definition's cells are all
    // there, but the matrix has a hole, named by its cell.
    let missing = signoff(&pins, &[one.dir()], &out);
    assert!(!missing.verdict.passed());
    let text = reasons(&missing);
    assert!(
        text.contains("1 cell(s) were run by no shard given") && text.contains("`probe::codex`"),
        "{text}"
    );

    // Shard 2 re-run with another outcome for the same cell.
    let again = shard(&tmp.path().join("shard-2-rerun"), "hash:2/2", &[PROBE]);
    again
        .record_result(PROBE, TrialOutcome::Failed, Some("boom"), None, None)
        .unwrap();
    let conflict = signoff(&pins, &[one.dir(), two.dir(), again.dir()], &out);
    assert!(!conflict.verdict.passed());
    let text = reasons(&conflict);
    assert!(
        text.contains("cell `probe::codex` has different outcomes in different shards")
            && text.contains("shard hash:2/2 was given 2 times"),
        "{text}"
    );

    // Issue 33 §1: shard 2 lost *and* shard 1's record deleted. A directory without
    // its record used to "take no part" and the sign-off PASSed; the runner writes a
    // record in every run directory, so a missing one is a named FAIL.
    std::fs::remove_file(one.dir().join("shard-uat.json")).unwrap();
    let hidden = signoff(&pins, &[one.dir()], &out);
    assert!(!hidden.verdict.passed());
    let text = reasons(&hidden);
    assert!(
        text.contains("has no shard record (shard-uat.json)")
            && text.contains(&one.dir().display().to_string()),
        "{text}"
    );
}

#[test]
fn issue32_a_rerun_that_passes_never_signs_off_over_the_earlier_failure_nor_alone() {
    let pins = smoke_only();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("releases");
    let unsharded = |dir: &Path, rerun_of: Option<String>| {
        let log = RunLog::open(dir).unwrap();
        log.record_shard(&ShardRecord {
            run: log.key().to_owned(),
            tier: "uat".into(),
            partition: None,
            catalogue: vec![SMOKE.into()],
            owned: vec![SMOKE.into()],
            rerun_of,
        })
        .unwrap();
        log
    };
    let first = unsharded(&tmp.path().join("first"), None);
    first
        .record_result(SMOKE, TrialOutcome::Failed, Some("boom"), None, None)
        .unwrap();
    let again = unsharded(&tmp.path().join("again"), Some(first.key().to_owned()));
    let smoke = bundle(&tmp.path().join("durable"), SMOKE, TRANSCRIPT);
    again
        .record_result(SMOKE, TrialOutcome::Passed, None, Some(&smoke), None)
        .unwrap();

    let both = signoff(&pins, &[first.dir(), again.dir()], &out);
    assert!(!both.verdict.passed(), "a flaky cell never signs off");
    assert!(
        !reasons(&both).contains("different outcomes in different shards"),
        "a rerun is later attempts, not a conflicting shard: {}",
        reasons(&both)
    );
    let alone = signoff(&pins, &[again.dir()], &out);
    assert!(!alone.verdict.passed(), "the rerun alone hides the failure");
    assert!(
        reasons(&alone).contains("reruns the failed trials of run"),
        "{}",
        reasons(&alone)
    );
}
