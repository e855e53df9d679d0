//! The journeys' bookkeeping, ungated: lifecycle steps, the bundle a journey writes to
//! the durable root (transcript, lifecycle files, pins in the manifest before grading,
//! the redacted summary inside the inventory), and the hermetic judges' canned replies,
//! which must be valid, cited scores for such a bundle. No product is started here.

use std::path::Path;

use serde_json::{Value, json};
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::case::{CaseRecord, StepFailure, Steps};
use studyloop_acceptance::evidence::{self, Outcome, Surface, Tier};
use studyloop_acceptance::selection::AuthMode;
use studyloop_actors::{Outcome as ActorOutcome, Transcript, Turn, Usage};
use studyloop_redaction::Redactor;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council;
use studyloop_uat::journey::record::{
    Destination, SUMMARY, TRANSCRIPT, lifecycle_path, write_bundle,
};
use studyloop_uat::journey::{grading, smoke};
use studyloop_uat::signoff::Pins;

const CELL: &str = "journey::study_session";

fn destination(root: &Path) -> Destination {
    let caller = CallerEnv::from_pairs([("STUDYLOOP_UAT_EVIDENCE_ROOT", root.as_os_str())]);
    Destination::resolve(&caller).unwrap()
}

fn transcript() -> Transcript {
    let turn = |learner: &str, reply: &str| Turn {
        learner: learner.into(),
        mentor_reply: reply.into(),
        usage: Usage::ZERO,
        elapsed_ms: 5,
    };
    Transcript::ended(
        vec![
            turn("what is a closure?", "What does a function keep?"),
            turn("its variables", "Yes. Try one."),
        ],
        ActorOutcome::Completed,
    )
}

/// A journey's record that ran start, talk and end, with the record files a graded one
/// writes.
fn journey() -> CaseRecord {
    let mut j = CaseRecord::new(CELL);
    j.facts.harness = Some("codex".into());
    j.facts.auth_mode = Some(AuthMode::StubProvider);
    j.facts.actor_backend = Some("scripted".into());
    j.facts.seeds.push(("stub_nonce".into(), 42));
    j.step_doing("session-start", "start", |j| {
        j.detail(json!({"status": 201}));
        Ok(())
    })
    .unwrap();
    j.step_doing("end", "end", |_| Ok(())).unwrap();
    j.transcript = Some(transcript());
    j.attach("db/study_sessions.json", b"[{\"id\": \"s1\"}]\n".to_vec());
    j
}

/// Writes `j` as a UAT bundle under `root` with the shipped pins.
fn write(
    j: &CaseRecord,
    note: &str,
    root: &Path,
    result: Result<(), &StepFailure>,
    graded: bool,
) -> std::path::PathBuf {
    let pins = Pins::load_default().unwrap();
    let redactor = Redactor::new(&pins.rules);
    let dest = destination(root);
    write_bundle(
        j,
        note,
        &dest,
        &CallerEnv::default(),
        result,
        &pins,
        &redactor,
        graded,
    )
    .unwrap()
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn steps_are_numbered_with_their_detail_and_a_failure_names_its_step() {
    let mut j = CaseRecord::new(CELL);
    let got = j.step_doing("first", "does one thing", |j| {
        j.detail(json!({"seen": 1}));
        Ok(7)
    });
    assert_eq!(got.unwrap(), 7);
    let err = j
        .step_doing("second", "fails", |_| -> Result<(), _> {
            Err(StepFailure::errored("boom"))
        })
        .unwrap_err();
    assert_eq!(err.message, "step `second`: boom");
    assert_eq!(err.outcome, Outcome::Errored);
    assert_eq!(j.steps.len(), 2);
    assert_eq!(lifecycle_path(&j.steps[0]), "lifecycle/01-first.json");
    assert_eq!(j.steps[0].detail, json!({"seen": 1}));
    assert!(j.steps[0].ok && !j.steps[1].ok);
    // A step that set no detail does not inherit the previous one's.
    assert_eq!(j.steps[1].detail, Value::Null);
    assert_eq!(j.steps[1].error.as_deref(), Some("boom"));
}

#[test]
fn a_graded_journey_writes_a_verified_bundle_with_pins_before_grading() {
    let tmp = tempfile::tempdir().unwrap();
    let pins = Pins::load_default().unwrap();
    let redactor = Redactor::new(&pins.rules);
    let dest = destination(tmp.path());
    let j = journey();
    let dir = write_bundle(
        &j,
        "graded journey",
        &dest,
        &CallerEnv::default(),
        Ok(()),
        &pins,
        &redactor,
        true,
    )
    .unwrap();
    assert_eq!(dir, tmp.path().join(dest.run_id.as_str()));
    assert!(evidence::verify(&dir).unwrap().is_clean());
    let m = manifest(&dir);
    assert_eq!(m["tier"], json!(Tier::Uat));
    assert_eq!(m["surface"], json!(Surface::Journey));
    assert_eq!(m["cell"], CELL);
    assert_eq!(m["outcome"], "completed");
    assert_eq!(m["auth_mode"], "stub-provider");
    assert_eq!(m["seeds"]["stub_nonce"], 42);
    assert_eq!(m["counts"], json!({"passed": 2, "skipped": 0, "failed": 0}));
    assert_eq!(m["rubric_version"], pins.rubric.version().to_string());
    assert_eq!(m["rubric_hash"], pins.rubric.sha256());
    assert_eq!(m["redaction_version"], pins.rules.version().to_string());
    assert_eq!(m["redaction_hash"], pins.rules.sha256());
    for file in [
        TRANSCRIPT,
        SUMMARY,
        "lifecycle/01-session-start.json",
        "lifecycle/02-end.json",
        "db/study_sessions.json",
    ] {
        assert!(
            m["file_inventory"][file].is_string(),
            "{file} not inventoried"
        );
    }
    let lines: Vec<Value> = std::fs::read_to_string(dir.join(TRANSCRIPT))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["learner"], "what is a closure?");
    assert_eq!(lines[1]["mentor_reply"], "Yes. Try one.");
    assert_eq!(
        lines[0]["usage"],
        json!({"input_tokens": 0, "output_tokens": 0})
    );
    let step: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("lifecycle/01-session-start.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(step["detail"]["status"], 201);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(SUMMARY)).unwrap()).unwrap();
    assert_eq!(summary["arbitration_note"], "graded journey");
    assert_eq!(summary["journeys"][CELL]["harness"], "codex");
    let allowed = redactor.allowed_fields();
    assert!(
        summary
            .as_object()
            .unwrap()
            .keys()
            .all(|k| allowed.contains(k))
    );
    // The bundle opens cleanly for grading and sign-off.
    assert!(Bundle::open(&dir).unwrap().problems().is_empty());
}

#[test]
fn a_failed_ungraded_journey_records_its_failure_and_no_rubric() {
    let tmp = tempfile::tempdir().unwrap();
    let pins = Pins::load_default().unwrap();
    let mut j = journey();
    let failure = j
        .step_doing("conversation", "talk", |_| -> Result<(), _> {
            Err(StepFailure::budget("2 of 3 turns answered"))
        })
        .unwrap_err();
    let dir = write(&j, smoke::LABEL, tmp.path(), Err(&failure), false);
    let m = manifest(&dir);
    assert_eq!(m["outcome"], "budget-exhausted");
    assert_eq!(
        m["failure_artifacts"],
        json!(["lifecycle/03-conversation.json"])
    );
    assert!(
        m["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "step `conversation`: 2 of 3 turns answered")
    );
    assert!(m["rubric_version"].is_null() && m["rubric_hash"].is_null());
    assert_eq!(m["redaction_version"], pins.rules.version().to_string());
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(SUMMARY)).unwrap()).unwrap();
    assert!(
        summary["arbitration_note"]
            .as_str()
            .unwrap()
            .starts_with("mechanics check: grades nothing")
    );
    assert!(evidence::verify(&dir).unwrap().is_clean());
}

#[test]
fn a_leak_in_a_recorded_fact_becomes_a_placeholder_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let mut j = journey();
    let key = format!("sk-ant-{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4");
    j.facts.harness_version = Some(format!("codex 1.0 at /home/alice/.codex with {key}"));
    let dir = write(&j, "graded journey", tmp.path(), Ok(()), true);
    let summary = std::fs::read_to_string(dir.join(SUMMARY)).unwrap();
    assert!(
        !summary.contains("alice") && !summary.contains(&key),
        "{summary}"
    );
    assert!(summary.contains("[SECRET:anthropic-key]"), "{summary}");
    // The private manifest keeps the fact as observed.
    assert!(
        manifest(&dir)["harness_version"]
            .as_str()
            .unwrap()
            .contains("alice")
    );
}

#[test]
fn hermetic_judge_replies_are_valid_cited_scores_for_a_journey_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let pins = Pins::load_default().unwrap();
    let dir = write(&journey(), "graded journey", tmp.path(), Ok(()), true);
    let bundle = Bundle::open(&dir).unwrap();
    let text = grading::stub_judge_reply(&bundle, 4);
    let scores = council::parse_reply(&text, &pins.rubric, &bundle.citable()).unwrap();
    assert_eq!(scores.len(), pins.rubric.criteria().len());
    assert!(scores.values().all(|s| s.score == 4));
    assert_eq!(
        scores["session_lifecycle"].citations,
        ["manifest.json", "lifecycle/02-end.json"]
    );
    assert!(
        scores
            .values()
            .all(|s| s.rationale.contains("assesses nothing"))
    );
}

#[test]
fn the_council_follows_the_auth_mode() {
    let pins = Pins::load_default().unwrap();
    assert_eq!(
        grading::council_for(AuthMode::StubProvider, &pins),
        Some(grading::HERMETIC_COUNCIL)
    );
    assert_eq!(
        grading::council_for(AuthMode::RealAuth, &pins),
        Some(pins.definition.council())
    );
    assert_eq!(grading::council_for(AuthMode::Scrubbed, &pins), None);
    // local-model: the roster's `local` council, which the definition never accepts.
    assert_eq!(
        grading::council_for(AuthMode::LocalModel, &pins),
        Some(grading::LOCAL_COUNCIL)
    );
    assert!(pins.roster.council(grading::LOCAL_COUNCIL).is_ok());
    assert_ne!(pins.definition.council(), grading::LOCAL_COUNCIL);
}

/// Set in the child of the journey Ctrl-C test: it runs the UAT runner instead.
const SMOKE_CHILD: &str = "STUDYLOOP_TEST_SIGINT_SMOKE_CHILD";

/// `journey::smoke` (a UAT journey: product server, ACP session, scripted learner,
/// durable bundle) in a runner child gets a real Ctrl-C to its process group as soon
/// as its product server runs: the runner must exit non-zero in time, the durable
/// bundle must say `cancelled`, and no scratch tree or process of its world may be
/// left. Before the case engine, journeys caught no signal: the runner died at once,
/// leaving the server, the stub agent and the world behind, and no bundle.
#[test]
fn sigint_to_a_uat_runner_mid_journey_cancels_it_and_leaves_nothing() {
    use std::time::Duration;
    use studyloop_acceptance::lane::sigint::{
        ForegroundJob, cancelled_cleanly, child_running, scratch_root_of, wait_for,
    };
    if std::env::var_os(SMOKE_CHILD).is_some() {
        let code = studyloop_acceptance::runner::run_with_words(
            studyloop_acceptance::evidence::Tier::Uat,
            &CallerEnv::capture(),
            &["uat", "journey::smoke", "--exact"],
            studyloop_uat::journey::catalogue,
        );
        std::process::exit(i32::from(code != std::process::ExitCode::SUCCESS));
    }
    let tmp = tempfile::Builder::new()
        .prefix("sl-int-uat-")
        .tempdir_in("/tmp")
        .unwrap();
    let durable = tmp.path().join("uat-root");
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        // The test as the one tests/it binary names it (module path included).
        "journey::sigint_to_a_uat_runner_mid_journey_cancels_it_and_leaves_nothing",
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(SMOKE_CHILD, "1")
    .env("STUDYLOOP_ACC", "1")
    .env("STUDYLOOP_UAT", "1")
    .env("STUDYLOOP_UAT_EVIDENCE_ROOT", &durable)
    .env("STUDYLOOP_ACC_RESULTS_DIR", tmp.path().join("results"));
    let mut child = ForegroundJob::spawn(&mut cmd).unwrap();
    let pid = child.pid();
    let phase = Duration::from_secs(60);
    let server = wait_for(
        || child_running(pid, "studyloop", Some("web")),
        "the journey's product server",
        phase,
    )
    .unwrap();
    let root = scratch_root_of(server).expect("the server runs in a scratch HOME");
    child.ctrl_c().unwrap();
    let (status, took) = child.wait_exit(phase).unwrap();
    let problems = cancelled_cleanly(status, took, Duration::from_secs(20), &root, &durable);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Issue 30 item 7: a journey's `inputs.json` names the pinned files it was redacted and
/// defined against, and the rubric only when the council grades it.
#[test]
fn a_journeys_pinned_inputs_are_the_shipped_pins_and_the_rubric_only_when_graded() {
    use studyloop_acceptance::case::Destination as _;
    use studyloop_uat::journey::record::UatBundle;
    let tmp = tempfile::tempdir().unwrap();
    let pins = Pins::load_default().unwrap();
    let redactor = Redactor::new(&pins.rules);
    let dest = destination(tmp.path());
    for graded in [false, true] {
        let bundle = UatBundle {
            dest: &dest,
            pins: &pins,
            redactor: &redactor,
            graded,
            arbitration_note: "n",
        };
        let got: Vec<(&str, String, String)> = bundle
            .pinned_inputs()
            .into_iter()
            .map(|p| (p.kind, p.version, p.sha256))
            .collect();
        let mut want = vec![
            (
                "redaction-rules",
                pins.rules.version().to_string(),
                pins.rules.sha256().to_owned(),
            ),
            (
                "signoff-definition",
                pins.definition.version().to_string(),
                pins.definition.sha256().to_owned(),
            ),
        ];
        if graded {
            want.push((
                "rubric",
                pins.rubric.version().to_string(),
                pins.rubric.sha256().to_owned(),
            ));
        }
        assert_eq!(got, want, "graded {graded}");
    }
}
