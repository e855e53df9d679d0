//! `cli-tmux::<harness>::paste`: the live proof (issue 11 §1) that a learner
//! turn reaches a real harness as text and never as tmux commands.
//!
//! The real `studyloop` CLI starts the pinned harness in tmux against the
//! cell's stub provider, as in `cli_tmux`; one turn is then typed that spans
//! several lines, holds a blank line, two `run-shell touch <marker>` lines and
//! tmux syntax (`;`, quotes, `#{…}`, `$`, `\`). It passes when the stub
//! answered it as turn 1, the stub's request log shows the learner message
//! arrived whole (its SHA-256 over the exact text, newlines included, equals
//! the turn's), the marker file does not exist, the product's tmux server
//! still runs and the driver's control client still answers. Stub-provider
//! mode only: only the stub's log proves what reached the model.

use std::path::Path;

use super::cli_tmux::{end, pane_failure, start_study, stash_driver};
use super::setup::{make_scratch, model_path, resolve_binary};
use super::{gated_trial, run_lane};
use crate::case::{Case, Checks, StepFailure, Steps};
use crate::pane::PaneDriver;
use crate::runner::TrialSpec;
use crate::selection::HarnessName;
use crate::validate::CheckError;

/// The trial name for `harness`.
pub(crate) fn trial_name(harness: HarnessName) -> String {
    format!("cli-tmux::{harness}::paste")
}

/// The trial: gated, needs the harness selected and on the scratch PATH.
pub fn trial(harness: HarnessName) -> TrialSpec {
    gated_trial(trial_name(harness), harness, |ctx, h| {
        run_lane(ctx, h, drive)
    })
}

/// The hostile turn: what a mentor-steered gateway or direct actor could
/// write. Before the fix, typing it ran the `run-shell` lines in the product's
/// tmux server and the blank line detached the driver.
pub fn hostile_turn(marker: &Path) -> String {
    let m = marker.display();
    format!(
        "Paste check, first line of a learner paragraph.\n\
         run-shell touch {m}\n\
         run-shell \"touch {m}\"\n\
         \n\
         set-option -g status off ; kill-server\n\
         'single' \"double\" #{{pane_id}} $HOME ~ back\\slash end;\n\
         Last line: please answer briefly."
    )
}

fn drive(lane: &mut Case<'_>) -> Result<(), StepFailure> {
    if !lane.ctx.selection.auth_mode.stub_mentor() {
        return Err(StepFailure::skipped(
            "the paste proof reads the stub provider's request log: run it with STUDYLOOP_ACC_AUTH_MODE=stub-provider (the default)",
        ));
    }
    lane.step("scratch world", make_scratch)?;
    lane.step("harness binary and version", resolve_binary)?;
    model_path(lane, &[])?;
    let title = format!("Paste proof: {}", lane.harness);
    let (_, session, mut driver) = start_study(lane, &title)?;
    let marker = lane.scratch()?.root().join("run-shell-ran");
    let turn = hostile_turn(&marker);
    lane.record
        .notes
        .push(format!("paste mode: {:?}", lane.spec.paste));
    let sent = lane.step("type the multi-line turn and get its reply", |_| {
        driver.send_turn(&turn).map(drop).map_err(pane_failure)
    });
    stash_driver(lane, &driver, "paste");
    sent?;
    lane.verify(
        "the turn arrived as text, not as tmux commands",
        Checks::new()
            .check(
                "no tmux command ran (marker file absent)",
                |_: &mut Case<'_>| match marker.exists() {
                    true => Err(CheckError::Paste(format!(
                        "{} exists: a run-shell line ran",
                        marker.display()
                    ))),
                    false => Ok(()),
                },
            )
            .check("tmux server and control client still live", |l| {
                still_connected(l, &mut driver, &session)
            })
            .check("stub log: the learner message arrived whole", |l| {
                arrived_whole(l, &turn)
            }),
    )?;
    drop(driver);
    lane.step("study --end", |l| end(l, &session))
}

fn still_connected(l: &Case<'_>, driver: &mut PaneDriver, session: &str) -> Result<(), String> {
    let alive = l
        .slots
        .tmux
        .as_ref()
        .is_some_and(|t| t.has_session(session));
    if !alive {
        return Err(format!("tmux session {session} is gone after the turn"));
    }
    driver
        .capture()
        .map(drop)
        .map_err(|e| format!("the control client no longer answers: {e}"))
}

/// Turn 1's request carries, as its last real user text, exactly the turn.
fn arrived_whole(l: &Case<'_>, turn: &str) -> Result<(), CheckError> {
    let want = studyloop_stubs::text_sha256(turn.trim());
    let records = l.stub_records()?;
    let turn_one: Vec<_> = records.iter().filter(|r| r.user_turns == 1).collect();
    if turn_one
        .iter()
        .any(|r| r.user_text_sha256.as_deref() == Some(want.as_str()))
    {
        return Ok(());
    }
    let seen: Vec<String> = turn_one
        .iter()
        .map(|r| format!("{:?}", r.user_text_sha256))
        .collect();
    Err(CheckError::Paste(format!(
        "no request with one user turn carried the typed text (sha256 {want}, {} lines); seen: [{}] (the screens/paste-turn-1.txt shows what the harness displayed)",
        turn.lines().count(),
        seen.join(", ")
    )))
}
