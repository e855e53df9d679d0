//! The case engine every live trial runs on: cli-tmux and web lanes, probes
//! and UAT journeys (a journey is a case plus a grading step).
//!
//! The shape (after terraform-plugin-testing's `TestCase`/`TestStep` and
//! nextest's runner, written for this project):
//!
//! 1. [`Case::new`] for a harness and surface; the selection gives the learner
//!    actor and the [`TurnBudget`](crate::selection::TurnBudget).
//! 2. [`Case::run`] installs the Ctrl-C handler and runs the steps: each
//!    [`Steps::step`] is named, timed and recorded ([`StepRecord`]); a check
//!    step ([`Steps::verify`] with [`Checks`]) runs every check and reports
//!    every failure, not only the first.
//! 3. Resources go into typed [`Slots`] (scratch world, stub provider,
//!    product server, tmux server, ACP session, browser), watched for Ctrl-C
//!    and released in one fixed reverse order.
//! 4. [`converse`] is the one conversation over any transport, under one
//!    budget.
//! 5. A case that failed because its harness is not logged in ends as a named skip
//!    (`auth`: the failure's words, else the harness's own probe asked again).
//! 6. The finish step always runs: release, the cleanup proof (no process, no
//!    tmux server, no scratch tree) and the bundle write to a
//!    [`Destination`] ([`RunDirBundle`] here, the durable UAT root in `uat`).
//!
//! What it is not: the steps of any lane or journey (`crate::lane`,
//! `crate::lane::web_acp`, `crate::probe_trials`, the uat crate's `journey`).

mod auth;
pub mod cassette;
#[cfg(test)]
mod cassette_tests;
mod converse;
mod failure;
mod faithful;
mod finish;
mod inputs;
mod live;
mod record;
mod slots;
mod step;

pub use auth::PROBE_STEP;
pub use converse::{Conversation, Reply, converse};
pub use failure::StepFailure;
pub use faithful::Transport;
pub use finish::{BundleError, Destination, Finished, RunDirBundle};
pub use inputs::{PersonaSeen, PinnedInput};
pub use live::Case;
pub use record::{CaseRecord, CheckRecord, Facts, PhaseTurn, StepRecord};
pub use slots::{Released, Slots, Unserialisable};
pub use step::{Checks, Steps};
