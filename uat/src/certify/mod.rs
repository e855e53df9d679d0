//! `studyloop-uat certify HARNESS --real-auth`: real-auth certification, run by a
//! person with their own vendor login (never a recipe, never CI: `run`). Its
//! preflight (`studyloop-uat preflight HARNESS`) runs before anything launches: the
//! harness name against the accepted set, the approvals (`STUDYLOOP_ACC_APPROVE`,
//! through the one policy), the source tree (a certification proves one commit, so a
//! dirty tree is refused naming its paths), the harness's credentials
//! (`acceptance::harness_spec::credentials`) and the keys of every approved seat of the
//! council the sign-off grades real-auth runs with. Then the harness's acceptance
//! cells and UAT journeys with `STUDYLOOP_ACC_REAL_AUTH=1`, the sign-off, and the
//! receipts (which refuse a real-auth bundle of a dirty or unknown tree).

mod preflight;
mod run;

pub use preflight::{EXIT_SKIPPED, PreflightError, Ready, preflight};
pub use run::{Refusal, refusal, report_preflight, run};
