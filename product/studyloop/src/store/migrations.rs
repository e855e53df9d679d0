//! Forward-only schema migrations. Migration `i` (0-based) moves the DB from
//! `user_version = i` to `i + 1`. Never edit a shipped migration; append.

use std::path::Path;

use rusqlite::Connection;

use super::error::{StoreError, q};

/// Every migration, in order.
pub(super) const MIGRATIONS: &[&str] = &[
    // v1: history (sessions, messages, FTS5) and study tables.
    "
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        project_path TEXT,
        git_branch TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        metadata TEXT
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        parent_id INTEGER,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        model TEXT,
        timestamp TEXT NOT NULL,
        metadata TEXT,
        seq INTEGER
    );
    CREATE INDEX messages_by_session ON messages(session_id, seq);
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, session_id UNINDEXED, role UNINDEXED,
        content = 'messages', content_rowid = 'id', tokenize = 'porter unicode61'
    );
    CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, content, session_id, role) VALUES (new.id, new.content, new.session_id, new.role);
    END;
    CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content, session_id, role) VALUES ('delete', old.id, old.content, old.session_id, old.role);
    END;
    CREATE TRIGGER messages_fts_au AFTER UPDATE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content, session_id, role) VALUES ('delete', old.id, old.content, old.session_id, old.role);
        INSERT INTO messages_fts(rowid, content, session_id, role) VALUES (new.id, new.content, new.session_id, new.role);
    END;
    CREATE TABLE study_sessions (
        id TEXT PRIMARY KEY,
        session_id TEXT,
        topic TEXT NOT NULL,
        energy_level TEXT,
        energy INTEGER,
        mode TEXT,
        agent TEXT,
        tmux_session TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        duration_minutes INTEGER,
        pomodoro_cycles INTEGER,
        notes TEXT,
        created_at TEXT NOT NULL,
        persona_hash TEXT,
        win_count INTEGER,
        struggle_count INTEGER,
        topic_slug TEXT,
        outcome TEXT NOT NULL DEFAULT 'active'
    );
    CREATE TABLE study_progress (
        id INTEGER PRIMARY KEY,
        topic TEXT NOT NULL,
        concept TEXT NOT NULL,
        confidence TEXT NOT NULL,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        session_count INTEGER NOT NULL DEFAULT 1,
        notes TEXT,
        study_session_id TEXT,
        UNIQUE (topic, concept)
    );
    ",
    // v2: the study-plan index (rebuilt from the documents by `plan reindex`)
    // and the append-only checkpoint log (kept when a plan is deleted).
    "
    CREATE TABLE study_plans (
        plan_id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        target_date TEXT,
        energy_floor INTEGER,
        milestone_done INTEGER NOT NULL,
        milestone_total INTEGER NOT NULL,
        next_milestone_index INTEGER,
        ready INTEGER NOT NULL,
        path TEXT NOT NULL
    );
    CREATE INDEX study_plans_by_status ON study_plans(status, updated);
    CREATE TABLE study_plan_checkpoints (
        id INTEGER PRIMARY KEY,
        plan_id TEXT NOT NULL,
        phase TEXT NOT NULL,
        study_id TEXT NOT NULL DEFAULT '',
        recorded_at TEXT NOT NULL,
        milestone_done INTEGER NOT NULL,
        milestone_total INTEGER NOT NULL,
        note TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX study_plan_checkpoints_by_plan ON study_plan_checkpoints(plan_id, id);
    ",
    // v3: one embedding per message for the hybrid search, written with the
    // message (or backfilled); `model` names the model that made it, so a
    // vector of another model is treated as missing, never compared.
    "
    CREATE TABLE message_vectors (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    );
    ",
    // v4: the spec captures folded in at the end (session::spec), one JSON
    // document per session; NULL = none recorded (older rows, or no end yet).
    "
    ALTER TABLE study_sessions ADD COLUMN spec_captures TEXT;
    ",
    // v5: conversation turns (store::turns). A turn's text is its `messages`
    // row (one copy, so it is in messages_fts and message_vectors like every
    // other line); this table names which messages are turns, and which turn.
    "
    CREATE TABLE turns (
        message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        role TEXT NOT NULL,
        UNIQUE (session_id, turn_id, role)
    );
    ",
    // v6: the request ledger (store::requests): which entity each `request_id`
    // created, bound to the digest of what was asked, so a retried create returns
    // the first one's entity and creates nothing. Kept after the entity is deleted,
    // so a late retry cannot quietly create it again.
    "
    CREATE TABLE requests (
        request_id TEXT PRIMARY KEY,
        command TEXT NOT NULL,
        body_sha256 TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    ",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

pub(super) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let current: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(q("reading the schema version"))?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found: current,
            known: SCHEMA_VERSION,
        });
    }
    if current == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(q("starting the migration"))?;
    // Re-read inside the lock: another process may have migrated meanwhile.
    let current: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(q("reading the schema version"))?;
    let start = usize::try_from(current).unwrap_or(0);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(start) {
        tx.execute_batch(sql).map_err(q("migrating the schema"))?;
        tx.pragma_update(
            None,
            "user_version",
            i64::try_from(i + 1).unwrap_or(i64::MAX),
        )
        .map_err(q("recording the schema version"))?;
    }
    tx.commit().map_err(q("committing the migration"))
}

#[cfg(test)]
mod tests {
    use super::super::Store;
    use super::*;

    #[test]
    fn migrates_once_and_refuses_newer() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("db/sessions.db");
        let s = Store::open(&p).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        let mode: String = s
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(s);
        let s = Store::open(&p).unwrap();
        s.conn()
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(s);
        assert!(matches!(Store::open(&p), Err(StoreError::TooNew { .. })));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
