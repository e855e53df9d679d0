//! The common gate and entry of the cli-tmux lanes: a trial that needs its
//! harness selected and on the scratch PATH, run as a case into the run dir.

use crate::case::{Case, RunDirBundle, StepFailure};
use crate::evidence::Surface;
use crate::harness_spec::install_hint;
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::HarnessName;

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

/// Runs `steps` as a cli-tmux case for `harness`, its bundle in the run dir.
pub(crate) fn run_lane(
    ctx: &TrialContext,
    harness: HarnessName,
    steps: fn(&mut Case<'_>) -> Result<(), StepFailure>,
) -> TrialReport {
    run_lane_as(ctx, harness, Surface::CliTmux, steps)
}

/// [`run_lane`] recorded under another surface (the `mcp::` lane).
pub(crate) fn run_lane_as(
    ctx: &TrialContext,
    harness: HarnessName,
    surface: Surface,
    steps: fn(&mut Case<'_>) -> Result<(), StepFailure>,
) -> TrialReport {
    Case::new(ctx, harness, surface)
        .run(&RunDirBundle::new(ctx), steps)
        .report()
}
