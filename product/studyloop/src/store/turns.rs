//! Conversation turns, indexed as the session runs (the web console's ACP
//! stream writes them through `web::acp::turns`). A turn is the learner's
//! prompt (role `user`) and the agent's reply (role `agent`), both under one
//! turn id (`t1`, `t2`, … in the session's order). Each is one `messages` row,
//! so the FTS5 index and the embeddings find it exactly like a note, and a
//! `turns` row that names it as a turn; a hit on it says `kind: "turn"`.
//!
//! Text is bounded to [`MAX_TURN_TEXT_BYTES`] (cut at a character boundary)
//! and NUL becomes U+FFFD, so a hostile agent cannot grow the DB without
//! bound or plant a byte SQLite's C string paths would stop at.

use rusqlite::params;

use super::{Store, StoreError, q};

/// At most this many bytes of a turn's text are stored and indexed (64 KiB:
/// the longest reply a person reads through; the rest is cut, not refused).
pub const MAX_TURN_TEXT_BYTES: usize = 64 * 1024;

/// One side of a turn to index.
#[derive(Debug, Clone, Copy)]
pub struct NewTurn<'a> {
    /// The study session id (the `sessions` row of StudyLoop's own log).
    pub session_id: &'a str,
    /// The session dir (the `sessions` row's project path).
    pub project_path: &'a str,
    /// `t1`, `t2`, …
    pub turn_id: &'a str,
    /// `user` (the prompt) or `agent` (the reply).
    pub role: &'a str,
    /// The text, any length (bounded here).
    pub text: &'a str,
    /// RFC 3339 time.
    pub created_at: &'a str,
}

/// `text` without NUL and cut to [`MAX_TURN_TEXT_BYTES`] at a char boundary.
#[must_use]
pub fn bounded(text: &str) -> String {
    text[..text.floor_char_boundary(MAX_TURN_TEXT_BYTES)].replace('\0', "\u{fffd}")
}

/// One recorded side of a turn, as the export lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedTurn {
    /// `t1`, `t2`, …
    pub turn_id: String,
    /// `user` or `agent`.
    pub role: String,
    /// The stored (bounded) text.
    pub text: String,
    /// RFC 3339 time it was written.
    pub created_at: String,
}

impl Store {
    /// The recorded turn sides of `session_id`, in the order they were written.
    ///
    /// # Errors
    /// A database error.
    pub fn turns_of_session(&self, session_id: &str) -> Result<Vec<RecordedTurn>, StoreError> {
        let action = "reading a session's conversation turns";
        let mut stmt = self
            .conn
            .prepare(
                "SELECT t.turn_id, t.role, m.content, m.timestamp FROM turns t
                 JOIN messages m ON m.id = t.message_id
                 WHERE t.session_id = ?1 ORDER BY m.id",
            )
            .map_err(q(action))?;
        let rows = stmt
            .query_map(params![session_id], |r| {
                Ok(RecordedTurn {
                    turn_id: r.get(0)?,
                    role: r.get(1)?,
                    text: r.get(2)?,
                    created_at: r.get(3)?,
                })
            })
            .map_err(q(action))?;
        rows.collect::<Result<_, _>>().map_err(q(action))
    }

    /// Index one side of a turn (and embed it when the handle has a model),
    /// in one transaction. A text that is empty after trimming is skipped.
    ///
    /// # Errors
    /// A database error (the same turn side twice is one: the pair is unique).
    pub fn record_turn(&mut self, t: &NewTurn<'_>) -> Result<(), StoreError> {
        let text = bounded(t.text);
        if text.trim().is_empty() {
            return Ok(());
        }
        let action = "indexing a conversation turn";
        let embedder = self.embedder.clone();
        let tx = self.conn.transaction().map_err(q(action))?;
        tx.execute(
            "INSERT INTO sessions (id, source, project_path, created_at, updated_at) VALUES (?1, 'studyloop', ?2, ?3, ?3)
             ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at",
            params![t.session_id, t.project_path, t.created_at],
        )
        .map_err(q(action))?;
        tx.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, ?2, ?3, ?4)",
            params![t.session_id, t.role, text, t.created_at],
        )
        .map_err(q(action))?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO turns (message_id, session_id, turn_id, role) VALUES (?1, ?2, ?3, ?4)",
            params![id, t.session_id, t.turn_id, t.role],
        )
        .map_err(q(action))?;
        if let Some(e) = embedder.as_deref() {
            super::vectors::put(&tx, e, id, &text)?;
        }
        tx.commit().map_err(q(action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::Availability;
    use crate::store::HitKind;

    fn turn<'a>(turn_id: &'a str, role: &'a str, text: &'a str) -> NewTurn<'a> {
        NewTurn {
            session_id: "sid-1",
            project_path: "/s/d",
            turn_id,
            role,
            text,
            created_at: "2026-01-01T00:00:00Z",
        }
    }

    #[test]
    fn a_turn_is_found_by_its_words_with_its_id_and_a_note_stays_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.db")).unwrap();
        s.record_turn(&turn("t1", "user", "how do window functions rank rows"))
            .unwrap();
        s.record_turn(&turn("t1", "agent", "ROW_NUMBER numbers each partition"))
            .unwrap();
        s.record_turn(&turn("t2", "user", "and recursion in a CTE?"))
            .unwrap();
        s.index_study_log(
            "sid-1",
            "/s/d",
            "2026-01-02T00:00:00Z",
            &[("note", "SQL — parked: lateral joins".into())],
        )
        .unwrap();
        let lexical = Availability::from_setting(None);
        let out = s.hybrid_search("partition", 5, &lexical).unwrap();
        assert_eq!(out.count, 1, "{out:?}");
        let h = &out.results[0].hit;
        assert_eq!(
            (
                h.kind,
                h.turn_id.as_deref(),
                h.role.as_str(),
                h.session_id.as_str()
            ),
            (HitKind::Turn, Some("t1"), "agent", "sid-1")
        );
        let h = &s.hybrid_search("recursion", 5, &lexical).unwrap().results[0].hit;
        assert_eq!((h.kind, h.turn_id.as_deref()), (HitKind::Turn, Some("t2")));
        let h = &s.hybrid_search("lateral", 5, &lexical).unwrap().results[0].hit;
        assert_eq!((h.kind, h.turn_id.as_deref()), (HitKind::Note, None));
        assert_eq!(
            s.session_search("partition", 5).unwrap()[0].kind,
            HitKind::Turn
        );
        assert!(
            s.hybrid_search("zeppelin", 5, &lexical)
                .unwrap()
                .results
                .is_empty()
        );
        // The same side of a turn twice is refused (the caller logs it).
        assert!(s.record_turn(&turn("t1", "user", "again")).is_err());
    }

    #[test]
    fn hostile_text_is_bounded_and_syntax_is_searched_literally() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.db")).unwrap();
        let huge = format!("{} tailword", "é".repeat(MAX_TURN_TEXT_BYTES));
        s.record_turn(&turn("t1", "agent", &huge)).unwrap();
        s.record_turn(&turn(
            "t2",
            "user",
            "nul\0byte \"quoted\" star* NEAR(a b) ' OR 1=1 --",
        ))
        .unwrap();
        s.record_turn(&turn("t3", "user", "   ")).unwrap();
        let content: Vec<String> = {
            let mut st = s
                .conn()
                .prepare("SELECT content FROM messages ORDER BY id")
                .unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert_eq!(content.len(), 2, "a blank turn is not indexed");
        assert!(content[0].len() <= MAX_TURN_TEXT_BYTES && !content[0].contains("tailword"));
        assert!(
            content[1].starts_with("nul\u{fffd}byte"),
            "{:?}",
            content[1]
        );
        let lexical = Availability::from_setting(None);
        let find = |q: &str| {
            s.hybrid_search(q, 5, &lexical)
                .unwrap()
                .results
                .iter()
                .map(|r| r.hit.turn_id.clone().unwrap_or_default())
                .collect::<Vec<_>>()
        };
        assert!(
            find("tailword").is_empty(),
            "text past the bound is not indexed"
        );
        assert_eq!(find("quoted"), ["t2"]);
        for syntax in ["\"", "*", "NEAR(", "star*", "' OR 1=1 --", "nul\0byte"] {
            let got = find(syntax);
            assert!(got.iter().all(|t| t == "t2"), "{syntax:?}: {got:?}");
        }
        assert!(find("NEAR(zzz").is_empty());
        assert!(matches!(
            s.hybrid_search("\0", 5, &lexical),
            Err(StoreError::EmptyQuery)
        ));
    }
}
