//! `studyloop-uat signoff`: merges every shard's results and skip ledger (and what
//! bundles passed directly recorded), applies the strict runner, checks the bundles and
//! the graded cells' arbitrations against the pinned definition, and produces the
//! redacted summary, written atomically to the release directory on PASS only (a failed
//! sign-off is not a release record).

mod arbitration;
mod billing;
mod checks;
#[cfg(test)]
mod checks_tests;
mod claims;
mod error;
mod evidence;
mod pins;
pub mod rule;
mod run;
mod summary;

pub use error::SignoffError;
pub use pins::Pins;
pub use run::{CellLine, SignoffReport, assess, run};
