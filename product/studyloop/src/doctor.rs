//! `studyloop doctor`: read-only health checks: tmux ≥ 3.1, each harness
//! binary and its version (with a timeout), config parse and unknown keys,
//! the history DB, the scope gate, the state file, and whether a session's
//! harness would run in a PID namespace of its own, and each prerequisite
//! (docker, kind, kubectl) an installed module declares. Exit 0 when healthy,
//! 1 when something needs fixing, 2 when a core check fails.
//!
//! Nothing here writes: the DB is opened read-only and never migrated, and no
//! tmux server is started (`tmux -V` only). The one writing mode is
//! `doctor --fix` ([`fix`]), the recovery command damaged-state errors name.

mod check;
mod containment;
mod fix;
mod harnesses;
mod prerequisites;
mod report;

pub use fix::{FixError, fix};
pub use report::{render, run};
