//! `studyloop export SESSION [--out PATH]` (issue 30 item 3, seed D-21(4)):
//! one self-describing JSON artefact of a session, built from what the record
//! holds today: the row's metadata and persona hash, the progress rows it
//! wrote, the logged topic and parking lines, the spec captures
//! ([`crate::session::spec`]) and a SHA-256 of the content. Its JSON Schema is
//! `docs/schemas/session-export.schema.json`.
//!
//! A source the record does not hold is `null`, never an empty list that
//! would claim "there were none": conversation turns are recorded only for
//! web console sessions over ACP (`store::turns`; a tmux session's are not),
//! so a session with none recorded has `turns: null`; and a session that has
//! not ended has no log yet.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::store::{Store, StoreError};

/// The artefact's `format` value.
pub const FORMAT: &str = "studyloop.session-export";
/// The artefact's `format_version`.
pub const FORMAT_VERSION: u64 = 1;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// No session has this id.
    #[error(
        "no study session has the id `{id}`; list the sessions with `studyloop export --list` and pass one of their ids"
    )]
    Unknown {
        /// The id asked for.
        id: String,
    },
    /// `--out` names an existing file.
    #[error(
        "{} already exists; pass --force to overwrite it, or choose another --out path",
        path.display()
    )]
    Exists {
        /// The path.
        path: PathBuf,
    },
    /// Writing `--out`.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The store.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `(id, topic, started_at, outcome)` of every session, newest first.
pub fn list(db: &Path) -> Result<Vec<(String, String, String, String)>, ExportError> {
    Ok(Store::open(db)?.list_study_sessions()?)
}

/// The artefact of session `id`.
pub fn build(db: &Path, id: &str, exported_at: &str) -> Result<Value, ExportError> {
    let store = Store::open(db)?;
    let row = store
        .study_session(id)?
        .ok_or_else(|| ExportError::Unknown { id: id.to_owned() })?;
    let progress: Vec<Value> = store
        .progress_of_session(id)?
        .into_iter()
        .map(|p| {
            json!({
                "concept": p.concept,
                "confidence": p.confidence,
                "note": p.note,
                "last_seen": p.last_seen,
            })
        })
        .collect();
    let log = store.log_of_session(id)?;
    // The end writes the log only when the feeds held something; an ended
    // session without one logged nothing ([]), an active one has no log yet.
    let (topics, parked) =
        if let Some(lines) = log.or_else(|| (row.outcome == "ended").then(Vec::new)) {
            // close_row writes parked lines as "<topic> — parked: <question>".
            let marker = " — parked: ";
            let (parked, topics): (Vec<String>, Vec<String>) =
                lines.into_iter().partition(|l| l.contains(marker));
            let parked: Vec<String> = parked
                .iter()
                .filter_map(|l| l.split_once(marker).map(|(_, q)| q.to_owned()))
                .collect();
            (json!(topics), json!(parked))
        } else {
            (Value::Null, Value::Null)
        };
    let turns = store.turns_of_session(id)?;
    let turns = if turns.is_empty() {
        Value::Null
    } else {
        turns
            .into_iter()
            .map(|t| {
                json!({
                    "turn_id": t.turn_id,
                    "role": t.role,
                    "text": t.text,
                    "created_at": t.created_at,
                })
            })
            .collect()
    };
    let spec_captures = row
        .spec_captures
        .as_deref()
        .and_then(|s| serde_json::from_str::<Value>(s).ok());
    let content = json!({
        "session": {
            "id": row.id,
            "topic": row.topic,
            "topic_slug": row.topic_slug,
            "mode": row.mode,
            "agent": row.agent,
            "energy": row.energy,
            "energy_level": row.energy_level,
            "tmux_session": row.tmux_session,
            "started_at": row.started_at,
            "ended_at": row.ended_at,
            "duration_minutes": row.duration_minutes,
            "outcome": row.outcome,
            "notes": row.notes,
            "win_count": row.win_count,
            "struggle_count": row.struggle_count,
        },
        "persona_hash": row.persona_hash,
        "topics": topics,
        "progress": progress,
        "parked": parked,
        "turns": turns,
        "spec_captures": spec_captures,
    });
    let checksum = content_sha256(&content);
    Ok(json!({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "exported_at": exported_at,
        "studyloop_version": env!("CARGO_PKG_VERSION"),
        "content": content,
        "checksum": {
            "algorithm": "sha256",
            "covers": "content, serialised as compact JSON with object keys sorted",
            "value": checksum,
        },
    }))
}

/// SHA-256 (hex) of `content` as compact JSON with sorted keys (serde_json's
/// default map is ordered by key, so serialising a parsed artefact's
/// `content` gives the same bytes back).
pub fn content_sha256(content: &Value) -> String {
    let bytes = serde_json::to_vec(content).unwrap_or_default();
    crate::ids::hex(&Sha256::digest(&bytes))
}

/// Write `bytes` to `path` atomically, 0600; an existing `path` is refused
/// unless `force` (then replaced by rename, never written in place).
pub fn write_out(path: &Path, bytes: &[u8], force: bool) -> Result<(), ExportError> {
    let err = |source| ExportError::Write {
        path: path.to_owned(),
        source,
    };
    if force {
        return crate::fsutil::atomic_write(path, bytes, 0o600).map_err(err);
    }
    if path.symlink_metadata().is_ok() {
        return Err(ExportError::Exists {
            path: path.to_owned(),
        });
    }
    // Written beside the target, then hard-linked into place: link(2) refuses
    // an existing name, so a file made meanwhile is never clobbered either.
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        crate::ids::random_hex(4)
    ));
    crate::fsutil::atomic_write(&tmp, bytes, 0o600).map_err(err)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ExportError::Exists {
            path: path.to_owned(),
        }),
        Err(e) => Err(err(e)),
    }
}
