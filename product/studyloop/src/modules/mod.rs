//! Modules and drills (product phase 4, the module contract v1 in
//! docs/modules.md): a module is a directory of data (a manifest, practice
//! decks and the scripts they name) that StudyLoop checks against MC001–MC017,
//! installs as an immutable content-addressed snapshot, and runs one drill
//! phase at a time. Core never imports or executes module code as a library.
//!
//! - [`tree`]: the bounded, FIFO-safe walk every reader goes through;
//! - [`manifest`], [`deck`]: the two data formats, validated field by field;
//! - [`check`]: the seventeen rules over one walk;
//! - [`scaffold`]: `module new`;
//! - [`digest`], [`store`], [`git`]: snapshots, the lockfile and add/list/remove;
//! - [`drill`], [`runner`], [`block`], [`deliver`]: one drill phase with typed
//!   consent, run without a shell in a scratch attempt, its result handed to
//!   the mentor as a bounded `practice_check` block; [`usage`], the
//!   attempt's disk bound;
//! - [`labs`]: the web console's read-only catalogue of installed drills;
//! - [`command`], [`drill_command`]: `studyloop module …` and `studyloop drill`.

pub(crate) mod argv;
pub(crate) mod block;
pub(crate) mod check;
pub(crate) mod command;
pub(crate) mod deck;
pub(crate) mod deliver;
pub(crate) mod digest;
pub(crate) mod drill;
pub(crate) mod drill_command;
pub(crate) mod error;
pub(crate) mod finding;
pub(crate) mod git;
pub(crate) mod labs;
pub(crate) mod manifest;
pub(crate) mod runner;
#[expect(
    unsafe_code,
    reason = "containment must act between fork and exec (Command::pre_exec is unsafe by nature); docs/drills.md#containment-of-a-phase"
)]
pub(crate) mod sandbox;
pub(crate) mod scaffold;
pub(crate) mod store;
pub(crate) mod tree;
pub(crate) mod usage;

pub use command::ModuleCommand;
pub use drill_command::DrillArgs;
pub use error::ModuleError;
pub use sandbox::harness::{CONTAIN_COMMAND, contained_argv, dispatch as contain_dispatch};

#[cfg(test)]
mod bomb_tests;
#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod contain_tests;
#[cfg(test)]
mod learner_tests;
#[cfg(test)]
mod net_tests;
#[cfg(test)]
mod runner_tests;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod view_tests;
