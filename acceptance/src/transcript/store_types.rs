//! The words of the session-store readers: who wrote a message ([`Role`]) and why a
//! store gave no reply ([`StoreError`]). A leaf, so the JSONL readers (`store`) and the
//! opencode SQLite reader (`store_sqlite`) that `store` dispatches to both name them
//! without importing each other.

use std::path::PathBuf;

pub use crate::harness_spec::reply_source::StoreFormat;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The learner (or harness text sent as the user).
    User,
    /// The model.
    Assistant,
}

/// The words [`StoreError::NoSuchTurn`] quotes the first unparsable record
/// after (`studyloop-uat report --compare` finds the record by them).
pub const UNPARSABLE: &str = "the first record that no longer parses as the pinned schema, ";

/// What follows the quoted record.
pub const UNPARSABLE_FIX: &str =
    ": if the harness changed its store, change its reader (acceptance/src/transcript/store.rs)";

/// Why a store could not give a turn's reply.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No session file or session where the pinned version writes it.
    #[error(
        "no {format:?} session under {dir}: the harness wrote none (was it run with this HOME, and does its version still keep one there?)"
    )]
    Missing {
        /// The format looked for.
        format: StoreFormat,
        /// Where.
        dir: PathBuf,
    },
    /// The file could not be read.
    #[error("cannot read the session store {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The SQLite store could not be queried.
    #[error("cannot query the opencode store {path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The session has fewer learner turns than asked for.
    #[error(
        "the session {path} holds {found} learner turns, not turn {turn} (the harness did not store it, or a resume started a new session){}",
        unparsable.as_ref().map_or_else(String::new, |r| format!("; {UNPARSABLE}{r}{UNPARSABLE_FIX}"))
    )]
    NoSuchTurn {
        /// The session file or database.
        path: PathBuf,
        /// The turn asked for.
        turn: u64,
        /// Real learner turns found.
        found: u64,
        /// The first record that no longer parses, quoted with its line.
        unparsable: Option<String>,
    },
}
