//! How a step that did not succeed ends a case: the manifest outcome and a
//! one-line reason naming the step.

use crate::evidence::Outcome;

/// A step that did not succeed: how the case ends and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepFailure {
    /// The manifest outcome (`errored`, `budget-exhausted`, `skipped`, …).
    pub outcome: Outcome,
    /// The one-line reason, naming the step.
    pub message: String,
}

impl StepFailure {
    /// An errored step.
    pub fn errored(message: impl Into<String>) -> Self {
        Self::with(Outcome::Errored, message)
    }

    /// A case that ran out of turns or time.
    pub fn budget(message: impl Into<String>) -> Self {
        Self::with(Outcome::BudgetExhausted, message)
    }

    /// A case stopped by an interrupt (SIGINT/SIGTERM to the runner).
    pub fn cancelled(message: impl Into<String>) -> Self {
        Self::with(Outcome::Cancelled, message)
    }

    /// A case that cannot run here for a nameable reason.
    pub fn skipped(message: impl Into<String>) -> Self {
        Self::with(Outcome::Skipped, message)
    }

    /// Any displayable error as an errored step.
    pub fn from_error(e: impl std::fmt::Display) -> Self {
        Self::errored(e.to_string())
    }

    fn with(outcome: Outcome, message: impl Into<String>) -> Self {
        Self {
            outcome,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StepFailure {}
