//! The CLI/tmux lane, `cli-tmux::<harness>`: the real `studyloop` CLI launches
//! the real pinned harness in tmux inside a scratch world; the selected learner
//! actor converses with it through a control-mode `PaneDriver`; the session is
//! ended, resumed for one more turn and ended again. In stub-provider mode the
//! cell's own `studyloop-stub-provider` answers, so every turn is proven by its
//! nonce and the request log proves persona and history.
//!
//! Cells are independent (own scratch, tmux socket, stub port), so the runner
//! runs them concurrently, one trial per harness, bounded by its thread count.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::checks::db_row;
use super::setup::{make_scratch, model_path, resolve_binary};
use crate::case::{Case, Checks, PhaseTurn, StepFailure, Steps, Transport, converse};
use crate::door::{SessionState, StateField, doctor};
use crate::harness_spec::Resume;
use crate::pane::{PaneDriver, PaneError, Proof};
use crate::runner::{TrialContext, TrialReport, TrialSpec};
use crate::selection::HarnessName;
use crate::validate::{self, STUDY_PERSONA};

/// How long the state file, the tmux session and the pane child get to appear.
const APPEAR_TIMEOUT: Duration = Duration::from_secs(20);

/// The trial name for `harness`.
pub(crate) fn trial_name(harness: HarnessName) -> String {
    format!("cli-tmux::{harness}")
}

/// The lane's trial: gated, needs the harness selected and on the scratch PATH.
pub fn trial(harness: HarnessName) -> TrialSpec {
    super::gated_trial(trial_name(harness), harness, run)
}

/// Runs the lane; evidence is written whatever happens (the case's finish).
pub fn run(ctx: &TrialContext, harness: HarnessName) -> TrialReport {
    super::run_lane(ctx, harness, drive)
}

/// The lane, step by step.
fn drive(lane: &mut Case<'_>) -> Result<(), StepFailure> {
    let h = lane.harness;
    let title = format!("Harness Matrix Live: {h}");
    lane.step("scratch world", make_scratch)?;
    lane.step("harness binary and version", resolve_binary)?;
    model_path(lane, &[])?;
    let (state, session, mut driver) = start_study(lane, &title)?;
    let result = lane.step("conversation", |l| {
        converse(l, Transport::Pane(&mut driver))
    });
    stash_driver(lane, &driver, "first-session");
    let answered = result?.answered();
    let stub = lane.has_stub();
    lane.verify(
        "the first session's record",
        Checks::new()
            .check_if(
                stub,
                "stub log: persona and history length per turn",
                |l: &mut Case<'_>| {
                    let turns: Vec<u64> = (1..=u64::from(answered)).collect();
                    validate::stub_history(&l.stub_records()?, l.seed, &turns, STUDY_PERSONA)
                },
            )
            .check("db: study_sessions row with persona_hash", |l| {
                db_row(l, &state)
            })
            .check("doctor --json (read-only)", doctor),
    )?;
    // The first session is ended by the product while the harness is live
    // (`--end` must stop it); the resumed one is left through the harness's own
    // exit keys first (the product's agent-exit path), then `--end`.
    drop(driver);
    lane.step("study --end (harness live)", |l| end(l, &session))?;
    lane.step("study --resume", |l| {
        cli(l, "study-resume", &["study", "--resume"])
    })?;
    let resumed = lane.step("resumed session state", |l| wait_state(l, true))?;
    let (session, pane) = lane.step("resumed live main pane", |l| live_pane(l, &resumed))?;
    let next = match lane.spec.resume {
        Resume::Supported => answered + 1,
        Resume::Unsupported { finding } => {
            lane.record.notes.push(format!("finding: {finding}"));
            1
        }
    };
    let mut driver = lane.step("resumed harness ready", |l| {
        attach(l, &session, &pane, next)
    })?;
    let result = lane.step("one more turn after resume", |l| {
        let prompt = "One more question after the break: what did we cover?";
        let turn = driver.send_turn(prompt).map_err(pane_failure)?.clone();
        l.record_pane_turn(&turn, next)
    });
    stash_driver(lane, &driver, "resumed-session");
    result?;
    if stub {
        lane.check("stub log: the resumed turn carries the history", |l| {
            validate::stub_history(
                &l.stub_records()?,
                l.seed,
                &[u64::from(next)],
                STUDY_PERSONA,
            )
        })?;
    }
    lane.step("exit the resumed harness", |l| exit_harness(l, driver))?;
    lane.step("study --end after resume", |l| end(l, &session))
}

/// `study <title> --agent <harness>`, then the steps up to a driver on the
/// harness's ready main pane: the session state, its session name and the
/// driver (first stub turn 1).
pub(crate) fn start_study(
    lane: &mut Case<'_>,
    title: &str,
) -> Result<(SessionState, String, PaneDriver), StepFailure> {
    let h = lane.harness;
    lane.step("study start", |l| {
        cli(l, "study-start", &["study", title, "--agent", h.as_str()])
    })?;
    let state = lane.step("session state", |l| wait_state(l, true))?;
    let (session, pane) = lane.step("live main pane", |l| live_pane(l, &state))?;
    let driver = lane.step("harness ready", |l| attach(l, &session, &pane, 1))?;
    Ok((state, session, driver))
}

/// Runs `studyloop <args>` in the cell's env; its output goes to the bundle.
fn cli(l: &mut Case<'_>, tag: &str, args: &[&str]) -> Result<(), StepFailure> {
    crate::door::studyloop(l, tag, args).map(drop)
}

fn state_path(l: &Case<'_>) -> Result<PathBuf, StepFailure> {
    Ok(SessionState::path_in(l.scratch()?.config_dir()))
}

/// Waits for the state file to show an active (`active == true`) or ended session.
pub(crate) fn wait_state(l: &mut Case<'_>, active: bool) -> Result<SessionState, StepFailure> {
    let path = state_path(l)?;
    let deadline = Instant::now() + APPEAR_TIMEOUT;
    loop {
        crate::interrupt::check("the session state")
            .map_err(|e| StepFailure::cancelled(e.to_string()))?;
        let state = SessionState::read(&path);
        if let Ok(s) = &state
            && s.is_ended() != active
        {
            l.record
                .attach_json("product/session-state.json", s.raw())?;
            if active {
                capture_persona(l, s);
            }
            return Ok(s.clone());
        }
        if Instant::now() >= deadline {
            let seen = state.map_or_else(|e| e.to_string(), |s| s.to_string());
            let want = if active {
                "an active session"
            } else {
                "mode ended"
            };
            return Err(StepFailure::errored(format!(
                "no {want} within {APPEAR_TIMEOUT:?}; last state: {seen}"
            )));
        }
        // The product writes the file atomically; a short bounded wait suffices.
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Keeps the persona the product wrote (`persona_file`) with the hash it reported, for
/// the bundle's `inputs.json`; the latest active session's wins (a resume rebuilds it).
fn capture_persona(l: &mut Case<'_>, state: &SessionState) {
    let hash = state.persona_hash();
    let seen = match state.raw().get("persona_file").and_then(Value::as_str) {
        Some(file) => crate::case::PersonaSeen::from_file(hash, Path::new(file)),
        None => crate::case::PersonaSeen {
            product_hash: hash.map(str::to_owned),
            text: None,
            text_missing: Some("the session state names no persona_file".to_owned()),
        },
    };
    l.record.facts.persona = Some(seen);
}

/// The `study-*` session exists and its main pane runs a live child.
pub(crate) fn live_pane(
    l: &mut Case<'_>,
    state: &SessionState,
) -> Result<(String, String), StepFailure> {
    let field = |f| {
        state
            .require(f)
            .map(str::to_owned)
            .map_err(StepFailure::from_error)
    };
    let (session, pane) = (
        field(StateField::MuxSession)?,
        field(StateField::MuxMainPane)?,
    );
    if !session.starts_with("study-") {
        return Err(StepFailure::errored(format!(
            "tmux session {session:?} does not start with study-"
        )));
    }
    let tmux = l.tmux()?;
    let deadline = Instant::now() + APPEAR_TIMEOUT;
    loop {
        crate::interrupt::check("the live main pane")
            .map_err(|e| StepFailure::cancelled(e.to_string()))?;
        let pid = tmux
            .run(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok());
        if tmux.has_session(&session) && pid.is_some_and(|p| !crate::procfs::children(p).is_empty())
        {
            return Ok((session, pane));
        }
        if Instant::now() >= deadline {
            return Err(StepFailure::errored(format!(
                "session {session} pane {pane} has no live child within {APPEAR_TIMEOUT:?} (pane pid {pid:?})"
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn attach(
    l: &mut Case<'_>,
    session: &str,
    pane: &str,
    next_turn: u32,
) -> Result<PaneDriver, StepFailure> {
    let markers = l
        .spec
        .markers()
        .ok_or_else(|| StepFailure::skipped(format!("{} has no screen markers", l.harness)))?;
    let proof = match &l.slots.stub {
        Some(_) => {
            let seed = l.seed;
            Proof::StubMarker {
                marker: Box::new(move |n, prompt| {
                    let words: Vec<&str> = prompt.split_whitespace().take(2).collect();
                    format!(
                        "MENTOR-REPLY {n} {}: {}",
                        studyloop_stubs::nonce(seed, u64::from(n)),
                        words.join(" ")
                    )
                }),
                next_turn,
            }
        }
        None => Proof::NewContent,
    };
    let tmux = l.tmux()?;
    let mut driver = PaneDriver::attach(
        tmux,
        session,
        pane,
        markers,
        l.spec.limits(l.budget.max_turns),
        proof,
    )
    .map_err(pane_failure)?
    .with_paste(l.spec.paste)
    .with_refusal(|text| {
        crate::harness_spec::login::said_by_harness(text)
            .map(|line| crate::harness_spec::login::printable(&line, 200))
    });
    driver.wait_ready().map_err(pane_failure)?;
    Ok(driver)
}

pub(crate) fn pane_failure(e: PaneError) -> StepFailure {
    match e {
        PaneError::TurnTimeout { .. } | PaneError::TurnCeiling { .. } => {
            StepFailure::budget(e.to_string())
        }
        other => StepFailure::errored(other.to_string()),
    }
}

/// Moves a driver's records, screens and raw stream into the lane's evidence.
pub(crate) fn stash_driver(l: &mut Case<'_>, driver: &PaneDriver, phase: &'static str) {
    for r in driver.records() {
        l.record.attach(
            format!("screens/{phase}-turn-{}.txt", r.turn),
            r.screen.clone(),
        );
        l.record.turns.push(PhaseTurn {
            phase,
            record: r.clone(),
        });
    }
    l.record.attach(
        format!("screens/{phase}-stream.log"),
        driver.stream().to_vec(),
    );
    // The same stream with its timing and the pane size, for a player (gzipped:
    // a 30-minute session is ~90 MB of redraws), and each turn's screen
    // rendered from it by a terminal emulator.
    l.record
        .attach(format!("screens/{phase}.cast.gz"), driver.cast_gz());
    for (r, screen) in driver.records().iter().zip(driver.rendered_screens()) {
        if let Some(screen) = screen {
            l.record.attach(
                format!("screens/{phase}-turn-{}.rendered.txt", r.turn),
                screen,
            );
        }
    }
}

/// Sends the harness's exit keys so it saves its session before `--end`.
pub(crate) fn exit_harness(l: &mut Case<'_>, mut driver: PaneDriver) -> Result<(), StepFailure> {
    driver.send_keys(l.spec.exit_keys).map_err(pane_failure)?;
    Ok(())
}

pub(crate) fn end(l: &mut Case<'_>, session: &str) -> Result<(), StepFailure> {
    cli(l, "study-end", &["study", "--end"])?;
    wait_state(l, false)?;
    let tmux = l.tmux()?;
    // When the harness exited first, the product's agent-exit path may still
    // be tearing the session down: allow it a bounded moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux.has_session(session) {
        if Instant::now() >= deadline {
            return Err(StepFailure::errored(format!(
                "tmux session {session} still exists 10 s after --end"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}
