//! [`StoreError`]: what went wrong with the history database. A leaf, so the handle,
//! the migrations and every query file name it without importing each other.

use std::path::PathBuf;

/// A store problem.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Opening or preparing the database failed.
    #[error(
        "cannot open the history database {path}: {source}; check the path (STUDYLOOP_DB / session_db) and run `studyloop doctor`"
    )]
    Open {
        /// The DB file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// Something other than a regular file sits at the DB path (a FIFO
    /// would block SQLite's open, a device would be read or mapped).
    #[error(
        "the history database path {path} is not usable: {source}; check the path (STUDYLOOP_DB / session_db)"
    )]
    NotAFile {
        /// The DB path.
        path: PathBuf,
        /// What it is instead.
        source: std::io::Error,
    },
    /// The DB's directory cannot be created.
    #[error("cannot create the directory of the history database {path}: {source}")]
    Dir {
        /// The DB file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The DB was written by a newer StudyLoop.
    #[error(
        "the history database {path} has schema version {found}, newer than this studyloop knows ({known}); upgrade studyloop"
    )]
    TooNew {
        /// The DB file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// Ours.
        known: i64,
    },
    /// A query failed.
    #[error("history database error while {action}: {source}")]
    Query {
        /// What was being done.
        action: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A search with no words.
    #[error(
        "the search query is empty; pass one or more words, e.g. `studyloop search \"window functions\"`"
    )]
    EmptyQuery,
}

pub(crate) fn q(action: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::Query { action, source }
}
