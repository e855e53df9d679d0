//! The acceptance runner (libtest-mimic, `harness = false`).
//!
//! Every trial is opt-in: without `STUDYLOOP_ACC=1` each one is reported
//! ignored with a reason naming that variable. See `runner` for how skips are
//! shown under `cargo test` and nextest, and docs/run-the-matrix.md#acceptance-tier.

use std::process::ExitCode;

use studyloop_acceptance::{catalogue, evidence::Tier, runner};

fn main() -> ExitCode {
    runner::main(Tier::Acceptance, catalogue::acceptance)
}
