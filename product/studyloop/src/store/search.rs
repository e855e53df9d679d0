//! Lexical `session_search`: an FTS5 `MATCH` over `messages_fts`, ranked by
//! bm25 then newest first, with a 300-character preview. The user's words are
//! quoted one by one, so FTS syntax in a query is searched for literally.

use rusqlite::params;
use serde::Serialize;

use super::{Store, StoreError, q};

/// One hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchHit {
    /// `sessions.id` (for StudyLoop's own log, the study id).
    pub session_id: String,
    /// Where the session came from (`studyloop`, `codex`, …).
    pub source: String,
    /// Project path (the session dir for StudyLoop's own log).
    pub project_path: Option<String>,
    /// Last update of the session.
    pub updated_at: String,
    /// Message role.
    pub role: String,
    /// Message time.
    pub timestamp: String,
    /// First 300 characters of the message.
    pub preview: String,
}

/// Turn user words into an FTS5 query: every word a quoted phrase (AND).
/// `None` when there are no words.
pub fn fts_query(input: &str) -> Option<String> {
    let words: Vec<String> = input
        .split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

impl Store {
    /// Search messages; best match first.
    pub fn session_search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        let fts = fts_query(query).ok_or(StoreError::EmptyQuery)?;
        let mut st = self
            .conn
            .prepare(
                "SELECT m.session_id, s.source, s.project_path, s.updated_at, m.role, m.timestamp, substr(m.content, 1, 300)
                 FROM messages_fts
                 JOIN messages m ON m.id = messages_fts.rowid
                 JOIN sessions s ON s.id = m.session_id
                 WHERE messages_fts MATCH ?1
                 ORDER BY bm25(messages_fts), m.timestamp DESC
                 LIMIT ?2",
            )
            .map_err(q("searching sessions"))?;
        st.query_map(params![fts, limit], |r| {
            Ok(SearchHit {
                session_id: r.get(0)?,
                source: r.get(1)?,
                project_path: r.get(2)?,
                updated_at: r.get(3)?,
                role: r.get(4)?,
                timestamp: r.get(5)?,
                preview: r.get(6)?,
            })
        })
        .and_then(Iterator::collect)
        .map_err(q("searching sessions"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_quoting() {
        assert_eq!(
            fts_query("  window   functions "),
            Some("\"window\" \"functions\"".into())
        );
        assert_eq!(fts_query("a\"b OR"), Some("\"a\"\"b\" \"OR\"".into()));
        assert_eq!(fts_query("   "), None);
    }

    #[test]
    fn finds_indexed_lines_with_stemming_and_ignores_syntax() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.db")).unwrap();
        s.index_study_log(
            "id-1",
            "/s/d",
            "2026-01-01T00:00:00Z",
            &[
                ("note", "win: window functions | ranking rows".into()),
                ("note", "parked: CTE recursion".into()),
            ],
        )
        .unwrap();
        let hits = s.session_search("window function", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(
            (hits[0].source.as_str(), hits[0].session_id.as_str()),
            ("studyloop", "id-1")
        );
        assert!(s.session_search("NEAR(", 10).unwrap().is_empty());
        assert!(matches!(
            s.session_search(" ", 10),
            Err(StoreError::EmptyQuery)
        ));
    }
}
