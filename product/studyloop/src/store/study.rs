//! Study-session rows: create at start, close at end (duration, notes,
//! win/struggle counts), abort on a failed start, progress per topic, and the
//! session's notes indexed as searchable messages.

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError, q};

/// A new `study_sessions` row.
#[derive(Debug, Clone)]
pub struct NewStudySession<'a> {
    /// uuid v4.
    pub id: &'a str,
    /// Topic, lowercased and trimmed.
    pub topic: &'a str,
    /// 1..=10.
    pub energy: u8,
    /// low | medium | high.
    pub energy_label: &'a str,
    /// Persona mode.
    pub mode: &'a str,
    /// Harness name.
    pub agent: &'a str,
    /// tmux session name.
    pub tmux_session: &'a str,
    /// 16-hex persona hash.
    pub persona_hash: &'a str,
    /// Configured topic slug, when the topic matched one.
    pub topic_slug: Option<&'a str>,
    /// RFC 3339 UTC.
    pub started_at: &'a str,
}

/// What closes a row.
#[derive(Debug, Clone)]
pub struct EndRecord<'a> {
    /// The study id.
    pub id: &'a str,
    /// RFC 3339 UTC.
    pub ended_at: &'a str,
    /// Whole minutes studied (pauses excluded); `None` = unknown.
    pub duration_minutes: Option<i64>,
    /// The notes built from the feeds.
    pub notes: &'a str,
    /// Wins (win + insight lines).
    pub win_count: i64,
    /// Struggles.
    pub struggle_count: i64,
    /// The spec captures as JSON (`session::spec::Captures`); `None` = none.
    pub spec_captures: Option<&'a str>,
}

/// A `study_sessions` row as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    missing_docs,
    reason = "columns of study_sessions, documented in the migration"
)]
pub struct StudySessionRow {
    pub id: String,
    pub topic: String,
    pub energy_level: Option<String>,
    pub energy: Option<i64>,
    pub mode: Option<String>,
    pub agent: Option<String>,
    pub tmux_session: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub duration_minutes: Option<i64>,
    pub notes: Option<String>,
    pub persona_hash: Option<String>,
    pub win_count: Option<i64>,
    pub struggle_count: Option<i64>,
    pub outcome: String,
    /// JSON of `session::spec::Captures`, set by the end.
    pub spec_captures: Option<String>,
    pub topic_slug: Option<String>,
}

impl Store {
    /// Insert a new active study session.
    pub fn create_study_session(&self, s: &NewStudySession<'_>) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO study_sessions (id, topic, energy_level, energy, mode, agent, tmux_session, started_at, created_at, persona_hash, topic_slug)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10)",
                params![s.id, s.topic, s.energy_label, s.energy, s.mode, s.agent, s.tmux_session, s.started_at, s.persona_hash, s.topic_slug],
            )
            .map(drop)
            .map_err(q("creating the study session row"))
    }

    /// Close an active study session. Returns false when the row was not
    /// active (already ended by another door, or missing).
    pub fn end_study_session(&self, e: &EndRecord<'_>) -> Result<bool, StoreError> {
        self.conn
            .execute(
                "UPDATE study_sessions SET ended_at = ?2, duration_minutes = ?3, notes = ?4, win_count = ?5, struggle_count = ?6, spec_captures = ?7, outcome = 'ended'
                 WHERE id = ?1 AND outcome = 'active'",
                params![e.id, e.ended_at, e.duration_minutes, e.notes, e.win_count, e.struggle_count, e.spec_captures],
            )
            .map(|n| n > 0)
            .map_err(q("closing the study session row"))
    }

    /// Mark a row aborted (a start that failed after the row was written). Only
    /// an `active` row: a repair that runs twice never rewrites an ended one.
    pub fn abort_study_session(
        &self,
        id: &str,
        ended_at: &str,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE study_sessions SET ended_at = ?2, duration_minutes = 0, notes = ?3, outcome = 'aborted' WHERE id = ?1 AND outcome = 'active'",
                params![id, ended_at, format!("Aborted: {reason}")],
            )
            .map(drop)
            .map_err(q("aborting the study session row"))
    }

    /// Read one row.
    pub fn study_session(&self, id: &str) -> Result<Option<StudySessionRow>, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {ROW_COLUMNS} FROM study_sessions WHERE id = ?1"),
                [id],
                row,
            )
            .optional()
            .map_err(q("reading a study session row"))
    }

    /// The newest `ended` row on `topic` (stored lowercased), if any: what a
    /// web resume carries forward.
    pub fn last_ended_on(&self, topic: &str) -> Result<Option<StudySessionRow>, StoreError> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM study_sessions WHERE outcome = 'ended' AND topic = ?1 ORDER BY ended_at DESC, rowid DESC LIMIT 1"
                ),
                [topic.to_lowercase()],
                row,
            )
            .optional()
            .map_err(q("reading the last ended session on a topic"))
    }

    /// Every row still `active`, newest first (`doctor --fix`).
    pub fn active_study_sessions(&self) -> Result<Vec<StudySessionRow>, StoreError> {
        let action = "reading the active study sessions";
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {ROW_COLUMNS} FROM study_sessions WHERE outcome = 'active' ORDER BY started_at DESC, rowid DESC"
            ))
            .map_err(q(action))?;
        st.query_map([], row)
            .and_then(Iterator::collect)
            .map_err(q(action))
    }

    /// Upsert one `study_progress` row for (topic, concept).
    pub fn record_progress(
        &self,
        topic: &str,
        concept: &str,
        confidence: &str,
        note: &str,
        study_id: &str,
        now: &str,
    ) -> Result<(), StoreError> {
        upsert_progress(
            &self.conn,
            &Progress {
                topic,
                concept,
                confidence,
                note,
            },
            study_id,
            now,
        )
    }

    /// Close an active row and write its progress rows and search log in ONE
    /// transaction: a kill at any instant leaves either none of it (the row
    /// still `active`, the feeds still on disk, so a later end redoes it) or
    /// all of it. Returns false, writing nothing, when the row was not active.
    pub fn close_study_session(
        &mut self,
        e: &EndRecord<'_>,
        progress: &[Progress<'_>],
        project_path: &str,
        log: &[(&str, String)],
    ) -> Result<bool, StoreError> {
        let action = "closing the study session row";
        let embedder = self.embedder.clone();
        let tx = self.conn.transaction().map_err(q(action))?;
        let closed = tx
            .execute(
                "UPDATE study_sessions SET ended_at = ?2, duration_minutes = ?3, notes = ?4, win_count = ?5, struggle_count = ?6, spec_captures = ?7, outcome = 'ended'
                 WHERE id = ?1 AND outcome = 'active'",
                params![e.id, e.ended_at, e.duration_minutes, e.notes, e.win_count, e.struggle_count, e.spec_captures],
            )
            .map_err(q(action))?
            > 0;
        if closed {
            for p in progress {
                upsert_progress(&tx, p, e.id, e.ended_at)?;
            }
            if !log.is_empty() {
                insert_log(
                    &tx,
                    embedder.as_deref(),
                    e.id,
                    project_path,
                    e.ended_at,
                    log,
                )?;
            }
        }
        tx.commit().map_err(q(action))?;
        Ok(closed)
    }

    /// `(concept, confidence)` rows for a topic, for tests and summaries.
    pub fn progress_for(&self, topic: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT concept, confidence FROM study_progress WHERE topic = ?1 ORDER BY concept",
            )
            .map_err(q("reading study progress"))?;
        st.query_map([topic], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(Iterator::collect)
            .map_err(q("reading study progress"))
    }

    /// Index a study session's log lines as searchable messages (one
    /// `sessions` row with source `studyloop`, one message per line).
    pub fn index_study_log(
        &mut self,
        study_id: &str,
        project_path: &str,
        now: &str,
        lines: &[(&str, String)],
    ) -> Result<(), StoreError> {
        let embedder = self.embedder.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(q("indexing the session log"))?;
        insert_log(&tx, embedder.as_deref(), study_id, project_path, now, lines)?;
        tx.commit().map_err(q("indexing the session log"))
    }
}

const ROW_COLUMNS: &str = "id, topic, energy_level, agent, tmux_session, started_at, ended_at, duration_minutes, notes, persona_hash, win_count, struggle_count, outcome, energy, mode, spec_captures, topic_slug";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StudySessionRow> {
    Ok(StudySessionRow {
        id: r.get(0)?,
        topic: r.get(1)?,
        energy_level: r.get(2)?,
        agent: r.get(3)?,
        tmux_session: r.get(4)?,
        started_at: r.get(5)?,
        ended_at: r.get(6)?,
        duration_minutes: r.get(7)?,
        notes: r.get(8)?,
        persona_hash: r.get(9)?,
        win_count: r.get(10)?,
        struggle_count: r.get(11)?,
        outcome: r.get(12)?,
        energy: r.get(13)?,
        mode: r.get(14)?,
        spec_captures: r.get(15)?,
        topic_slug: r.get(16)?,
    })
}

/// One progress row to upsert at the end of a session.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// The session topic, lowercased.
    pub topic: &'a str,
    /// The concept.
    pub concept: &'a str,
    /// learning | struggling | confident.
    pub confidence: &'a str,
    /// The latest note.
    pub note: &'a str,
}

fn upsert_progress(
    conn: &rusqlite::Connection,
    p: &Progress<'_>,
    study_id: &str,
    now: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO study_progress (topic, concept, confidence, first_seen, last_seen, session_count, notes, study_session_id)
         VALUES (?1, ?2, ?3, ?6, ?6, 1, ?4, ?5)
         ON CONFLICT (topic, concept) DO UPDATE SET
           confidence = excluded.confidence,
           last_seen = excluded.last_seen,
           notes = excluded.notes,
           session_count = session_count + (study_session_id IS NOT excluded.study_session_id),
           study_session_id = excluded.study_session_id",
        params![p.topic, p.concept, p.confidence, p.note, study_id, now],
    )
    .map(drop)
    .map_err(q("recording study progress"))
}

fn insert_log(
    conn: &rusqlite::Connection,
    embedder: Option<&crate::embed::Embedder>,
    study_id: &str,
    project_path: &str,
    now: &str,
    lines: &[(&str, String)],
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO sessions (id, source, project_path, created_at, updated_at) VALUES (?1, 'studyloop', ?2, ?3, ?3)
         ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at",
        params![study_id, project_path, now],
    )
    .map_err(q("indexing the session log"))?;
    for (seq, (role, content)) in lines.iter().enumerate() {
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp, seq) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![study_id, role, content, now, i64::try_from(seq).unwrap_or(i64::MAX)],
        )
        .map_err(q("indexing the session log"))?;
        if let Some(e) = embedder {
            super::vectors::put(conn, e, conn.last_insert_rowid(), content)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_of_a_row() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("s.db")).unwrap();
        let new = NewStudySession {
            id: "id-1",
            topic: "sql",
            energy: 5,
            energy_label: "medium",
            mode: "study",
            agent: "codex",
            tmux_session: "study-sql-id1",
            persona_hash: "0123456789abcdef",
            topic_slug: None,
            started_at: "2026-01-01T00:00:00Z",
        };
        s.create_study_session(&new).unwrap();
        let row = s.study_session("id-1").unwrap().unwrap();
        assert_eq!((row.outcome.as_str(), row.win_count), ("active", None));
        let end = EndRecord {
            id: "id-1",
            ended_at: "2026-01-01T00:30:00Z",
            duration_minutes: Some(30),
            notes: "Wins:\n- x",
            win_count: 1,
            struggle_count: 0,
            spec_captures: None,
        };
        assert!(s.end_study_session(&end).unwrap());
        assert!(
            !s.end_study_session(&end).unwrap(),
            "a second end must not re-close the row"
        );
        let row = s.study_session("id-1").unwrap().unwrap();
        assert_eq!(
            (row.outcome.as_str(), row.win_count, row.duration_minutes),
            ("ended", Some(1), Some(30))
        );
        s.record_progress("sql", "joins", "learning", "", "id-1", "t")
            .unwrap();
        s.record_progress("sql", "joins", "confident", "got it", "id-1", "t2")
            .unwrap();
        assert_eq!(
            s.progress_for("sql").unwrap(),
            vec![("joins".to_owned(), "confident".to_owned())]
        );
    }
}
