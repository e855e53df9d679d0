//! The learner record one study session left in the product's SQLite database, read
//! through a read-only connection (a journey never writes the product's DB), as JSON
//! rows for the bundle's `db/<table>.json` files, and the checks a graded journey makes
//! on it.
//!
//! Rows are rendered column by column in the table's order; SQL NULL is JSON `null`
//! (unknown, never 0) and a BLOB is summarised by its length.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

/// The tables dumped, each with the query selecting one session's rows (`?1` = the
/// study session id). The history tables key the session's log by the same id.
pub const TABLES: [(&str, &str); 4] = [
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

/// Why the session's record could not be read from the product's database.
#[derive(Debug, thiserror::Error)]
pub enum DbReadError {
    /// The database could not be opened read-only (missing, not SQLite, locked).
    #[error(
        "cannot open {} read-only: {source} (the product writes it under the scratch state dir; did the session start?)",
        path.display()
    )]
    Open {
        /// The database file.
        path: std::path::PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A table could not be read (absent from this schema, or corrupt).
    #[error(
        "reading `{table}` from {}: {source} (the product's schema may have changed; update `TABLES`)",
        path.display()
    )]
    Table {
        /// The table.
        table: &'static str,
        /// The database file.
        path: std::path::PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

/// Every table of [`TABLES`] for `study_id`, read from `db` without writing.
///
/// # Errors
/// [`DbReadError`] naming the database and the table that could not be read.
pub fn read(db: &Path, study_id: &str) -> Result<Vec<TableRows>, DbReadError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(db, flags).map_err(|source| DbReadError::Open {
        path: db.to_owned(),
        source,
    })?;
    TABLES
        .iter()
        .map(|(table, sql)| {
            rows(&conn, sql, study_id)
                .map(|r| (*table, r))
                .map_err(|source| DbReadError::Table {
                    table,
                    path: db.to_owned(),
                    source,
                })
        })
        .collect()
}

fn rows(conn: &Connection, sql: &str, id: &str) -> rusqlite::Result<Vec<Value>> {
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

/// The rows of `table` in a read result (empty when absent).
#[must_use]
pub fn table<'a>(tables: &'a [TableRows], name: &str) -> &'a [Value] {
    tables
        .iter()
        .find(|(t, _)| *t == name)
        .map_or(&[], |(_, rows)| rows.as_slice())
}

/// What an ended session must have left: exactly one closed `study_sessions` row with
/// the persona hash the start reported, a progress row per logged concept, and the end
/// log indexed as notes. Returns every problem (empty = the record is complete).
#[must_use]
pub fn problems(tables: &[TableRows], persona_hash: &str, concepts: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    match table(tables, "study_sessions") {
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
    let progress = table(tables, "study_progress");
    for concept in concepts {
        if !progress.iter().any(|r| r["concept"] == *concept) {
            out.push(format!(
                "no study_progress row for the logged concept `{concept}`"
            ));
        }
    }
    let notes = table(tables, "messages");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(dir: &Path) -> std::path::PathBuf {
        let db = dir.join("sessions.db");
        let c = Connection::open(&db).unwrap();
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
        let db = fixture(dir.path());
        let tables = read(&db, "s1").unwrap();
        let names: Vec<&str> = tables.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            names,
            ["study_sessions", "study_progress", "sessions", "messages"]
        );
        let row = &table(&tables, "study_sessions")[0];
        assert_eq!(row["notes"], "<2 byte blob>");
        assert_eq!(table(&tables, "study_progress").len(), 1);
        let open = read(&db, "s2").unwrap();
        assert!(table(&open, "study_sessions")[0]["ended_at"].is_null());
        assert!(table(&open, "messages").is_empty());
    }

    #[test]
    fn problems_name_an_open_row_a_wrong_hash_and_missing_concepts() {
        let dir = tempfile::tempdir().unwrap();
        let db = fixture(dir.path());
        assert!(problems(&read(&db, "s1").unwrap(), "abc", &["closures"]).is_empty());
        let found = problems(&read(&db, "s2").unwrap(), "abc", &["closures"]).join("\n");
        for needle in [
            "still open",
            "persona_hash",
            "no study_progress row",
            "did not index",
        ] {
            assert!(found.contains(needle), "{needle}: {found}");
        }
        let none = problems(&read(&db, "nope").unwrap(), "abc", &[]).join("\n");
        assert!(none.contains("found 0"), "{none}");
    }

    #[test]
    fn a_missing_database_is_an_error_naming_it_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("absent.db");
        let e = read(&db, "s1").unwrap_err();
        assert!(matches!(e, DbReadError::Open { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("absent.db") && e.contains("read-only"), "{e}");
        assert!(!db.exists());
    }
}
