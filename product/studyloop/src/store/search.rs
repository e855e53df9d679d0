//! Lexical `session_search`: an FTS5 `MATCH` over `messages_fts`, ranked by
//! bm25 then newest first, with a 300-character preview. The user's words are
//! quoted one by one, so FTS syntax in a query is searched for literally.
//! The product's `search` fuses this ranking with embeddings (`hybrid`).

use rusqlite::params;
use serde::Serialize;

use super::{Store, StoreError, q};

/// What a hit is: a conversation turn (`store::turns`) or a line of the
/// session's notes (topics and parked items, written at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HitKind {
    /// A topic or parking note.
    Note,
    /// A conversation turn; the hit's `turn_id` names it.
    Turn,
}

/// The columns [`SearchHit::from_row`] reads, over `messages m`, `sessions s`
/// and `turns t` (left-joined).
pub(super) const HIT_COLUMNS: &str = "m.session_id, s.source, s.project_path, s.updated_at, m.role, m.timestamp, substr(m.content, 1, 300), t.message_id IS NOT NULL, t.turn_id";

/// The `turns t` join [`HIT_COLUMNS`] reads: the v5 table when the DB has it,
/// else (a DB `search` opened read-only, unmigrated) an empty stand-in, so
/// every hit is a note.
pub(super) fn turns_join(with_turns: bool) -> &'static str {
    if with_turns {
        "LEFT JOIN turns t ON t.message_id = m.id"
    } else {
        "LEFT JOIN (SELECT NULL AS message_id, NULL AS turn_id) t ON 0"
    }
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchHit {
    /// `note` or `turn`.
    pub kind: HitKind,
    /// The turn's id within its session (`t1`, `t2`, …) for a turn, else null.
    pub turn_id: Option<String>,
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

impl SearchHit {
    /// A hit from the columns [`HIT_COLUMNS`], in that order.
    pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            kind: if r.get(7)? {
                HitKind::Turn
            } else {
                HitKind::Note
            },
            turn_id: r.get(8)?,
            session_id: r.get(0)?,
            source: r.get(1)?,
            project_path: r.get(2)?,
            updated_at: r.get(3)?,
            role: r.get(4)?,
            timestamp: r.get(5)?,
            preview: r.get(6)?,
        })
    }
}

/// At most this many distinct words reach FTS5: its parse and match time
/// grows faster than linearly with the terms (a 1.2 MB query of 240 000
/// words took 700 s), and an AND of more words than this finds nothing a
/// person typed anyway.
pub const MAX_QUERY_WORDS: usize = 32;

/// Turn user words into an FTS5 query: every distinct word a quoted phrase
/// (AND), the first [`MAX_QUERY_WORDS`] of them. `None` when there are no words.
/// NUL separates words too: FTS5 reads the query as a C string, so a NUL
/// inside a phrase ended it early ("unterminated string").
pub fn fts_query(input: &str) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    let words: Vec<String> = input
        .split(|c: char| c.is_whitespace() || c == '\0')
        .filter(|w| !w.is_empty())
        .filter(|w| seen.insert(w.to_lowercase()))
        .take(MAX_QUERY_WORDS)
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

impl Store {
    /// Search messages; best match first.
    pub fn session_search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        let fts = fts_query(query).ok_or(StoreError::EmptyQuery)?;
        let turns = turns_join(self.has_table("turns")?);
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT {HIT_COLUMNS}
                 FROM messages_fts
                 JOIN messages m ON m.id = messages_fts.rowid
                 JOIN sessions s ON s.id = m.session_id
                 {turns}
                 WHERE messages_fts MATCH ?1
                 ORDER BY bm25(messages_fts), m.timestamp DESC
                 LIMIT ?2"
            ))
            .map_err(q("searching sessions"))?;
        st.query_map(params![fts, limit], SearchHit::from_row)
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
        // Repeats collapse; a flood of words is cut to the first MAX_QUERY_WORDS.
        assert_eq!(
            fts_query("Loop loop LOOP forever"),
            Some("\"Loop\" \"forever\"".into())
        );
        let flood: String = (0..100_000).map(|i| format!("w{i} ")).collect();
        let q = fts_query(&flood).unwrap();
        assert_eq!(q.split(' ').count(), MAX_QUERY_WORDS);
        assert!(q.ends_with(&format!("\"w{}\"", MAX_QUERY_WORDS - 1)));
    }

    #[test]
    fn a_huge_query_is_answered_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.db")).unwrap();
        s.index_study_log(
            "id-1",
            "/s/d",
            "2026-01-01T00:00:00Z",
            &[("note", "why does my query loop forever".into())],
        )
        .unwrap();
        // 240 000 words (1.2 MB): FTS5 spent minutes on the unbounded query.
        let huge = "why does my query loop forever ".repeat(40_000);
        let t = std::time::Instant::now();
        assert_eq!(s.session_search(&huge, 5).unwrap().len(), 1);
        let flood: String = (0..100_000).map(|i| format!("w{i} ")).collect();
        assert!(s.session_search(&flood, 5).unwrap().is_empty());
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            t.elapsed()
        );
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
