//! `journey::drill` (UNGRADED): the module contract's "Adding a module" walk against a
//! live mentor. `studyloop web` in a scratch world starts an ACP session with a REAL
//! pinned harness (the graded journey's choice: the first of codex, claude, opencode, pi
//! selected and installed); the persona goes first; then, as a learner would,
//! `studyloop module new`, `module add`, and `studyloop drill check` behind a real
//! terminal where `yes` is typed at the consent prompt. The check runs contained, the
//! CLI must say `Mentor told.`, and the stub provider's request log must show the one
//! `practice_check` block bounded, labelled and prefixed. The steps are the acceptance
//! lane's (`studyloop_acceptance::lane::drill::over_acp`); this cell puts them in the
//! UAT layout and the sign-off's results. Nothing here is graded: a drill result is
//! data for the mentor, never a learning record.

use studyloop_acceptance::case::{Case, Destination, Finished};
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::lane::drill;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::selection::HarnessName;

/// The label every drill-cell artefact carries.
pub const LABEL: &str = "ungraded: a drill's check result delivered to a live mentor (module new, add, drill check with typed consent; the stub provider's log proves the practice_check block)";

/// Runs the cell with `harness` as a case into `dest`; how it ended (finish included).
pub fn run(ctx: &TrialContext, harness: HarnessName, dest: &dyn Destination) -> Finished {
    let mut case = Case::new(ctx, harness, Surface::Journey);
    case.record.notes.push(LABEL.to_owned());
    case.record.notes.push(format!(
        "{harness} over web ACP; the drill: my-drills/getting-started/ready-01"
    ));
    case.run(dest, drill::over_acp)
}
