//! Grading a graded journey's bundle right after it is written: the council follows
//! the auth mode (stub-provider → the `hermetic` council of stub seats, local-model →
//! the `local` council of local-model seats, real-auth → the council the sign-off
//! definition names), then `Grader::grade` and `council::write`
//! put the arbitration beside the private bundle.
//!
//! The hermetic council's seats are `studyloop-stub-provider --role judge` answering
//! with canned replies (below) that cite files of this bundle: they prove the grading
//! mechanics end to end and say in every rationale that they assess nothing. The
//! sign-off definition never accepts that council, so such a run cannot sign off a
//! release.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::selection::AuthMode;
use studyloop_actors::llm::cassette::Cassette;
use studyloop_redaction::Redactor;
use studyloop_stubs::StubProvider;

use crate::bundle::Bundle;
use crate::council::{
    self, Arbitration, CellContext, Grader, SeatApprovals, SeatStatus, StubTarget,
};
use crate::signoff::Pins;

/// The roster's council of stub seats (mechanics only).
pub const HERMETIC_COUNCIL: &str = "hermetic";
/// The roster's council of local-model seats (auth mode `local-model`).
pub const LOCAL_COUNCIL: &str = "local";

/// The scores each hermetic seat gives every criterion, in seat order: two agree and
/// one sits a point lower, so the arbitration shows a median, a spread and no flagged
/// disagreement (a flag needs more than one point).
const STUB_SCORES: [u8; 3] = [4, 4, 3];

/// The council a journey run in `mode` is graded by.
#[must_use]
pub fn council_for(mode: AuthMode, pins: &Pins) -> Option<&str> {
    match mode {
        AuthMode::StubProvider => Some(HERMETIC_COUNCIL),
        AuthMode::RealAuth => Some(pins.definition.council()),
        AuthMode::LocalModel => Some(LOCAL_COUNCIL),
        // No model reached the harness: there is no conversation to grade.
        AuthMode::Scrubbed => None,
    }
}

/// A finished grading.
#[derive(Debug, Clone)]
pub struct Graded {
    /// The arbitration.
    pub arbitration: Arbitration,
    /// `<bundle>.arbitration/`.
    pub dir: PathBuf,
}

impl Graded {
    /// One line for the trial's output and the manifest-free record.
    #[must_use]
    pub fn line(&self) -> String {
        let a = &self.arbitration;
        format!(
            "{} by council `{}`: {} of {} seat(s) scored, {} reject_if fired",
            if a.rejected() { "REJECTED" } else { "GRADED" },
            a.council,
            a.scored_seats(),
            a.seats.len(),
            a.rejections.len()
        )
    }
}

/// Why grading a journey's bundle failed.
#[derive(Debug, thiserror::Error)]
pub enum GradeError {
    /// The bundle did not open.
    #[error("{0}")]
    Bundle(String),
    /// The roster names no such council.
    #[error("the roster has no council `{council}` (known: {known})")]
    UnknownCouncil {
        /// The council asked for.
        council: String,
        /// The councils the roster has.
        known: String,
    },
    /// The judge stub's scratch world, script or process failed.
    #[error("the judge stub: {0}")]
    JudgeStub(String),
    /// The council could not grade or its arbitration could not be written.
    #[error("{0}")]
    Council(String),
    /// A hermetic council's stub seat did not score.
    #[error("the hermetic council's stub seats did not all score: {}", .0.join("; "))]
    SeatsUnscored(Vec<String>),
}

/// Grades the bundle at `dir` with `council`; stub seats get their own judge stub in a
/// throwaway scratch world.
///
/// # Errors
/// One line naming what failed (the bundle, the judge stub, the council, the write).
pub fn grade(
    dir: &Path,
    council: &str,
    pins: &Pins,
    redactor: &Redactor,
    caller: &CallerEnv,
    cassette: Option<&Cassette>,
    approvals: SeatApprovals<'_>,
) -> Result<Graded, GradeError> {
    let bundle = Bundle::open(dir).map_err(|e| GradeError::Bundle(e.to_string()))?;
    let seats = &pins
        .roster
        .council(council)
        .map_err(|known| GradeError::UnknownCouncil {
            council: council.to_owned(),
            known: known.to_string(),
        })?;
    let needs_stub = seats
        .seats
        .iter()
        .any(|s| s.backend == council::Backend::Stub);
    // The judge stub lives in its own scratch world, swept when this returns.
    let world = needs_stub
        .then(|| Scratch::create_with(caller.clone(), AuthMode::Scrubbed))
        .transpose()
        .map_err(|e| GradeError::JudgeStub(format!("a scratch world: {e}")))?;
    let mut judges = match &world {
        Some(world) => Some(start_judges(world.root(), &bundle, seats)?),
        None => None,
    };
    let grader = Grader {
        rubric: &pins.rubric,
        rules: &pins.rules,
        redactor,
        roster: &pins.roster,
        council,
        env: caller,
        stub: judges.as_ref().map(|j| StubTarget {
            base_url: j.base_url(),
            api_key: None,
        }),
        cassette,
        approvals,
    };
    let cell = CellContext {
        required: pins
            .definition
            .cell_specs()
            .iter()
            .any(|c| c.id == bundle.manifest().cell && c.required),
        skipped: false,
    };
    let graded = grader
        .grade(&bundle, cell)
        .map_err(|e| GradeError::Council(e.to_string()));
    if let Some(j) = judges.as_mut() {
        j.stop();
    }
    drop(judges);
    if let Some(world) = world {
        world
            .close()
            .map_err(|e| GradeError::JudgeStub(format!("sweeping its scratch world: {e}")))?;
    }
    let graded = graded?;
    let out = council::write(&bundle, &graded).map_err(|e| GradeError::Council(e.to_string()))?;
    Ok(Graded {
        arbitration: graded.arbitration,
        dir: out,
    })
}

fn start_judges(
    root: &Path,
    bundle: &Bundle,
    council: &council::Council,
) -> Result<StubProvider, GradeError> {
    let replies: serde_json::Map<String, Value> = council
        .seats
        .iter()
        .zip(STUB_SCORES.iter().cycle())
        .map(|(seat, score)| {
            let reply = stub_judge_reply(bundle, *score);
            (seat.model.clone(), json!({"judge": [reply]}))
        })
        .collect();
    let script = root.join("judge-roles.json");
    let text = json!({"version": 1, "by_model": replies}).to_string();
    std::fs::write(&script, text)
        .map_err(|e| GradeError::JudgeStub(format!("writing {}: {e}", script.display())))?;
    let binary =
        bins::path("studyloop-stub-provider").map_err(|e| GradeError::JudgeStub(e.to_string()))?;
    let args = [
        "--script".into(),
        script.into_os_string(),
        "--role".into(),
        "judge".into(),
    ];
    StubProvider::spawn(&binary, &root.join("judges"), args)
        .map_err(|e| GradeError::JudgeStub(format!("starting it: {e}")))
}

/// A stub seat's canned reply: `score` on every criterion, each citing the bundle files
/// its criterion names (the transcript, the manifest and a lifecycle step, the
/// `study_sessions` rows), and a rationale that says it is not an assessment.
#[must_use]
pub fn stub_judge_reply(bundle: &Bundle, score: u8) -> String {
    let inventory = bundle.citable();
    let first = |prefix: &str| {
        inventory
            .iter()
            .find(|p| p.starts_with(prefix))
            .cloned()
            .unwrap_or_else(|| prefix.to_owned())
    };
    let end_step = inventory
        .iter()
        .find(|p| p.starts_with("lifecycle/") && p.ends_with("-end.json"))
        .cloned();
    let cites: [(&str, Vec<String>); 4] = [
        ("accuracy", vec![first("transcript.jsonl")]),
        ("pedagogy", vec![first("transcript.jsonl")]),
        (
            "session_lifecycle",
            vec![
                "manifest.json".into(),
                end_step.unwrap_or_else(|| first("lifecycle/")),
            ],
        ),
        ("learner_record", vec![first("db/study_sessions")]),
    ];
    let scores: serde_json::Map<String, Value> = cites
        .into_iter()
        .map(|(criterion, citations)| {
            let entry = json!({
                "score": score,
                "citations": citations,
                "rationale": "Stub judge seat (canned reply from studyloop-stub-provider): it proves the grading mechanics and assesses nothing."
            });
            (criterion.to_owned(), entry)
        })
        .collect();
    json!({ "scores": scores }).to_string()
}

/// Whether every seat of a hermetic grading scored (the mechanics worked end to end).
///
/// # Errors
/// Every seat that did not score, with its reason.
pub fn every_seat_scored(a: &Arbitration) -> Result<(), GradeError> {
    let failed: Vec<String> = a
        .seats
        .iter()
        .filter_map(|s| match &s.status {
            SeatStatus::Scored { .. } => None,
            SeatStatus::Unscored { reason } => Some(format!("{} unscored: {reason}", s.id)),
            SeatStatus::Absent { reason } => Some(format!("{} absent: {reason}", s.id)),
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(GradeError::SeatsUnscored(failed))
    }
}
