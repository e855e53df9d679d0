//! [`AdapterError`]: what went wrong detecting a harness or placing its persona. A leaf,
//! so the table and the per-harness placement files (kiro, trust) all name it without
//! importing each other.

use std::path::{Path, PathBuf};

use crate::env;

/// An adapter problem.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// Not one of the six.
    #[error("unknown agent `{0}`; use one of: codex, claude, kiro, pi, opencode, grok")]
    Unknown(String),
    /// The harness binary is not on PATH.
    #[error(
        "{label} binary `{binary}` not found on PATH; install it (e.g. `just harnesses`) or choose another agent with --agent (codex, claude, kiro, pi, opencode, grok)"
    )]
    BinaryMissing {
        /// Harness label.
        label: &'static str,
        /// The binary looked for.
        binary: &'static str,
    },
    /// Detection found nothing.
    #[error("No AI agent found: {0}; install one (e.g. `just harnesses`) or pass --agent")]
    NoneDetected(String),
    /// `STUDYLOOP_KIRO_AGENT_TEMPLATE` points at nothing usable.
    #[error(
        "Kiro agent template {path} (STUDYLOOP_KIRO_AGENT_TEMPLATE) {problem}; fix the path or unset it"
    )]
    KiroTemplate {
        /// The template path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A file write or read failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An environment variable is malformed.
    #[error(transparent)]
    Env(#[from] env::EnvError),
}

/// Map an I/O error on `path` to [`AdapterError::Io`].
pub(crate) fn io_err(
    action: &'static str,
    path: &Path,
) -> impl FnOnce(std::io::Error) -> AdapterError {
    let path = path.to_owned();
    move |source| AdapterError::Io {
        action,
        path,
        source,
    }
}
