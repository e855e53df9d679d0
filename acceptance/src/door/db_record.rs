//! What one study session left in the product's database, as JSON rows for the
//! bundle's `db/<table>.json` files, and the checks a graded journey makes on it. The
//! rows come from [`super::db::ProductDb::session_record`]; every column the framework
//! reads is named here.
//!
//! Rows are rendered column by column in the table's order; SQL NULL is JSON `null`
//! (unknown, never 0) and a BLOB is summarised by its length.

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde_json::{Map, Value};

/// The tables read, each with the query selecting one session's rows (`?1` = the study
/// session id). The history tables key the session's log by the same id.
pub(crate) const TABLES: [(&str, &str); 4] = [
    (
        "study_sessions",
        "SELECT * FROM study_sessions WHERE id = ?1",
    ),
    (
        "study_progress",
        "SELECT * FROM study_progress WHERE study_session_id = ?1 ORDER BY id",
    ),
    ("sessions", "SELECT * FROM sessions WHERE id = ?1"),
    (
        "messages",
        "SELECT * FROM messages WHERE session_id = ?1 ORDER BY seq, id",
    ),
];

/// One table's rows for the session.
pub type TableRows = (&'static str, Vec<Value>);

pub(crate) fn rows(conn: &Connection, sql: &str, id: &str) -> rusqlite::Result<Vec<Value>> {
    let mut stmt = conn.prepare(sql)?;
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut out = Vec::new();
    let mut rows = stmt.query([id])?;
    while let Some(row) = rows.next()? {
        let mut object = Map::new();
        for (i, name) in names.iter().enumerate() {
            object.insert(name.clone(), json_of(row.get_ref(i)?));
        }
        out.push(Value::Object(object));
    }
    Ok(out)
}

fn json_of(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::from(format!("<{} byte blob>", b.len())),
    }
}

/// Every row one study session left, table by table in [`TABLES`] order.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    tables: Vec<TableRows>,
}

impl SessionRecord {
    pub(crate) fn from_tables(tables: Vec<TableRows>) -> Self {
        Self { tables }
    }

    /// Each table with its rows, for the bundle.
    #[must_use]
    pub fn tables(&self) -> &[TableRows] {
        &self.tables
    }

    fn table(&self, name: &str) -> &[Value] {
        self.tables
            .iter()
            .find(|(t, _)| *t == name)
            .map_or(&[], |(_, rows)| rows.as_slice())
    }

    /// The session's `study_sessions` rows (one, for a session that started).
    #[must_use]
    pub fn study_sessions(&self) -> &[Value] {
        self.table("study_sessions")
    }

    /// The `notes` the end wrote on the session's row; `None` when there is no row or
    /// no notes.
    #[must_use]
    pub fn notes(&self) -> Option<&str> {
        self.study_sessions()
            .first()
            .and_then(|r| r["notes"].as_str())
    }

    /// Exactly one `study_sessions` row, and it is closed (`ended_at` set).
    ///
    /// # Errors
    /// Names the rows found.
    pub fn one_closed_session(&self) -> Result<&Value, String> {
        match self.study_sessions() {
            [row] if !row["ended_at"].is_null() => Ok(row),
            other => Err(format!(
                "expected one closed study_sessions row, found {other:?}"
            )),
        }
    }

    /// What an ended session must have left: exactly one closed `study_sessions` row
    /// with the persona hash the start reported, a progress row per logged concept, and
    /// the end log indexed as notes. Returns every problem (empty = complete).
    #[must_use]
    pub fn problems(&self, persona_hash: &str, concepts: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        match self.study_sessions() {
            [row] => {
                if row["outcome"] == "active" || row["ended_at"].is_null() {
                    out.push(format!(
                        "study_sessions row is still open (outcome {}, ended_at {})",
                        row["outcome"], row["ended_at"]
                    ));
                }
                if row["persona_hash"] != persona_hash {
                    out.push(format!(
                        "study_sessions.persona_hash is {}, the start reported {persona_hash:?}",
                        row["persona_hash"]
                    ));
                }
            }
            rows => out.push(format!(
                "expected one study_sessions row, found {}",
                rows.len()
            )),
        }
        let progress = self.table("study_progress");
        for concept in concepts {
            if !progress.iter().any(|r| r["concept"] == *concept) {
                out.push(format!(
                    "no study_progress row for the logged concept `{concept}`"
                ));
            }
        }
        let notes = self.table("messages");
        for concept in concepts {
            let indexed = notes
                .iter()
                .any(|m| m["content"].as_str().is_some_and(|c| c.contains(concept)));
            if !indexed {
                out.push(format!(
                    "the end did not index a note naming `{concept}` in messages"
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::super::db::ProductDb;

    fn fixture(dir: &Path) -> PathBuf {
        let db = dir.join("sessions.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE study_sessions (id TEXT, topic TEXT, outcome TEXT, ended_at TEXT, persona_hash TEXT, notes BLOB);
             CREATE TABLE study_progress (id INTEGER PRIMARY KEY, concept TEXT, confidence TEXT, study_session_id TEXT);
             CREATE TABLE sessions (id TEXT, source TEXT);
             CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, seq INTEGER);
             INSERT INTO study_sessions VALUES ('s1', 'rust', 'completed', '2026-01-01T00:00:00Z', 'abc', x'0102');
             INSERT INTO study_sessions VALUES ('s2', 'other', 'active', NULL, 'zzz', NULL);
             INSERT INTO study_progress (concept, confidence, study_session_id) VALUES ('closures', 'struggling', 's1');
             INSERT INTO sessions VALUES ('s1', 'studyloop');
             INSERT INTO messages (session_id, role, content, seq) VALUES ('s1', 'note', 'rust — struggling: closures', 0);",
        )
        .unwrap();
        db
    }

    #[test]
    fn reads_only_the_sessions_rows_with_nulls_and_blobs_named() {
        let dir = tempfile::tempdir().unwrap();
        let db = ProductDb::open(&fixture(dir.path())).unwrap();
        let s1 = db.session_record("s1").unwrap();
        let names: Vec<&str> = s1.tables().iter().map(|(t, _)| *t).collect();
        assert_eq!(
            names,
            ["study_sessions", "study_progress", "sessions", "messages"]
        );
        assert_eq!(s1.study_sessions()[0]["notes"], "<2 byte blob>");
        assert_eq!(s1.table("study_progress").len(), 1);
        assert!(s1.one_closed_session().is_ok());
        let open = db.session_record("s2").unwrap();
        assert!(open.study_sessions()[0]["ended_at"].is_null());
        assert!(open.table("messages").is_empty());
        assert!(open.one_closed_session().is_err());
        assert_eq!(open.notes(), None);
    }

    #[test]
    fn problems_name_an_open_row_a_wrong_hash_and_missing_concepts() {
        let dir = tempfile::tempdir().unwrap();
        let db = ProductDb::open(&fixture(dir.path())).unwrap();
        let s1 = db.session_record("s1").unwrap();
        assert!(s1.problems("abc", &["closures"]).is_empty());
        let found = db
            .session_record("s2")
            .unwrap()
            .problems("abc", &["closures"])
            .join("\n");
        for needle in [
            "still open",
            "persona_hash",
            "no study_progress row",
            "did not index",
        ] {
            assert!(found.contains(needle), "{needle}: {found}");
        }
        let none = db.session_record("nope").unwrap().problems("abc", &[]);
        assert!(none.join("\n").contains("found 0"), "{none:?}");
    }
}
