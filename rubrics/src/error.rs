//! The rubric crate's one error enum.

use std::path::PathBuf;

use studyloop_pinned::{LoadError, PinError};

/// Why a rubric could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RubricError {
    /// The rubric or registry file could not be read.
    #[error("cannot read `{}`: {source}; check the path exists and is readable", path.display())]
    Read {
        /// The file that could not be read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The rubric is not well-formed: no frontmatter, bad YAML, or content that breaks a
    /// rule (scale, anchors, evidence, an unknown criterion in `reject_if`).
    #[error("`{file}` is malformed: {detail}")]
    Format {
        /// The rubric file's name.
        file: String,
        /// What is wrong and how to fix it.
        detail: String,
    },
    /// The rubric is not the pinned text for its version (unregistered or tampered).
    #[error(transparent)]
    Pin(#[from] PinError),
}

impl From<LoadError> for RubricError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Format { file, detail } => Self::Format { file, detail },
            LoadError::Pin(pin) => Self::Pin(pin),
        }
    }
}
