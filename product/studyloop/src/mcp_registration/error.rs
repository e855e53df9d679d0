//! Why a harness config could not take the `studyloop-mcp` entry; every variant
//! is a warning (the session still starts) that says how to register by hand.

use std::path::PathBuf;

/// Why a harness config could not take the server (the session still starts).
#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    /// The file (or a symlink on its way) resolves outside the tree it belongs to.
    #[error(
        "not registering studyloop-mcp: {path} resolves to {target}, outside {root}; a symlinked config is only followed inside that tree (add the `studyloop` entry by hand)"
    )]
    OutsideRoot {
        /// The config path.
        path: PathBuf,
        /// Where it resolves.
        target: PathBuf,
        /// The tree it must stay in.
        root: PathBuf,
    },
    /// The path is a directory, FIFO or other non-file.
    #[error("not registering studyloop-mcp: {0} is not a regular file")]
    NotAFile(PathBuf),
    /// The file is not the JSON object the harness reads; left untouched.
    #[error(
        "not registering studyloop-mcp: {0} is not a JSON object (left untouched); fix the file or add the `studyloop` entry by hand"
    )]
    Unparsable(PathBuf),
    /// Codex's `config.toml` is not valid TOML (or its `mcp_servers` is not
    /// a table); left untouched.
    #[error(
        "not registering studyloop-mcp: {path} is not valid TOML for codex ({reason}); left untouched; fix the file (`codex` refuses it too) or add the `[mcp_servers.studyloop]` table by hand"
    )]
    BadToml {
        /// The config path.
        path: PathBuf,
        /// The parser's message, or what is not a table.
        reason: String,
    },
    /// A read or write failed.
    #[error("not registering studyloop-mcp: cannot {action} {path}: {source}")]
    Io {
        /// What was done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A harness directory variable is malformed.
    #[error(transparent)]
    Env(#[from] crate::env::EnvError),
    /// An adapter path could not be resolved.
    #[error(transparent)]
    Adapter(#[from] crate::adapters::AdapterError),
}
