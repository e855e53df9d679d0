//! What an acceptance or UAT run was asked to do, parsed once from the caller's
//! environment into typed values.
//!
//! Rules (the README's env table says the same):
//! - `STUDYLOOP_ACC` and `STUDYLOOP_UAT` are gates: exactly `1`, untrimmed, opens
//!   one; any other value (including ` 1`) leaves it closed. A closed gate is not
//!   an error. They are read by `crate::gate::Gates`, in the file named for the gate.
//! - `STUDYLOOP_ACC_HARNESS` is a comma list: items are trimmed, empty items are
//!   dropped, a repeated name keeps its first position, and empty or unset means
//!   every harness in [`HARNESS_ORDER`]. Names are lowercase and case-sensitive.
//! - `STUDYLOOP_ACC_ACTOR` is trimmed; empty or unset means `scripted`.
//! - `STUDYLOOP_ACC_AUTH_MODE` is trimmed; empty or unset means `stub-provider`;
//!   it accepts `stub-provider` or `scrubbed`.
//! - `STUDYLOOP_ACC_REAL_AUTH` is trimmed; `1` forces real-auth mode whatever
//!   `STUDYLOOP_ACC_AUTH_MODE` says; empty or unset is off; anything else is an
//!   error, so a typo never falls back to a scrubbed run silently.
//!
//! - `STUDYLOOP_ACC_APPROVE` is the operator's standing approvals, parsed by
//!   [`crate::approval::Approvals`] (never trimmed; every bad entry an error).
//! - `STUDYLOOP_ACC_MAX_TURNS` and `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS` are trimmed
//!   whole numbers in a range ([`budget`]); empty or unset means 3 turns and no
//!   conversation-wide token cap.
//! - `STUDYLOOP_ACC_REPEAT` is a trimmed whole number from 1 to 20 (attempts per
//!   trial); empty or unset means 1.
//! - `STUDYLOOP_ACC_STUB_FAULT` is one line the stub provider's own fault-file parser
//!   accepts (`401`, `429`, `500`, `stall <ms>`, `truncate <n>`); empty or unset is none.
//!
//! Unknown values are errors naming the value, the accepted set and the fix. This
//! module only parses; the runner decides that selection errors matter only once
//! the gate is open.

pub mod approval;
pub mod budget;
mod names;
mod parse;
mod vars;

pub use budget::{BudgetRangeError, BudgetSource, BudgetVarError, TurnBudget};
pub use names::{AuthMode, HARNESS_ORDER, HarnessName, Maturity, RELEASE_HARNESSES};
pub use parse::{REPEAT_RANGE, Selection, SelectionError, SelectionErrors};
pub use studyloop_actors::EnvVarDoc;
pub use vars::{
    ACC, ACC_ACTOR, ACC_APPROVE, ACC_AUTH_MODE, ACC_HARNESS, ACC_MAX_OUTPUT_TOKENS, ACC_MAX_TURNS,
    ACC_PARTITION, ACC_REAL_AUTH, ACC_REPEAT, ACC_RERUN_FAILED, ACC_RESULTS_DIR, ACC_STUB_FAULT,
    ENV_VARS, UAT, UAT_EVIDENCE_ROOT,
};

#[cfg(test)]
mod tests;
