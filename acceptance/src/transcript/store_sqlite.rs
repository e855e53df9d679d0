//! opencode 1.18.33's session store: SQLite at
//! `~/.local/share/opencode/opencode.db` (WAL mode, written while the TUI
//! runs). Read-only, with a busy timeout, after a regular-file check (no FIFO,
//! no symlink). The newest top-level session is the live one; its messages in
//! creation order, each the concatenation of its `text` parts (synthetic parts
//! opencode adds for attached files are not the learner's or model's words).

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::store_types::{Role, StoreError, StoreFormat};

/// How long a read waits for opencode's own write transaction.
const BUSY: Duration = Duration::from_secs(2);

/// The conversation of the newest top-level session in `path`.
pub(super) fn opencode(path: &Path) -> Result<Vec<(Role, String)>, StoreError> {
    match studyloop_regular_file::open_regular(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StoreError::Missing {
                format: StoreFormat::OpencodeDb,
                dir: path.to_owned(),
            });
        }
        Err(source) => {
            return Err(StoreError::Read {
                path: path.to_owned(),
                source,
            });
        }
    }
    let sql = |source| StoreError::Sqlite {
        path: path.to_owned(),
        source,
    };
    let db = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    db.busy_timeout(BUSY).map_err(sql)?;
    let session: Option<String> = db
        .query_row(
            "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_updated DESC, id DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(sql)?;
    let Some(session) = session else {
        return Err(StoreError::Missing {
            format: StoreFormat::OpencodeDb,
            dir: path.to_owned(),
        });
    };
    let mut stmt = db
        .prepare(
            "SELECT m.id, m.data, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id \
             WHERE m.session_id = ?1 ORDER BY m.time_created, m.id, p.time_created, p.id",
        )
        .map_err(sql)?;
    let rows = stmt
        .query_map([&session], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
            ))
        })
        .map_err(sql)?;
    let mut out: Vec<(String, Role, String)> = Vec::new();
    for row in rows {
        let (id, message, part) = row.map_err(sql)?;
        let role = match serde_json::from_str::<Value>(&message)
            .ok()
            .and_then(|m| m.get("role").and_then(Value::as_str).map(str::to_owned))
            .as_deref()
        {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => continue,
        };
        if out.last().is_none_or(|(last, _, _)| *last != id) {
            out.push((id, role, String::new()));
        }
        let text = part
            .and_then(|p| serde_json::from_str::<Value>(&p).ok())
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter(|p| p.get("synthetic").and_then(Value::as_bool) != Some(true))
            .and_then(|p| p.get("text").and_then(Value::as_str).map(str::to_owned));
        if let (Some(text), Some(last)) = (text, out.last_mut()) {
            last.2.push_str(&text);
        }
    }
    Ok(out
        .into_iter()
        .map(|(_, role, text)| (role, text))
        .collect())
}
