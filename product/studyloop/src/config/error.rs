//! [`ConfigError`]: why the config could not be loaded or its template written. A
//! leaf, so the loader (the folder root) and the template writer both name it.

use std::path::PathBuf;

/// Why the config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read.
    #[error(
        "cannot read config file {path}: {source}; fix its permissions or point STUDYLOOP_CONFIG elsewhere"
    )]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not UTF-8 text (YAML must be).
    #[error(
        "config file {path} is not UTF-8 text (invalid byte at offset {offset}); save it as UTF-8 or regenerate it with `studyloop config init --force`"
    )]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// YAML syntax or a value of the wrong type.
    #[error("malformed config file {path}{}: {message}; fix that line or regenerate it with `studyloop config init --force`", line.map(|l| format!(" at line {l}")).unwrap_or_default())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line, when known.
        line: Option<u64>,
        /// What is wrong there.
        message: String,
    },
    /// The document is valid YAML but not a mapping.
    #[error(
        "config file {path} must be a YAML mapping at the top level (found {found}); fix it or regenerate it with `studyloop config init --force`"
    )]
    NotMapping {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        found: &'static str,
    },
    /// `config init` would overwrite an existing file.
    #[error("config file {0} already exists; pass --force to overwrite it")]
    Exists(PathBuf),
    /// Writing the template failed.
    #[error("cannot write config file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
