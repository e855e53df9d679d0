//! The one reader of the product's SQLite database (`sessions.db` in the scratch config
//! dir): opened read-only, never written (a lane or journey that wrote it would be
//! testing its own writes). Every SQL statement the framework runs against the product
//! is in this file; what one study session left is [`SessionRecord`]
//! (`super::db_record`).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::db_record::{SessionRecord, TABLES, rows};
use crate::validate::CheckError;

/// The database's file name in the product's config dir.
pub const DB_FILE: &str = "sessions.db";

/// Why the product's database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DbReadError {
    /// The database could not be opened read-only (missing, not SQLite, locked).
    #[error(
        "cannot open {} read-only: {source} (the product writes it under the scratch state dir; did the session start?)",
        path.display()
    )]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// A table could not be read (absent from this schema, or corrupt).
    #[error(
        "reading `{table}` from {}: {source} (the product's schema may have changed; update `door::db_record::TABLES`)",
        path.display()
    )]
    Table {
        /// The table.
        table: &'static str,
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl From<DbReadError> for CheckError {
    fn from(e: DbReadError) -> Self {
        let db = match &e {
            DbReadError::Open { path, .. } | DbReadError::Table { path, .. } => path.clone(),
        };
        CheckError::Db {
            db,
            detail: e.to_string(),
        }
    }
}

/// A read-only connection to the product's database.
pub struct ProductDb {
    conn: Connection,
    path: PathBuf,
}

impl ProductDb {
    /// Where the database lives under the product's config dir.
    #[must_use]
    pub(crate) fn path_in(config_dir: &Path) -> PathBuf {
        config_dir.join(DB_FILE)
    }

    /// Opens `path` read-only; a missing file is an error and is not created.
    ///
    /// # Errors
    /// [`DbReadError::Open`].
    pub fn open(path: &Path) -> Result<Self, DbReadError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|source| DbReadError::Open {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            conn,
            path: path.to_owned(),
        })
    }

    fn table_error(&self, table: &'static str) -> impl Fn(rusqlite::Error) -> DbReadError + '_ {
        move |source| DbReadError::Table {
            table,
            path: self.path.clone(),
            source,
        }
    }

    /// The `study_sessions.persona_hash` of session `id`.
    ///
    /// # Errors
    /// [`CheckError::Db`], [`CheckError::NoSessionRow`] or [`CheckError::SessionRow`]
    /// (the hash is `NULL` or empty).
    pub fn persona_hash(&self, id: &str) -> Result<String, CheckError> {
        let row = |what| CheckError::SessionRow {
            id: id.to_owned(),
            what,
        };
        let hash: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT persona_hash FROM study_sessions WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.table_error("study_sessions"))?;
        match hash {
            None => Err(CheckError::NoSessionRow {
                id: id.to_owned(),
                db: self.path.clone(),
            }),
            Some(None) => Err(row("no persona_hash")),
            Some(Some(h)) if h.is_empty() => Err(row("an empty persona_hash")),
            Some(Some(h)) => Ok(h),
        }
    }

    /// The `(confidence, study_session_id)` of the `study_progress` row whose concept is
    /// `concept`; `None`: no row.
    ///
    /// # Errors
    /// [`DbReadError::Table`].
    pub fn progress(&self, concept: &str) -> Result<Option<(String, String)>, DbReadError> {
        self.conn
            .query_row(
                "SELECT confidence, COALESCE(study_session_id, '') FROM study_progress WHERE concept = ?1",
                [concept],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.table_error("study_progress"))
    }

    /// Every row one study session left, table by table ([`TABLES`]).
    ///
    /// # Errors
    /// [`DbReadError::Table`] naming the table that could not be read.
    pub fn session_record(&self, study_id: &str) -> Result<SessionRecord, DbReadError> {
        TABLES
            .iter()
            .map(|(table, sql)| {
                rows(&self.conn, sql, study_id)
                    .map(|r| (*table, r))
                    .map_err(self.table_error(table))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(SessionRecord::from_tables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persona_hash_reads_the_row_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let c = Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE study_sessions (id TEXT PRIMARY KEY, persona_hash TEXT);
             INSERT INTO study_sessions VALUES ('a', '0123456789abcdef'), ('b', NULL);",
        )
        .unwrap();
        drop(c);
        let db = ProductDb::open(&db).unwrap();
        assert_eq!(db.persona_hash("a").unwrap(), "0123456789abcdef");
        let e = db.persona_hash("b").unwrap_err().to_string();
        assert!(e.contains("no persona_hash"), "{e}");
        let e = db.persona_hash("c").unwrap_err().to_string();
        assert!(e.contains("no study_sessions row"), "{e}");
        let e = db.progress("x").unwrap_err().to_string();
        assert!(e.contains("`study_progress`"), "{e}");
        let write = db.conn.execute("DELETE FROM study_sessions", []);
        assert!(write.is_err(), "the connection must be read-only");
    }

    #[test]
    fn a_missing_database_is_an_error_naming_it_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let db = ProductDb::path_in(dir.path());
        let e = ProductDb::open(&db).err().unwrap();
        assert!(matches!(e, DbReadError::Open { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains(DB_FILE) && e.contains("read-only"), "{e}");
        assert!(!db.exists());
    }
}
