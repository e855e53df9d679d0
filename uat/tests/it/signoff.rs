//! `signoff::run` end to end over real run directories and bundles: PASS writes the
//! redacted summary (and only then); every way to FAIL is a named reason; nothing
//! private reaches the summary.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{TRANSCRIPT, bundle, bundle_in_mode, good_reply, judges};
use serde_json::Value;
use studyloop_acceptance::ledger::{RunLog, TrialOutcome};
use studyloop_acceptance::selection::AuthMode;
use studyloop_redaction::Redactor;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::{self, CellContext, Grader, StubTarget};
use studyloop_uat::signoff::{self, Pins, SignoffReport};

const SMOKE: &str = "journey::smoke";
const STUDY: &str = "journey::study_session";

/// The shipped pins, with a test definition that accepts the stub council.
fn pins(floor: u8) -> Pins {
    let text = format!(
        "version: 1\ncouncil: hermetic\nrequired_cell_skipped: fail\ncells:\n  - {{id: '{SMOKE}', required: true, graded: false}}\n  - {{id: '{STUDY}', required: true, graded: true}}\n  - {{id: optional, required: false, graded: false}}\nfloors: {{accuracy: {floor}, pedagogy: {floor}, session_lifecycle: {floor}, learner_record: {floor}}}\n"
    );
    common::pins_with_definition(&text)
}

struct Run {
    tmp: tempfile::TempDir,
    shard: RunLog,
    smoke: PathBuf,
    study: PathBuf,
}

/// A run: one shard recording both cells passed, with their bundles in a durable root.
fn run() -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let durable = tmp.path().join("durable");
    // The run directory first, as the runner writes it.
    let shard = common::run_log(&tmp.path().join("runs/shard-1"), &[SMOKE, STUDY]);
    let smoke = bundle(&durable, SMOKE, TRANSCRIPT);
    let study = bundle(&durable, STUDY, TRANSCRIPT);
    shard
        .record_result(SMOKE, TrialOutcome::Passed, None, Some(&smoke), None)
        .unwrap();
    shard
        .record_result(STUDY, TrialOutcome::Passed, None, Some(&study), None)
        .unwrap();
    Run {
        tmp,
        shard,
        smoke,
        study,
    }
}

fn grade(pins: &Pins, dir: &Path, council: &str, score: u8) {
    let b = Bundle::open(dir).unwrap();
    let stub_dir = tempfile::tempdir().unwrap();
    let stub = judges(
        stub_dir.path(),
        &[
            ("stub-judge-a", good_reply(score)),
            ("stub-judge-b", good_reply(score)),
            ("stub-judge-c", good_reply(score)),
        ],
    );
    let redactor = Redactor::new(&pins.rules);
    let grader = Grader {
        rubric: &pins.rubric,
        rules: &pins.rules,
        redactor: &redactor,
        roster: &pins.roster,
        council,
        env: &BTreeMap::<String, String>::new(),
        stub: Some(StubTarget {
            base_url: stub.base_url(),
            api_key: None,
        }),
        cassette: None,
        // Stub seats only: they bill nothing, so nothing needs approving.
        approvals: studyloop_uat::council::SeatApprovals {
            approvals: &studyloop_acceptance::approval::Approvals::default(),
            local_gateway: false,
        },
    };
    let graded = grader
        .grade(
            &b,
            CellContext {
                required: true,
                skipped: false,
            },
        )
        .unwrap();
    council::write(&b, &graded).unwrap();
}

fn signoff(pins: &Pins, inputs: &[&Path], out: &Path) -> SignoffReport {
    let inputs: Vec<PathBuf> = inputs.iter().map(|p| p.to_path_buf()).collect();
    signoff::run(pins, &inputs, &Redactor::new(&pins.rules), out).unwrap()
}

fn assert_reason(report: &SignoffReport, needle: &str) {
    assert!(
        report.verdict.reasons.iter().any(|r| r.contains(needle)),
        "no reason contains `{needle}`: {:#?}",
        report.verdict.reasons
    );
}

#[test]
fn a_graded_run_meeting_every_floor_passes_and_writes_the_summary() {
    let pins = pins(3);
    let run = run();
    grade(&pins, &run.study, "hermetic", 4);
    let out = run.tmp.path().join("releases");
    let report = signoff(&pins, &[run.shard.dir()], &out);
    assert!(report.verdict.passed(), "{:#?}", report.verdict.reasons);
    let path = report.written.clone().expect("PASS writes the summary");
    assert_eq!(path.parent(), Some(out.as_path()));
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        format!("uat-signoff-{}.json", report.run_id)
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temp file left behind: {leftovers:?}"
    );

    let bytes = std::fs::read_to_string(&path).unwrap();
    let summary: Value = serde_json::from_str(&bytes).unwrap();
    let top: Vec<&str> = bytes
        .lines()
        .filter(|l| l.starts_with("  \""))
        .map(|l| l.trim().split('"').nth(1).unwrap())
        .collect();
    assert!(
        top.windows(2).all(|w| w[0] < w[1]),
        "keys are written sorted: {top:?}"
    );
    let keys: Vec<&str> = summary
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let allowed = pins.rules.allowed_fields();
    assert!(keys.iter().all(|k| allowed.contains(*k)), "{keys:?}");
    assert_eq!(
        keys.len(),
        allowed.len(),
        "every allow-listed field is filled: {keys:?}"
    );
    assert_eq!(summary["verdict"], "PASS");
    assert_eq!(summary["reasons"], Value::Array(vec![]));
    assert_eq!(summary["journeys"][STUDY]["outcome"], "passed");
    assert_eq!(summary["journeys"][SMOKE]["graded"], false);
    assert_eq!(
        summary["journeys"]["optional"]["outcome"],
        Value::Null,
        "unknown is null, never a pass"
    );
    assert_eq!(
        summary["per_criterion_scores"][STUDY]["pedagogy"]["median"],
        4.0
    );
    assert_eq!(
        summary["per_criterion_scores"][STUDY]["pedagogy"]["floor"],
        3
    );
    assert_eq!(
        summary["rubric_version"], "1",
        "a string, as in the manifest"
    );
    assert_eq!(
        summary["repo_sha"],
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(summary["dirty"], false);
    // The digest binds the summary to the exact private manifest bytes.
    for dir in [&run.smoke, &run.study] {
        let b = Bundle::open(dir).unwrap();
        let hash = studyloop_acceptance::evidence::hash_file(&dir.join("manifest.json")).unwrap();
        assert_eq!(
            summary["private_bundle_digest"][&b.manifest().run_id],
            format!("sha256:{hash}")
        );
    }
    let text = summary.to_string();
    assert!(
        !text.contains(&run.tmp.path().display().to_string()),
        "no private path in the summary: {text}"
    );
    assert!(
        !text.contains("mentor_reply"),
        "no transcript in the summary"
    );
}

/// The shipped pins with the still-registered v2 definition (smoke + study_session).
fn v2_pins() -> Pins {
    let definition = studyloop_uat::definition::SignoffDefinition::from_bytes(
        "signoff_v2.yaml",
        include_bytes!("../../signoff_v2.yaml"),
        "signoff_registry.json",
        include_bytes!("../../signoff_registry.json"),
    )
    .unwrap();
    Pins::new(
        studyloop_redaction::RedactionRules::load_default().unwrap(),
        studyloop_rubrics::Rubric::load_default().unwrap(),
        definition,
        studyloop_uat::council::Roster::load_default().unwrap(),
    )
    .unwrap()
}

#[test]
fn the_shipped_definition_fails_a_smoke_only_run_naming_what_is_missing() {
    let pins = Pins::load_default().unwrap();
    assert_eq!(pins.definition.version(), 3);
    let run = run();
    let smoke_only = common::run_log(&run.tmp.path().join("runs/smoke-only"), &[SMOKE]);
    let smoke = bundle(&run.tmp.path().join("durable"), SMOKE, TRANSCRIPT);
    smoke_only
        .record_result(SMOKE, TrialOutcome::Passed, None, Some(&smoke), None)
        .unwrap();
    let out = run.tmp.path().join("releases");
    let report = signoff(&pins, &[smoke_only.dir()], &out);
    assert_eq!(report.verdict.word(), "FAIL");
    for cell in [
        "architect_launch",
        "mcp_lifecycle",
        "now_with_active_plan",
        "study_arc",
        "faults",
        "drill",
    ] {
        assert_reason(
            &report,
            &format!("required cell `journey::{cell}` has no recorded result"),
        );
    }
    assert_reason(
        &report,
        "graded cell `journey::study_arc` has no evidence bundle",
    );
    assert_eq!(
        report.verdict.reasons.len(),
        7,
        "{:#?}",
        report.verdict.reasons
    );
    // v2 stays registered and still judges the same run by its own two cells.
    let report = signoff(&v2_pins(), &[smoke_only.dir()], &out);
    assert_reason(
        &report,
        "required cell `journey::study_session` has no recorded result",
    );
    assert_reason(
        &report,
        "graded cell `journey::study_session` has no evidence bundle",
    );
    assert!(
        report.written.is_none() && !out.exists(),
        "a FAIL writes nothing to the release directory"
    );
    assert_eq!(
        report.summary["verdict"], "FAIL",
        "the summary is still built and scanned"
    );
}

#[test]
fn every_grading_problem_is_a_named_reason() {
    // Never graded.
    let pins3 = pins(3);
    let run1 = run();
    let report = signoff(&pins3, &[run1.shard.dir()], &run1.tmp.path().join("out"));
    assert_reason(
        &report,
        "graded cell `journey::study_session` was never graded: run `studyloop-uat grade`",
    );

    // Graded, but below the floor on every criterion.
    let run2 = run();
    grade(&pins3, &run2.study, "hermetic", 2);
    let report = signoff(&pins3, &[run2.shard.dir()], &run2.tmp.path().join("out"));
    for c in [
        "accuracy",
        "pedagogy",
        "session_lifecycle",
        "learner_record",
    ] {
        assert_reason(&report, &format!("`{c}` median 2 is below its floor 3"));
    }

    // Graded by a council the definition does not accept (v2: its graded cell is this
    // fixture's study_session; v3 names the same council).
    let shipped = v2_pins();
    assert_eq!(
        shipped.definition.council(),
        Pins::load_default().unwrap().definition.council()
    );
    let run3 = run();
    grade(&shipped, &run3.study, "hermetic", 5);
    let report = signoff(&shipped, &[run3.shard.dir()], &run3.tmp.path().join("out"));
    assert_reason(
        &report,
        "graded by council `hermetic`, but this sign-off accepts only council `release`",
    );

    // Graded, then the manifest changed: the arbitration is stale.
    let run4 = run();
    grade(&pins3, &run4.study, "hermetic", 4);
    let manifest = run4.study.join("manifest.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"dirty\": false", "\"dirty\": true");
    std::fs::write(&manifest, text).unwrap();
    let report = signoff(&pins3, &[run4.shard.dir()], &run4.tmp.path().join("out"));
    assert_reason(&report, "graded manifest sha256:");
    assert_reason(&report, "grade it again");
}

#[test]
fn altered_bundles_skips_and_mixed_commits_fail() {
    let pins = pins(3);
    let run = run();
    grade(&pins, &run.study, "hermetic", 4);
    std::fs::write(
        run.smoke.join("transcript.jsonl"),
        "rewritten after the run\n",
    )
    .unwrap();
    let second = common::run_log(&run.tmp.path().join("runs/shard-2"), &[SMOKE, STUDY]);
    second.record_skip(SMOKE, "STUDYLOOP_UAT is not 1").unwrap();
    let report = signoff(
        &pins,
        &[run.shard.dir(), second.dir()],
        &run.tmp.path().join("out"),
    );
    assert_reason(
        &report,
        "does not match its own inventory (altered: transcript.jsonl)",
    );
    assert_reason(
        &report,
        "required cell `journey::smoke` was skipped (STUDYLOOP_UAT is not 1)",
    );
    assert!(report.written.is_none());

    let other = tempfile::tempdir().unwrap();
    let elsewhere = bundle(other.path(), SMOKE, TRANSCRIPT);
    let manifest = elsewhere.join("manifest.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("0123456789abcdef0123", "fedcba98765432100123");
    std::fs::write(&manifest, text).unwrap();
    let run = self::run();
    grade(&pins, &run.study, "hermetic", 4);
    let log = common::run_log(&run.tmp.path().join("runs/mixed"), &[SMOKE, STUDY]);
    log.record_result(SMOKE, TrialOutcome::Passed, None, Some(&elsewhere), None)
        .unwrap();
    log.record_result(STUDY, TrialOutcome::Passed, None, Some(&run.study), None)
        .unwrap();
    let report = signoff(&pins, &[log.dir()], &run.tmp.path().join("out"));
    assert_reason(&report, "the bundles come from different commits");
}

#[test]
fn bundles_passed_directly_need_their_run_directory_and_duplicates_fail() {
    let pins = pins(3);
    let run = run();
    grade(&pins, &run.study, "hermetic", 4);
    let out = run.tmp.path().join("releases");
    // A bundle's own manifest is a claim: without the results line that recorded it
    // (issue 33 §1), each required cell is a named FAIL.
    let report = signoff(&pins, &[&run.smoke, &run.study], &out);
    assert_eq!(report.inputs, (0, 2));
    for cell in [SMOKE, STUDY] {
        assert_reason(
            &report,
            &format!("required cell `{cell}` has no results line in any run directory given"),
        );
    }
    assert_eq!(
        report.verdict.reasons.len(),
        2,
        "{:#?}",
        report.verdict.reasons
    );
    // With the run directory too, the same bundles pass.
    let report = signoff(&pins, &[run.shard.dir(), &run.smoke, &run.study], &out);
    assert!(report.verdict.passed(), "{:#?}", report.verdict.reasons);

    let again = bundle(&run.tmp.path().join("durable"), SMOKE, TRANSCRIPT);
    let report = signoff(&pins, &[run.shard.dir(), &again], &out);
    assert_reason(&report, "cell `journey::smoke` has 2 bundles");
}

#[test]
fn recorded_messages_are_redacted_before_they_reach_reasons_or_the_summary() {
    let pins = pins(3);
    let run = run();
    let secret = format!("ghp_{}", "a1B2".repeat(9));
    let log = common::run_log(&run.tmp.path().join("runs/leaky"), &[SMOKE, STUDY]);
    log.record_result(
        SMOKE,
        TrialOutcome::Failed,
        Some(&format!("token {secret} rejected in /home/alice/x")),
        None,
        None,
    )
    .unwrap();
    let redactor = Redactor::new(&pins.rules)
        .with_secret("CANARY", "canary-env-value-42")
        .unwrap();
    log.record_result(
        STUDY,
        TrialOutcome::Failed,
        Some("the env said canary-env-value-42"),
        None,
        None,
    )
    .unwrap();
    let report = signoff::run(
        &pins,
        &[log.dir().to_path_buf()],
        &redactor,
        &run.tmp.path().join("out"),
    )
    .unwrap();
    let all = format!(
        "{:?}{}",
        report.verdict.reasons,
        Value::Object(report.summary.clone())
    );
    for leaked in [secret.as_str(), "/home/alice", "canary-env-value-42"] {
        assert!(!all.contains(leaked), "`{leaked}` leaked: {all}");
    }
    assert_reason(&report, "token [SECRET:github-token] rejected in [HOME]/x");
    assert_reason(&report, "[SECRET:CANARY]");
}

#[test]
fn a_stub_model_conversation_cannot_sign_off_whatever_council_graded_it() {
    // The test definition accepts the hermetic council, so the auth mode is the only
    // thing standing between these runs and a PASS.
    let pins = pins(3);
    let tmp = tempfile::tempdir().unwrap();
    let durable = tmp.path().join("durable");
    let out = tmp.path().join("releases");
    for (mode, word) in [
        (Some(AuthMode::StubProvider), "stub-provider"),
        (Some(AuthMode::Scrubbed), "scrubbed"),
        (None, "unknown"),
    ] {
        let log = common::run_log(&tmp.path().join("runs").join(word), &[SMOKE, STUDY]);
        let smoke = bundle(&durable.join(word), SMOKE, TRANSCRIPT);
        let study = bundle_in_mode(&durable.join(word), STUDY, TRANSCRIPT, mode);
        grade(&pins, &study, "hermetic", 5);
        for (cell, b) in [(SMOKE, &smoke), (STUDY, &study)] {
            log.record_result(cell, TrialOutcome::Passed, None, Some(b), None)
                .unwrap();
        }
        let report = signoff(&pins, &[log.dir()], &out);
        assert_eq!(
            report.verdict.reasons.len(),
            1,
            "{:#?}",
            report.verdict.reasons
        );
        assert_reason(
            &report,
            &format!("`{STUDY}` ran with auth mode `{word}`, not `real-auth`"),
        );
        assert_reason(&report, "STUDYLOOP_ACC_REAL_AUTH=1");
        assert!(report.written.is_none());
    }
    assert!(!out.exists());
}
