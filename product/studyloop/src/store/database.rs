//! The database handle: opening (and creating, private 0600) the SQLite store and
//! migrating it to this build's schema.

use super::error::{StoreError, q};
use super::migrations;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::embed::Embedder;

use rusqlite::{Connection, OpenFlags};

/// An open history database.
#[derive(Debug)]
pub struct Store {
    pub(super) conn: Connection,
    path: PathBuf,
    /// When set, every message written is embedded in the same transaction.
    pub(super) embedder: Option<Arc<Embedder>>,
}

impl Store {
    /// Open (creating it 0600 in a 0700 dir if needed) and migrate.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            crate::fsutil::ensure_private_dir(dir).map_err(|source| StoreError::Dir {
                path: path.to_owned(),
                source,
            })?;
        }
        Self::refuse_special(path)?;
        let fresh = !path.exists();
        let mut conn = Connection::open(path).map_err(open_err)?;
        if fresh {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        migrations::migrate(&mut conn, path)?;
        Ok(Self {
            conn,
            path: path.to_owned(),
            embedder: None,
        })
    }

    /// Embed every message this handle writes with `e` (none: write without
    /// vectors; a later write with a model backfills them).
    #[must_use]
    pub fn with_embedder(mut self, e: Option<Arc<Embedder>>) -> Self {
        self.embedder = e;
        self
    }

    /// SQLite opens the DB only after this: absent or a regular file.
    fn refuse_special(path: &Path) -> Result<(), StoreError> {
        crate::fsutil::absent_or_regular(path).map_err(|source| StoreError::NotAFile {
            path: path.to_owned(),
            source,
        })
    }

    /// Open an existing DB read-only without migrating (`doctor`, `search`).
    /// `Ok(None)` when the file does not exist yet.
    pub fn open_read_only(path: &Path) -> Result<Option<Self>, StoreError> {
        Self::refuse_special(path)?;
        if !path.exists() {
            return Ok(None);
        }
        let open_err = |source| StoreError::Open {
            path: path.to_owned(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_err)?;
        Ok(Some(Self {
            conn,
            path: path.to_owned(),
            embedder: None,
        }))
    }

    /// The DB file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `PRAGMA user_version`.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(q("reading the schema version"))
    }

    /// How many tables the DB holds (a file that is not StudyLoop's has some
    /// but no schema version).
    pub fn table_count(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(q("counting the tables"))
    }

    /// Whether the DB has table `name` (`search` opens read-only without
    /// migrating, so an older DB may lack the newer tables).
    pub(super) fn has_table(&self, name: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [name],
                |r| r.get(0),
            )
            .map_err(q("reading the schema"))
    }

    /// The underlying connection, for this crate's tests.
    #[cfg(test)]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}
