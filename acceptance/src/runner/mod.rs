//! The libtest-mimic glue shared by the acceptance runner
//! (`acceptance/tests/acceptance.rs`) and the UAT runner (`uat/tests/uat.rs`).
//!
//! A runner's `main` is one call: [`main`] with its [`Tier`] and a catalogue
//! function that builds every [`TrialSpec`] from the parsed selection. The glue
//! then, in this order: reads the gates; if the tier's gate is open, parses the
//! selection and, on any unknown value, prints the error and exits 2 before any
//! trial; reaps scratch worlds whose runner died unswept (`scratch::reap_orphans`,
//! not when only listing); builds every trial up front, sorted by name; decides each trial's skip
//! reason (closed gate, then the trial's typed [`Requirement`]s, whose unmet
//! `Display` is the reason); writes the skip ledger; runs; writes a results line
//! per finished trial (with its attempt, wall time and a failure's category);
//! rewrites `junit.xml` (`junit`); and returns libtest-mimic's `ExitCode` (never
//! `process::exit`, so `Drop` cleans scratch worlds).
//!
//! How a skip is shown, and why it differs by runner:
//! - Under plain `cargo test`, a skipped trial is an *ignorable* trial that
//!   returns `Completion::ignored_with(reason)` at once, so libtest-mimic prints
//!   `test probe::kiro ... ignored (kiro-cli not found on PATH …)` next to every
//!   trial. (A statically ignored trial would print no reason.)
//! - Under nextest (`NEXTEST=1`, set in both its list and run phases) a runtime
//!   ignore is reported as PASS, which would let a skip look like a pass. So
//!   there a skipped trial is statically ignored: nextest shows SKIP, and the
//!   reason is in the skip ledger and a stderr banner. If such a trial is forced
//!   to run (`--run-ignored`), it fails, naming the reason.
//! - A trial that decides at run time that it cannot run returns
//!   [`TrialReport::skipped`]: ignored-with-reason under `cargo test`, a failure
//!   naming the reason under nextest (for the same PASS reason); the skip ledger
//!   records it either way.
//!
//! - In real-auth mode a harness that is not logged in is found before the trials
//!   are listed (`login_preflight`: its authenticated probe, once per run), so all its
//!   trials are listed skips "not logged in: <h>: …; <fix>" under both runners.
//!
//! - In real-auth mode every harness trial also needs `harness:<h>` approved
//!   (`approval_gate`, through `crate::approval::decide`); an unapproved harness is a
//!   listed skip naming the entry that would approve it, and is never probed.
//!
//! Sharding (`partition`): `--partition hash:K/N|count:K/N|time:K/N`, `STUDYLOOP_ACC_PARTITION`
//! or nextest's own `--partition` deal the trials with nextest's meaning; each run
//! directory gets a `shard-<tier>.json` (its cells and its part of them), and only this
//! shard's skips are ledgered, so merged shards account for every cell once.
//!
//! This module runs trials; it does not define any (see `catalogue`, `probe_trials`).

mod approval_gate;
pub mod durations;
mod glue;
mod junit;
mod login_preflight;
pub mod partition;
pub mod rerun;
mod shard_record;
mod trial;

pub use crate::gate::{
    GATE_OFF_REASON, UAT_ACC_OFF_REASON, UAT_GATE_OFF_REASON, UAT_GATES_OFF_REASON,
};
pub use glue::{main, run_with, run_with_words};
pub use junit::{JUNIT_FILE, JunitError, render as render_junit, write as write_junit};
pub use trial::{Requirement, TrialContext, TrialReport, TrialSpec, Unmet, Verdict};
