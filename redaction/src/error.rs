//! The redaction crate's one error enum: loading the rules, configuring a [`Redactor`],
//! and refusing a summary that still leaks.
//!
//! [`Redactor`]: crate::Redactor

use std::path::PathBuf;

use crate::pinned::{LoadError, PinError};
use crate::violation::Violation;

/// Everything that can go wrong while loading rules or redacting.
#[derive(Debug, thiserror::Error)]
pub enum RedactionError {
    /// A rules or registry file could not be read.
    #[error("cannot read `{}`: {source}; check the path exists and is readable", path.display())]
    Read {
        /// The file that could not be read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The rules file is not well-formed: bad YAML, a missing or unknown field, or a
    /// pattern that does not compile.
    #[error("`{file}` is malformed: {detail}")]
    Format {
        /// The rules file's name.
        file: String,
        /// What is wrong and how to fix it.
        detail: String,
    },
    /// No rules file of this version ships with the crate.
    #[error(
        "redaction rules version {version} is not shipped with this build (shipped: {shipped}); \
         name a shipped version or load the file with its registry from disk"
    )]
    UnknownVersion {
        /// The version asked for.
        version: u32,
        /// The shipped versions, comma-separated.
        shipped: String,
    },
    /// The rules file is not the pinned text for its version (unregistered or tampered).
    #[error(transparent)]
    Pin(#[from] PinError),
    /// A known secret value handed to [`crate::Redactor::with_secret`] is unusable.
    #[error(
        "secret `{name}` cannot be redacted literally: {detail}; pass the full credential \
         value (at least {min} characters) under a name of letters, digits, `_` or `-`"
    )]
    Secret {
        /// The caller's name for the secret (never its value).
        name: String,
        /// What is wrong with it.
        detail: String,
        /// The shortest value accepted.
        min: usize,
    },
    /// The summary to redact is not a JSON object.
    #[error(
        "a redacted summary must be a JSON object, found {found}; build it as a map of allow-listed fields"
    )]
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// The summary still holds something the rules forbid; every violation is listed.
    #[error(
        "redacted summary still leaks {} item(s): {}; keep raw evidence in the private bundle \
         and put only allow-listed, non-identifying values in the summary",
        violations.len(),
        violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    Leak {
        /// Every violation found, in document order.
        violations: Vec<Violation>,
    },
}

impl From<LoadError> for RedactionError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Format { file, detail } => Self::Format { file, detail },
            LoadError::Pin(pin) => Self::Pin(pin),
        }
    }
}
