//! [`SignoffError`]: why a sign-off reached no verdict at all (a FAIL is a verdict, not
//! an error).

use std::path::PathBuf;

use studyloop_acceptance::ledger::LedgerError;
use studyloop_redaction::RedactionError;
use studyloop_rubrics::RubricError;

use crate::bundle::BundleError;
use crate::inputs::InputError;
use crate::pinned_yaml::PinnedFileError;

/// Why a sign-off could not reach a verdict at all (distinct from a FAIL verdict).
#[derive(Debug, thiserror::Error)]
pub enum SignoffError {
    /// A pinned file is malformed, unregistered or tampered.
    #[error(transparent)]
    Pinned(#[from] PinnedFileError),
    /// The rubric could not be loaded.
    #[error(transparent)]
    Rubric(#[from] RubricError),
    /// The redaction rules could not be loaded, or the summary still leaks.
    #[error(transparent)]
    Redaction(#[from] RedactionError),
    /// The definition names a council the roster lacks.
    #[error(
        "the sign-off definition names council `{name}`, which the roster does not declare (known: {known})"
    )]
    UnknownCouncil {
        /// The name in the definition.
        name: String,
        /// The roster's council names.
        known: String,
    },
    /// An input path is unusable.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A run directory could not be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A bundle passed directly could not be read.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// The summary could not be written.
    #[error("cannot write the summary to `{}`: {source}; check --out is a writable directory", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
