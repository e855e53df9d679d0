//! Live lanes as readable test cases: a [`Lane`] runs named steps and checks,
//! recording each (name, ok, elapsed, error) for evidence, and owns every
//! resource a lane starts (scratch world, stub provider, tmux server), so that
//! [`Lane::finish`] — always called, also after a failed step or a panic —
//! stops them, writes the evidence bundle and sweeps the scratch tree.
//!
//! What it is not: the lane's steps themselves (`cli_tmux`) or the validators
//! (`validate`); this module is the bookkeeping around them.

pub(crate) mod checks;
pub mod cli_tmux;
pub mod interrupt_trial;
pub mod paste_trial;
mod record;
pub(crate) mod setup;
pub mod validate;

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;
use studyloop_stubs::StubProvider;

use crate::evidence::{Outcome, Surface};
use crate::harness::{self, HarnessSpec};
use crate::pane::TurnRecord;
use crate::probe::install_hint;
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::scratch::{Env, Scratch};
use crate::selection::HarnessName;
use crate::tmux::Tmux;

/// A gated trial named `name` running `body` for `harness`, which must be
/// selected and on the scratch PATH (the CLI/tmux lanes' common gate).
pub(crate) fn gated_trial(
    name: String,
    harness: HarnessName,
    body: fn(&TrialContext, HarnessName) -> TrialReport,
) -> TrialSpec {
    TrialSpec::gated(name, move |ctx| body(ctx, harness))
        .requires(Requirement::HarnessSelected(harness))
        .requires(Requirement::BinaryOnScratchPath {
            binary: harness.binary(),
            fix: install_hint(harness),
        })
}

/// Runs `steps` as a lane for `harness`: the interrupt handler installed, then
/// [`drive_to_finish`].
pub(crate) fn run_lane(
    ctx: &TrialContext,
    harness: HarnessName,
    steps: fn(&mut Lane<'_>) -> Result<(), LaneFailure>,
) -> TrialReport {
    let mut lane = Lane::new(ctx, harness);
    if let Err(e) = crate::interrupt::install() {
        lane.notes.push(e);
    }
    drive_to_finish(lane, steps)
}

/// Runs `steps` on `lane` with a panic caught as an errored step, then always
/// [`Lane::finish`]: the one way every lane (CLI/tmux and web) ends.
pub(crate) fn drive_to_finish<'a>(
    mut lane: Lane<'a>,
    steps: impl FnOnce(&mut Lane<'a>) -> Result<(), LaneFailure>,
) -> TrialReport {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| steps(&mut lane)))
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(LaneFailure::errored(format!("the lane panicked: {what}")))
        });
    lane.finish(result)
}

/// A step that did not succeed: how the lane ends and why.
#[derive(Debug, Clone)]
pub struct LaneFailure {
    /// The manifest outcome (`errored`, `budget-exhausted`, `skipped`, …).
    pub outcome: Outcome,
    /// The one-line reason, naming the step.
    pub message: String,
}

impl LaneFailure {
    /// An errored step.
    pub fn errored(message: impl Into<String>) -> Self {
        Self {
            outcome: Outcome::Errored,
            message: message.into(),
        }
    }

    /// A lane that ran out of turns or time.
    pub fn budget(message: impl Into<String>) -> Self {
        Self {
            outcome: Outcome::BudgetExhausted,
            message: message.into(),
        }
    }

    /// A lane stopped by an interrupt (SIGINT/SIGTERM to the runner).
    pub fn cancelled(message: impl Into<String>) -> Self {
        Self {
            outcome: Outcome::Cancelled,
            message: message.into(),
        }
    }

    /// A lane that cannot run here for a nameable reason.
    pub fn skipped(message: impl Into<String>) -> Self {
        Self {
            outcome: Outcome::Skipped,
            message: message.into(),
        }
    }
}

/// One step or check as evidence (`steps.json`).
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// `step` or `check`.
    pub kind: &'static str,
    /// What it does, e.g. `study --end`.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Wall time.
    pub elapsed_ms: u64,
    /// The failure, when it failed.
    pub error: Option<String>,
}

/// A driven turn with the lane phase it belongs to (`turns.json`).
#[derive(Debug, Clone, Serialize)]
pub struct PhaseTurn {
    /// `first-session` or `resumed-session`.
    pub phase: &'static str,
    /// The driver's record.
    #[serde(flatten)]
    pub record: TurnRecord,
}

/// One lane run and everything it owns.
pub struct Lane<'a> {
    /// The trial context (selection, caller env, run log).
    pub ctx: &'a TrialContext,
    /// The harness.
    pub harness: HarnessName,
    /// The surface this lane drives (the manifest's `surface`).
    pub surface: Surface,
    /// Its table row.
    pub spec: &'static HarnessSpec,
    /// The stub's reply-nonce seed (random per lane, recorded in the manifest).
    pub seed: u64,
    /// The scratch world, once made.
    pub scratch: Option<Scratch>,
    /// The cell's stub provider (stub-provider mode).
    pub stub: Option<StubProvider>,
    /// The scratch env plus what provisioning added.
    pub env: Env,
    /// The product's tmux server.
    pub tmux: Option<Tmux>,
    /// The harness binary as resolved on the scratch PATH.
    pub binary: Option<PathBuf>,
    /// Its `--version` line.
    pub version: Option<String>,
    /// The actor backend's model, when it has one.
    pub actor_model: Option<String>,
    /// Steps and checks so far.
    pub steps: Vec<StepRecord>,
    /// Driven turns of both sessions.
    pub turns: Vec<PhaseTurn>,
    /// Named text artefacts for the bundle (`relpath`, contents).
    pub files: Vec<(String, Vec<u8>)>,
    /// Facts for the manifest notes (findings such as "no resume").
    pub notes: Vec<String>,
    /// Keeps the tmux server registered for Ctrl-C cleanup.
    pub watch: Option<crate::interrupt::Watch>,
}

impl<'a> Lane<'a> {
    /// A lane for `harness` in trial `ctx`.
    pub fn new(ctx: &'a TrialContext, harness: HarnessName) -> Self {
        let mut seed_bytes = [0u8; 8];
        // A failed getrandom leaves seed 0: still a valid, recorded seed.
        let _ = getrandom::fill(&mut seed_bytes);
        Self {
            ctx,
            harness,
            surface: Surface::CliTmux,
            spec: harness::spec(harness),
            seed: u64::from_le_bytes(seed_bytes) >> 1,
            scratch: None,
            stub: None,
            env: Env::default(),
            tmux: None,
            binary: None,
            version: None,
            actor_model: None,
            steps: Vec::new(),
            turns: Vec::new(),
            files: Vec::new(),
            notes: Vec::new(),
            watch: None,
        }
    }

    /// Runs one step, recording it; a failure ends the lane with its outcome.
    pub fn step<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<T, LaneFailure>,
    ) -> Result<T, LaneFailure> {
        self.record("step", name, f)
    }

    /// Runs one validator; a failed check ends the lane as errored.
    pub fn check(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<(), String>,
    ) -> Result<(), LaneFailure> {
        self.record("check", name, |lane| f(lane).map_err(LaneFailure::errored))
    }

    fn record<T>(
        &mut self,
        kind: &'static str,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<T, LaneFailure>,
    ) -> Result<T, LaneFailure> {
        let start = Instant::now();
        let result = if crate::interrupt::interrupted() {
            Err(LaneFailure::cancelled(
                "interrupted (SIGINT/SIGTERM to the runner) before this step",
            ))
        } else {
            f(self)
        };
        // A step broken by the interrupt (its tmux server was killed) was
        // cancelled, whatever error it saw.
        let result = result.map_err(|e| {
            if crate::interrupt::interrupted() && e.outcome != Outcome::Cancelled {
                LaneFailure::cancelled(format!(
                    "interrupted (SIGINT/SIGTERM to the runner): {}",
                    e.message
                ))
            } else {
                e
            }
        });
        self.steps.push(StepRecord {
            kind,
            name: name.to_owned(),
            ok: result.is_ok(),
            elapsed_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
            error: result.as_ref().err().map(|e| e.message.clone()),
        });
        result.map_err(|mut e| {
            e.message = format!("{kind} `{name}`: {}", e.message);
            e
        })
    }

    /// Adds a text artefact to the bundle.
    pub fn attach(&mut self, rel: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.push((rel.into(), bytes.into()));
    }

    /// The scratch world (steps after `scratch` may rely on it).
    pub fn scratch(&self) -> Result<&Scratch, LaneFailure> {
        self.scratch
            .as_ref()
            .ok_or_else(|| LaneFailure::errored("no scratch world"))
    }
}
