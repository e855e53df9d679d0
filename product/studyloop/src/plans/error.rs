//! Plan refusals. Each variant's message starts with the refusal prefix the
//! MCP tools' text shows (`not_found:`, `invalid_id:`, …), maps to one HTTP
//! status for the web door and to one envelope failure ([`PlanError::failure`])
//! that all three doors send, so they refuse alike.

use std::path::PathBuf;

/// Why a plan operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No document with that id.
    #[error("not_found: no study plan `{id}`; `studyloop plan list` shows the plans")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The id is not a valid plan id.
    #[error(
        "invalid_id: `{value}` is not a plan id; use lowercase letters, digits and `-`, starting with a letter or digit, at most 64 characters (e.g. `sql-windows`)"
    )]
    InvalidId {
        /// The value given.
        value: String,
    },
    /// A plan with that id exists already.
    #[error(
        "conflict: a study plan `{id}` already exists; pick another `plan_id` or update that plan"
    )]
    Conflict {
        /// The id.
        id: String,
    },
    /// A change named a revision the plan is no longer at (`if_revision`).
    #[error(
        "stale_revision: plan `{id}` is at revision {current}, not {given}; it changed since you read it: read it again, redo the change on what it holds now, and send that revision"
    )]
    StaleRevision {
        /// The plan.
        id: String,
        /// The revision the request named.
        given: String,
        /// The revision the plan is at.
        current: String,
    },
    /// A request id already used for a different request.
    #[error(
        "conflict: request_id `{request_id}` was already used for a different request ({command}); send a new request_id for a new create, and the same one only to retry the same create"
    )]
    RequestReused {
        /// The id.
        request_id: String,
        /// What it was used for.
        command: String,
    },
    /// A retried create whose plan was deleted since.
    #[error(
        "conflict: request_id `{request_id}` created plan `{id}`, which was deleted since; send a new request_id to create it again"
    )]
    RequestDone {
        /// The id.
        request_id: String,
        /// The plan it created.
        id: String,
    },
    /// A bad argument.
    #[error("invalid: {0}")]
    Invalid(String),
    /// Activation refused: readiness blockers remain.
    #[error("not_ready: the plan cannot be active yet : {}", blockers.join("; "))]
    NotReady {
        /// What must be fixed.
        blockers: Vec<String>,
        /// What would help.
        nudges: Vec<String>,
    },
    /// A milestone index out of range.
    #[error(
        "invalid_milestone: index {index} is out of range; the plan has {total} milestones (0-based, 0..{total})"
    )]
    InvalidMilestone {
        /// The index given.
        index: i64,
        /// How many milestones there are.
        total: usize,
    },
    /// A document that does not parse (never overwritten).
    #[error("plan_error: {}:{line}: {message}; fix the document by hand (it is not overwritten)", path.display())]
    Malformed {
        /// The document.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file system or the index failed.
    #[error("plan_error: {0}")]
    Storage(String),
    /// No memory scope is configured (the shared scope gate).
    #[error("{0}")]
    Scope(String),
}

impl PlanError {
    /// The refusal code (the prefix without the colon).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "not_found",
            Self::InvalidId { .. } => "invalid_id",
            Self::Conflict { .. } | Self::RequestReused { .. } | Self::RequestDone { .. } => {
                "conflict"
            }
            Self::StaleRevision { .. } => "stale_revision",
            Self::Invalid(_) => "invalid",
            Self::NotReady { .. } => "not_ready",
            Self::InvalidMilestone { .. } => "invalid_milestone",
            Self::Malformed { .. } | Self::Storage(_) => "plan_error",
            Self::Scope(_) => "scope_unconfigured",
        }
    }

    /// The HTTP status of the web door.
    #[must_use]
    pub fn http_status(&self) -> u16 {
        match self {
            Self::NotFound { .. } => 404,
            Self::InvalidId { .. } | Self::Invalid(_) | Self::InvalidMilestone { .. } => 400,
            Self::Conflict { .. }
            | Self::StaleRevision { .. }
            | Self::RequestReused { .. }
            | Self::RequestDone { .. } => 409,
            Self::NotReady { .. } => 422,
            Self::Malformed { .. } | Self::Storage(_) => 500,
            Self::Scope(_) => 503,
        }
    }

    /// The envelope's failure for this refusal, the same through every door (web,
    /// CLI `--json`, MCP `structuredContent`): the closed-set class a script matches on, with the plan's own
    /// refusal word in `details.plan_code` (the MCP door's word).
    #[must_use]
    pub fn failure(&self) -> crate::envelope::Failure {
        use crate::envelope::{Code, Failure};
        use serde_json::json;
        let (code, details) = match self {
            Self::NotReady { blockers, nudges } => (
                Code::NotReady,
                json!({"ready": false, "blockers": blockers, "nudges": nudges}),
            ),
            Self::Scope(_) => (
                Code::ScopeUnconfigured,
                json!({"fix": crate::scope::UNCONFIGURED_FIX}),
            ),
            Self::NotFound { .. } => (Code::NotFound, json!({"plan_code": self.code()})),
            Self::Conflict { .. } | Self::RequestReused { .. } | Self::RequestDone { .. } => {
                (Code::Conflict, json!({"plan_code": self.code()}))
            }
            // The current revision in `details`, so a client can re-read and redo.
            Self::StaleRevision { current, .. } => (
                Code::Conflict,
                json!({"plan_code": self.code(), "current_revision": current}),
            ),
            Self::InvalidId { .. } | Self::Invalid(_) | Self::InvalidMilestone { .. } => {
                (Code::InvalidInput, json!({"plan_code": self.code()}))
            }
            Self::Malformed { .. } | Self::Storage(_) => {
                (Code::Internal, json!({"plan_code": self.code()}))
            }
        };
        Failure::new(code, self.to_string()).with_details(details)
    }

    /// An I/O failure on `path`.
    pub(crate) fn io(action: &str, path: &std::path::Path, e: &std::io::Error) -> Self {
        Self::Storage(format!("cannot {action} {}: {e}", path.display()))
    }
}
