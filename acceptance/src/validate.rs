//! Validators a live lane runs beyond the mechanical ones: what reached the
//! model (the stub's request log), what the product stored (its SQLite DB,
//! opened read-only), and what was left behind (processes after the sweep).
//!
//! Each returns a [`CheckError`] naming the value seen and the one expected.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use studyloop_stubs::LogRecord;

mod check_error;

pub use check_error::CheckError;

/// The persona word the product's canonical study persona carries
/// (`<!-- PERSONA=studyloop-study -->`), as the stub reports it.
pub const STUDY_PERSONA: &str = "studyloop-study";

/// Reads `session-state.json`.
///
/// # Errors
/// [`CheckError::State`] when it cannot be read or is not JSON.
pub fn read_state(path: &Path) -> Result<serde_json::Value, CheckError> {
    let state = |detail: String| CheckError::State {
        path: path.to_owned(),
        detail,
    };
    let text = std::fs::read_to_string(path).map_err(|e| state(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| state(format!("not JSON: {e}")))
}

/// A string field of the state, or an error naming it.
///
/// # Errors
/// [`CheckError::StateField`].
pub fn state_str(state: &serde_json::Value, field: &str) -> Result<String, CheckError> {
    state
        .get(field)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| CheckError::StateField {
            field: field.to_owned(),
            state: state.to_string(),
        })
}

/// For each stub turn `n` in `turns`: the request that got the reply with
/// nonce(seed, n) carried the persona marker and exactly `n` real user turns
/// (the history length equals the turn number).
pub fn stub_history(
    records: &[LogRecord],
    seed: u64,
    turns: &[u64],
    persona: &str,
) -> Result<(), CheckError> {
    for &n in turns {
        let nonce = studyloop_stubs::nonce(seed, n);
        let prefix = format!("MENTOR-REPLY {n} {nonce}");
        // A side request (opencode's title generator) can be answered with the
        // same turn number; the turn is proven when one answer fits.
        let answered: Vec<&LogRecord> = records
            .iter()
            .filter(|r| r.reply.as_deref().is_some_and(|t| t.starts_with(&prefix)))
            .collect();
        let Some(first) = answered.first() else {
            return Err(CheckError::TurnUnanswered { n, nonce });
        };
        if answered
            .iter()
            .any(|r| r.user_turns == n && r.persona.as_deref() == Some(persona))
        {
            continue;
        }
        if first.user_turns != n {
            return Err(CheckError::HistoryLength {
                n,
                got: first.user_turns,
            });
        }
        return Err(CheckError::Persona {
            n,
            got: first.persona.clone(),
            want: persona.to_owned(),
        });
    }
    Ok(())
}

/// The reply to stub turn `n` is proven: with the cell's stub (`seed` given)
/// it carries that turn's nonce; without one (real auth) it is not blank.
///
/// # Errors
/// [`CheckError::ReplyNotProven`] or [`CheckError::EmptyReply`].
pub fn prove_reply(seed: Option<u64>, n: u64, reply: &str) -> Result<(), CheckError> {
    let Some(seed) = seed else {
        return if reply.trim().is_empty() {
            Err(CheckError::EmptyReply { n })
        } else {
            Ok(())
        };
    };
    let want = format!("MENTOR-REPLY {n} {}", studyloop_stubs::nonce(seed, n));
    if reply.contains(&want) {
        Ok(())
    } else {
        Err(CheckError::ReplyNotProven {
            n,
            reply: reply.to_owned(),
            want,
        })
    }
}

/// The `study_sessions.persona_hash` of session `id`, read with a read-only
/// connection (the lane never writes the product's DB).
///
/// # Errors
/// [`CheckError::Db`] or [`CheckError::SessionRow`].
pub fn db_persona_hash(db: &Path, id: &str) -> Result<String, CheckError> {
    let db_error = |detail: String| CheckError::Db {
        db: db.to_owned(),
        detail,
    };
    let row = |what| CheckError::SessionRow {
        id: id.to_owned(),
        what,
    };
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| db_error(format!("cannot open it read-only: {e}")))?;
    let hash: Option<Option<String>> = conn
        .query_row(
            "SELECT persona_hash FROM study_sessions WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| db_error(format!("querying study_sessions: {e}")))?;
    match hash {
        None => Err(CheckError::NoSessionRow {
            id: id.to_owned(),
            db: db.to_owned(),
        }),
        Some(None) => Err(row("no persona_hash")),
        Some(Some(h)) if h.is_empty() => Err(row("an empty persona_hash")),
        Some(Some(h)) => Ok(h),
    }
}

/// The `(confidence, study_session_id)` of the `study_progress` row whose
/// concept is `concept`, read over a read-only connection; `None`: no row.
///
/// # Errors
/// [`CheckError::Db`].
pub fn db_progress(db: &Path, concept: &str) -> Result<Option<(String, String)>, CheckError> {
    let db_error = |detail: String| CheckError::Db {
        db: db.to_owned(),
        detail,
    };
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| db_error(format!("cannot open it read-only: {e}")))?;
    conn.query_row(
        "SELECT confidence, COALESCE(study_session_id, '') FROM study_progress WHERE concept = ?1",
        [concept],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(|e| db_error(format!("querying study_progress: {e}")))
}

/// Every regular file under `dir` with its size: a cheap "did anything change".
pub fn tree_sizes(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                out.insert(e.path().display().to_string(), size);
            }
        }
    }
    out
}

/// Processes whose command line or environment mentions `root` (a scratch
/// tree): after the sweep there must be none. `pid: command` per process.
pub fn leftover_processes(root: &Path) -> Vec<String> {
    let needle = root.as_os_str().as_encoded_bytes();
    crate::procfs::processes_where(|cmdline, environ| {
        contains(cmdline, needle) || contains(environ, needle)
    })
    .into_iter()
    .map(|(pid, cmd)| format!("{pid}: {cmd}"))
    .collect()
}

/// Stops every process that still mentions `root` (a harness that forked out
/// of its pane's process group, or one still flushing its session files):
/// SIGTERM, then SIGKILL after `grace`, bounded by twice `grace`. Returns what
/// was signalled, for the evidence notes.
pub fn stop_leftovers(root: &Path, grace: std::time::Duration) -> Vec<String> {
    use rustix::process::{Pid, Signal, kill_process};
    let start = std::time::Instant::now();
    let mut signalled = Vec::new();
    loop {
        let left = leftover_processes(root);
        if left.is_empty() || start.elapsed() >= grace * 2 {
            return signalled;
        }
        let signal = if start.elapsed() < grace {
            Signal::TERM
        } else {
            Signal::KILL
        };
        for line in &left {
            let pid = line
                .split(':')
                .next()
                .and_then(|p| p.parse::<i32>().ok())
                .and_then(Pid::from_raw);
            if let Some(pid) = pid {
                let _ = kill_process(pid, signal);
            }
            if !signalled.contains(line) {
                signalled.push(line.clone());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: u64, seed: u64, persona: Option<&str>) -> LogRecord {
        let line = serde_json::json!({
            "seq": n, "time": "2026-11-30T00:00:00Z", "method": "POST", "path": "/v1/messages",
            "model": "stub-model", "protocol": "messages", "stream": true, "message_count": n,
            "user_turns": n, "persona": persona, "user_agent": null,
            "reply": format!("MENTOR-REPLY {n} {}: hello", studyloop_stubs::nonce(seed, n)),
            "usage": {"input_tokens": 1, "output_tokens": 1}, "status": 200, "fault": null
        });
        serde_json::from_value(line).expect("a LogRecord")
    }

    #[test]
    fn stub_history_needs_each_turn_with_its_history_and_persona() {
        let recs = vec![
            record(1, 7, Some(STUDY_PERSONA)),
            record(2, 7, Some(STUDY_PERSONA)),
        ];
        assert_eq!(stub_history(&recs, 7, &[1, 2], STUDY_PERSONA), Ok(()));
        let e = stub_history(&recs, 7, &[3], STUDY_PERSONA)
            .unwrap_err()
            .to_string();
        assert!(e.contains("turn 3"), "{e}");
        let e = stub_history(&recs, 8, &[1], STUDY_PERSONA)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nonce"), "{e}");
        let wrong = vec![record(1, 7, Some("other"))];
        assert!(
            stub_history(&wrong, 7, &[1], STUDY_PERSONA)
                .unwrap_err()
                .to_string()
                .contains("persona")
        );
    }

    #[test]
    fn db_persona_hash_reads_the_row_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let c = Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE study_sessions (id TEXT PRIMARY KEY, persona_hash TEXT);
             INSERT INTO study_sessions VALUES ('a', '0123456789abcdef'), ('b', NULL);",
        )
        .unwrap();
        drop(c);
        assert_eq!(db_persona_hash(&db, "a").unwrap(), "0123456789abcdef");
        assert!(
            db_persona_hash(&db, "b")
                .unwrap_err()
                .to_string()
                .contains("no persona_hash")
        );
        assert!(
            db_persona_hash(&db, "c")
                .unwrap_err()
                .to_string()
                .contains("no study_sessions row")
        );
    }

    #[test]
    fn leftovers_finds_a_process_mentioning_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("MARK", dir.path())
            .spawn()
            .unwrap();
        // Until the child has exec'd, its /proc entry still shows our env.
        let cmdline = format!("/proc/{}/cmdline", child.id());
        for _ in 0..200 {
            if std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sleep")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let found = leftover_processes(dir.path());
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.iter().any(|l| l.contains("sleep 30")), "{found:?}");
        assert!(leftover_processes(dir.path()).is_empty());
    }
}
