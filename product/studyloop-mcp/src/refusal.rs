//! The MCP door's own refusals, each built by the product's mapping: an argument
//! the tool refuses is the plan layer's `invalid:` ([`PlanError::Invalid`]), a file
//! or task that failed its `plan_error:` ([`PlanError::Storage`]), so their code,
//! message and `details.plan_code` are what the CLI and web send for the same words.
//! A leaf: `tools`, `session_tools` and `server` all use it.

use studyloop::envelope::Failure;
use studyloop::plans::PlanError;

/// An `invalid:` refusal (`invalid_input`).
pub(crate) fn invalid(msg: impl std::fmt::Display) -> Failure {
    PlanError::Invalid(msg.to_string()).failure()
}

/// A `plan_error:` refusal (`internal`): what failed, named in `msg`.
pub(crate) fn storage(msg: impl std::fmt::Display) -> Failure {
    PlanError::Storage(msg.to_string()).failure()
}
