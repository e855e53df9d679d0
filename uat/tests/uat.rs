//! The UAT runner (libtest-mimic, `harness = false`) on the acceptance runner glue.
//!
//! Every trial needs `STUDYLOOP_ACC=1` and `STUDYLOOP_UAT=1` (`just testuat` sets
//! both); otherwise each is reported ignored with a reason naming the missing
//! variable(s) and docs/sign-off-a-release.md#uat-tier. The cells are `studyloop_uat::journey`'s; their
//! bundles go to the durable UAT root and `studyloop-uat signoff <run dir>` gives the
//! verdict.

use std::process::ExitCode;

use studyloop_acceptance::{evidence::Tier, runner};

fn main() -> ExitCode {
    runner::main(Tier::Uat, studyloop_uat::journey::catalogue)
}
