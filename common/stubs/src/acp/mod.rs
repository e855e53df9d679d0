//! `studyloop-stub-acp`, a scripted ACP agent used in place of a real harness
//! adapter in hermetic tests. It is a test double: it never calls a model, and
//! says so in its `agentInfo` and `--help`.
//!
//! Drivers use [`knobs`] for the `STUB_ACP_*` variable names; the binary runs
//! [`agent::run`] on stdin/stdout.

pub mod agent;
pub mod knobs;

pub use agent::{CRASH_EXIT_CODE, run};
pub use knobs::{KNOBS, KnobError, Knobs};
