//! `web-acp::<h>::logged-out` and `cli-tmux::<h>::logged-out`: a harness whose model
//! endpoint refuses its key ends every lane as the named skip "not logged in: <h>: …;
//! <fix>", never a lane error (issue 16 item 4). The cell's stub answers every model
//! request 401 with the vendor's auth error body (`STUDYLOOP_ACC_STUB_FAULT=401`), and
//! the real pinned harness meets it:
//!
//! - the lane itself (`web-acp::<h>` over the real ACP adapter, or `cli-tmux::<h>` in
//!   tmux) runs in-process with the fault: its authenticated probe
//!   (`setup::model_path`) must end it as the named skip;
//! - a case without that probe must still end as the named skip, by the case engine's
//!   rule (`case::auth`), so a login lost after the probe, or met first by the adapter,
//!   is a skip too: over ACP (provision, `studyloop web`, session start, the persona
//!   turn: the adapter's error names the refused key) and in tmux (`study`, turn 1: the
//!   TUI shows the 401 only on its screen, the turn times out, and the probe asked after
//!   the failure names the login).
//!
//! Each trial passes only when every inner case was skipped with the harness's login
//! fix; anything else (a pass, an error) fails it, naming what it was.

use crate::case::{Case, RunDirBundle, StepFailure, Steps};
use crate::evidence::Surface;
use crate::harness_spec::{install_hint, login_hint};
use crate::lane::cli_tmux::{pane_failure, start_study, stash_driver};
use crate::lane::setup::{make_scratch, provision_harness, resolve_binary};
use crate::lane::web_acp::{self, Variant, open_session, start_server};
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec, Verdict};
use crate::selection::{HarnessName, Selection};

/// A case's steps.
type CaseSteps = fn(&mut Case<'_>) -> Result<(), StepFailure>;

/// The fault line: a refused key.
const FAULT: &str = "401";

/// Which lane a trial refuses the login of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `cli-tmux::<h>`.
    CliTmux,
    /// `web-acp::<h>` (socket).
    WebAcp,
}

/// The trial name.
#[must_use]
pub(crate) fn trial_name(harness: HarnessName, kind: Kind) -> String {
    match kind {
        Kind::CliTmux => format!("{}::logged-out", super::cli_tmux::trial_name(harness)),
        Kind::WebAcp => format!(
            "{}::logged-out",
            web_acp::trial_name(harness, Variant::Socket)
        ),
    }
}

/// The trial: gated, needs the harness (its ACP adapter too, for the web lane) and a
/// stub mentor (the stub is what refuses the key).
#[must_use]
pub fn trial(harness: HarnessName, kind: Kind, selection: &Selection) -> TrialSpec {
    let mut spec = TrialSpec::gated(trial_name(harness, kind), move |ctx| {
        run(ctx, harness, kind)
    })
    .requires(Requirement::HarnessSelected(harness))
    .requires(Requirement::BinaryOnScratchPath {
        binary: harness.binary(),
        fix: install_hint(harness),
    })
    .requires(Requirement::Checked {
        what: "a stub mentor (the stub refuses the key)".into(),
        unmet: (!selection.auth_mode.stub_mentor()).then(|| {
            "the logged-out drill needs the stub provider to refuse the key: run it with STUDYLOOP_ACC_AUTH_MODE=stub-provider (the default) or local-model".to_owned()
        }),
    });
    if let (Kind::WebAcp, Some(acp)) = (kind, crate::harness_spec::spec(harness).acp) {
        spec = spec.requires(Requirement::BinaryOnScratchPath {
            binary: acp.argv[0],
            fix: install_hint(harness),
        });
    }
    spec
}

fn run(ctx: &TrialContext, harness: HarnessName, kind: Kind) -> TrialReport {
    let mut refused = ctx.clone();
    refused.selection.stub_fault = Some(FAULT.to_owned());
    let mut outcomes = vec![match kind {
        Kind::CliTmux => ("the cli-tmux lane", super::cli_tmux::run(&refused, harness)),
        Kind::WebAcp => (
            "the web-acp lane",
            web_acp::run(&refused, harness, Variant::Socket),
        ),
    }];
    let (what, surface, steps): (_, _, CaseSteps) = match kind {
        Kind::WebAcp => (
            "an ACP case without the up-front probe",
            Surface::WebAcp,
            acp_without_probe,
        ),
        Kind::CliTmux => (
            "a tmux case without the up-front probe",
            Surface::CliTmux,
            tmux_without_probe,
        ),
    };
    let finished = Case::new(&refused, harness, surface).run(&RunDirBundle::new(&refused), steps);
    // Where the key must have been met: the engine turns any failure into the login
    // skip once the probe after it is refused, so a TUI that never started (a
    // harness upgrade that breaks its ready marker, found by `just drift`) would
    // pass as "logged out" unless the failure happened past the set-up.
    let met_at = finished.failed_step.clone();
    let mut report = finished.report();
    if let Some(problem) = refused_at_the_wrong_step(kind, met_at.as_deref()) {
        report = TrialReport::failed(format!("{what}: {problem}"));
    }
    outcomes.push((what, report));
    let fix = login_hint(harness);
    let want = format!("not logged in: {harness}: ");
    let mut seen = Vec::new();
    let mut problems = Vec::new();
    for (what, report) in outcomes {
        let bundle = report
            .bundle
            .as_ref()
            .map(|b| format!(" (evidence: {})", b.display()))
            .unwrap_or_default();
        match &report.verdict {
            Verdict::Skipped(reason) if reason.contains(&want) && reason.ends_with(fix) => {
                seen.push(format!("{what}: skipped: {reason}"));
            }
            other => problems.push(format!(
                "{what} should end as the skip \"{want}…; {fix}\", but ended {other:?}{bundle}"
            )),
        }
    }
    eprintln!("{}: {}", ctx.name, seen.join("; "));
    if problems.is_empty() {
        TrialReport::passed()
    } else {
        TrialReport::failed(problems.join("; "))
    }
}

/// The tmux case's turn: where its TUI meets the refused key.
const TMUX_TURN: &str = "turn 1";

/// The steps before a case without the probe can meet the refused key.
const SET_UP: [&str; 3] = [
    "scratch world",
    "harness binary and version",
    "provision harness (no probe)",
];

/// Why the case without the probe did not meet the refused key where it must:
/// in tmux at turn 1 (the TUI started and took the turn), over ACP at any step
/// past the set-up (the adapter meets it at initialize, session/new or the
/// persona turn, by harness). `None` when it did, or when nothing failed.
fn refused_at_the_wrong_step(kind: Kind, failed: Option<&str>) -> Option<String> {
    let failed = failed?;
    let ok = match kind {
        Kind::CliTmux => failed == TMUX_TURN,
        Kind::WebAcp => !SET_UP.contains(&failed),
    };
    (!ok).then(|| {
        let want = match kind {
            Kind::CliTmux => "at `turn 1` (the TUI takes the turn and meets the refused key)",
            Kind::WebAcp => "past the set-up steps (the adapter meets the refused key)",
        };
        format!(
            "the case failed at step `{failed}`, so the refused key was never met {want}; the login skip there hides a lane that does not start"
        )
    })
}

/// The cli-tmux lane's first steps without its authenticated probe: the TUI meets the
/// refused key on turn 1 and shows it only on its screen, so the turn times out; the
/// engine's probe after the failure names the login.
fn tmux_without_probe(lane: &mut Case<'_>) -> Result<(), StepFailure> {
    lane.step("scratch world", make_scratch)?;
    lane.step("harness binary and version", resolve_binary)?;
    lane.step("provision harness (no probe)", provision_harness)?;
    let title = format!("Logged out: {}", lane.harness);
    let (_, _, mut driver) = start_study(lane, &title)?;
    let sent = lane.step(TMUX_TURN, |_| {
        driver
            .send_turn("What is a borrow?")
            .map(drop)
            .map_err(pane_failure)
    });
    stash_driver(lane, &driver, "logged-out");
    sent
}

/// The web-acp lane's first steps without its authenticated probe: the adapter is the
/// first to meet the refused key, on the persona turn.
fn acp_without_probe(case: &mut Case<'_>) -> Result<(), StepFailure> {
    case.step("scratch world", make_scratch)?;
    case.step("harness binary and version", resolve_binary)?;
    case.step("provision harness (no probe)", provision_harness)?;
    case.step("studyloop web", start_server)?;
    open_session(case)?.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_must_be_met_past_the_set_up_not_at_a_lane_that_never_started() {
        // As recorded by the pinned codex (2026-12-02): tmux at turn 1, ACP at the
        // persona turn.
        assert_eq!(
            refused_at_the_wrong_step(Kind::CliTmux, Some("turn 1")),
            None
        );
        assert_eq!(
            refused_at_the_wrong_step(Kind::WebAcp, Some("persona as the first prompt")),
            None
        );
        assert_eq!(refused_at_the_wrong_step(Kind::CliTmux, None), None);
        // The planted `just drift` candidate whose TUI never starts: tmux failed at
        // `harness ready` and the login skip passed the drill.
        let why = refused_at_the_wrong_step(Kind::CliTmux, Some("harness ready")).unwrap();
        assert!(
            why.contains("`harness ready`") && why.contains("`turn 1`"),
            "{why}"
        );
        for set_up in SET_UP {
            assert!(
                refused_at_the_wrong_step(Kind::WebAcp, Some(set_up)).is_some(),
                "{set_up}"
            );
        }
    }
}
