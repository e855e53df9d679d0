//! The rows `studyloop export` reads ([`crate::export`]): every session for
//! `--list`, the progress rows a session wrote and its logged lines.

use rusqlite::OptionalExtension as _;

use super::{Store, StoreError, q};

/// A `study_progress` row as exported.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    missing_docs,
    reason = "columns of study_progress, documented in the migration"
)]
pub struct ProgressRow {
    pub concept: String,
    pub confidence: String,
    pub note: Option<String>,
    pub last_seen: String,
}

impl Store {
    /// `(id, topic, started_at, outcome)` of every session, newest first.
    pub fn list_study_sessions(&self) -> Result<Vec<(String, String, String, String)>, StoreError> {
        let action = "listing the study sessions";
        let mut st = self
            .conn
            .prepare("SELECT id, topic, started_at, outcome FROM study_sessions ORDER BY started_at DESC, rowid DESC")
            .map_err(q(action))?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .and_then(Iterator::collect)
            .map_err(q(action))
    }

    /// The progress rows last written by session `id`, by concept.
    pub fn progress_of_session(&self, id: &str) -> Result<Vec<ProgressRow>, StoreError> {
        let action = "reading the session's progress";
        let mut st = self
            .conn
            .prepare("SELECT concept, confidence, notes, last_seen FROM study_progress WHERE study_session_id = ?1 ORDER BY concept")
            .map_err(q(action))?;
        st.query_map([id], |r| {
            Ok(ProgressRow {
                concept: r.get(0)?,
                confidence: r.get(1)?,
                note: r.get(2)?,
                last_seen: r.get(3)?,
            })
        })
        .and_then(Iterator::collect)
        .map_err(q(action))
    }

    /// The lines the end logged for session `id`, in order; `None` when no
    /// log was written for it.
    pub fn log_of_session(&self, id: &str) -> Result<Option<Vec<String>>, StoreError> {
        let action = "reading the session's log";
        let has = self
            .conn
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map_err(q(action))?
            .is_some();
        if !has {
            return Ok(None);
        }
        let mut st = self
            .conn
            .prepare("SELECT content FROM messages WHERE session_id = ?1 ORDER BY seq, id")
            .map_err(q(action))?;
        st.query_map([id], |r| r.get(0))
            .and_then(Iterator::collect)
            .map(Some)
            .map_err(q(action))
    }
}
