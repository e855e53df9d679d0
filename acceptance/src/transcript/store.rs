//! Readers for the session stores the pinned harnesses keep under HOME, each
//! reduced to one conversation (role, text) so a turn's reply is found the
//! same way for all: the assistant text after the `n`-th real learner message
//! and before the next. "Real" is the stub's own rule
//! (`studyloop_stubs::is_boilerplate`), so the store and the stub count turns
//! alike (codex's `<environment_context>` message is no turn).
//!
//! Formats, measured on the pinned versions against the stub (samples in
//! `acceptance/tests/data/transcript/`):
//! - codex 0.171.0: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`;
//!   lines `{"type":"response_item","payload":{"type":"message","role":…,
//!   "content":[{"type":"input_text"|"output_text","text":…}]}}`.
//! - claude 2.1.332: `~/.claude/projects/<cwd, '/' and '.' as '-'>/<uuid>.jsonl`;
//!   lines `{"type":"user"|"assistant","message":{"role":…,"content":string |
//!   [{"type":"text","text":…}]}}` (tool results carry no text: no turn).
//! - pi 0.73.1: `~/.pi/agent/sessions/--<cwd, '/' as '-'>--/<time>_<uuid>.jsonl`;
//!   lines `{"type":"message","message":{"role":…,"content":[{"type":"text",…}]}}`.
//! - opencode 1.18.33: SQLite `~/.local/share/opencode/opencode.db`: tables
//!   `session` (newest top-level one), `message` (`data.role`) and `part`
//!   (`data.type == "text"`, not `synthetic`), ordered by creation.
//!
//! The newest file (or session) is the live one: a resume continues it (all
//! four append to the session they resume). Files are read through
//! `studyloop_regular_file` (no FIFO, no symlink, size-capped).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The largest session file read (a 3-turn lane writes well under 1 MiB).
const MAX_STORE_BYTES: u64 = 64 * 1024 * 1024;

pub use super::store_types::{Role, StoreError, StoreFormat, UNPARSABLE, UNPARSABLE_FIX};

/// The reply of turn `turn` (1-based, counted as the stub counts) in the
/// newest session of `format` under `home`.
///
/// # Errors
/// [`StoreError`].
pub fn reply(format: StoreFormat, home: &Path, turn: u64) -> Result<String, StoreError> {
    let (path, conversation, unparsable) = read(format, home)?;
    turn_reply(&conversation, turn).ok_or_else(|| StoreError::NoSuchTurn {
        found: learner_turns(&conversation),
        path,
        turn,
        unparsable,
    })
}

/// A store as read: its file, the conversation, the first unparsable record.
pub type Read = (PathBuf, Vec<(Role, String)>, Option<String>);

/// The newest session of `format` under `home` as (where, conversation,
/// first unparsable record).
///
/// The first unparsable record is the first of the file that no longer parses
/// as the pinned schema says (`None` for the SQLite store, and when every
/// record parsed), so a schema change names its record (`just drift`).
///
/// # Errors
/// [`StoreError`].
pub fn read(format: StoreFormat, home: &Path) -> Result<Read, StoreError> {
    let (dir, depth, suffix) = match format {
        // Depth = directories between the root and the session file:
        // YYYY/MM/DD for codex, the cwd slug for claude and pi (claude's
        // `<slug>/<uuid>/subagents/*.jsonl` are not the conversation).
        StoreFormat::CodexRollout => (home.join(".codex/sessions"), 3, ".jsonl"),
        StoreFormat::ClaudeProjects => (home.join(".claude/projects"), 1, ".jsonl"),
        StoreFormat::PiSessions => (home.join(".pi/agent/sessions"), 1, ".jsonl"),
        StoreFormat::OpencodeDb => {
            let path = home.join(".local/share/opencode/opencode.db");
            let conversation = super::store_sqlite::opencode(&path)?;
            return Ok((path, conversation, None));
        }
    };
    let path = newest(&dir, depth, suffix).ok_or_else(|| StoreError::Missing {
        format,
        dir: dir.clone(),
    })?;
    let bytes = studyloop_regular_file::read_regular(&path, MAX_STORE_BYTES).map_err(|source| {
        StoreError::Read {
            path: path.clone(),
            source,
        }
    })?;
    let text = String::from_utf8_lossy(&bytes);
    Ok((
        path,
        parse_jsonl(format, &text),
        first_unparsable(format, &text),
    ))
}

/// How much of a record an error quotes.
const QUOTED: usize = 240;

/// The first line of a JSONL session file that no longer parses as the pinned
/// schema: not JSON (except the last line, which may be being written), or a
/// record of a message kind (codex `response_item` of payload type `message`,
/// claude `user`/`assistant`, pi `message`) whose role or content is not where
/// the schema puts it. Quoted with its line number, cut at a char boundary.
pub(crate) fn first_unparsable(format: StoreFormat, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len().saturating_sub(1);
    lines.iter().enumerate().find_map(|(i, line)| {
        if line.trim().is_empty() {
            return None;
        }
        let bad = match serde_json::from_str::<Value>(line) {
            Err(_) => i != last,
            Ok(v) => is_message_kind(format, &v) && !has_message_shape(format, &v),
        };
        bad.then(|| {
            let cut = line.floor_char_boundary(QUOTED);
            let more = if cut < line.len() { "…" } else { "" };
            format!("line {}: {}{more}", i + 1, &line[..cut])
        })
    })
}

/// Whether a message-kind record has its message where the schema puts it: an
/// object with a string `role` and a string or array `content` (any role: codex
/// also stores `developer` messages, which are no turn but parse).
fn has_message_shape(format: StoreFormat, v: &Value) -> bool {
    let m = match format {
        StoreFormat::CodexRollout => v.get("payload"),
        _ => v.get("message"),
    };
    m.is_some_and(|m| {
        m.get("role").is_some_and(Value::is_string)
            && m.get("content")
                .is_some_and(|c| c.is_string() || c.is_array())
    })
}

/// Whether `v` is a record the schema says carries a message.
fn is_message_kind(format: StoreFormat, v: &Value) -> bool {
    let kind = v.get("type").and_then(Value::as_str);
    match format {
        StoreFormat::CodexRollout => {
            kind == Some("response_item")
                && v.pointer("/payload/type").and_then(Value::as_str) == Some("message")
        }
        StoreFormat::ClaudeProjects => matches!(kind, Some("user" | "assistant")),
        StoreFormat::PiSessions => kind == Some("message"),
        StoreFormat::OpencodeDb => false,
    }
}

/// The conversation in one JSONL session file; lines that are not JSON (a
/// line being written) or not messages are skipped.
pub(crate) fn parse_jsonl(format: StoreFormat, text: &str) -> Vec<(Role, String)> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|v| message(format, &v))
        .collect()
}

fn message(format: StoreFormat, v: &Value) -> Option<(Role, String)> {
    let kind = v.get("type").and_then(Value::as_str)?;
    let m = match (format, kind) {
        (StoreFormat::CodexRollout, "response_item") => v.get("payload")?,
        (StoreFormat::ClaudeProjects, "user" | "assistant")
        | (StoreFormat::PiSessions, "message") => v.get("message")?,
        _ => return None,
    };
    if format == StoreFormat::CodexRollout
        && m.get("type").and_then(Value::as_str) != Some("message")
    {
        return None;
    }
    let role = match m.get("role").and_then(Value::as_str)? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    Some((role, text_of(m.get("content")?)))
}

/// The text of a `content` field: a string, or the text blocks joined
/// (`text`, `input_text`, `output_text`; tool calls and results carry none).
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| {
                matches!(
                    p.get("type").and_then(Value::as_str),
                    Some("text" | "input_text" | "output_text")
                )
            })
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn is_turn(role: Role, text: &str) -> bool {
    role == Role::User && !studyloop_stubs::is_boilerplate(text)
}

fn learner_turns(conversation: &[(Role, String)]) -> u64 {
    conversation.iter().filter(|(r, t)| is_turn(*r, t)).count() as u64
}

/// The assistant text after the `turn`-th real learner message, up to the
/// next one (several assistant messages in one turn are joined by a blank
/// line); `None` when the session has no such turn or no reply to it yet.
pub(crate) fn turn_reply(conversation: &[(Role, String)], turn: u64) -> Option<String> {
    let mut seen = 0_u64;
    let mut parts: Vec<&str> = Vec::new();
    for (role, text) in conversation {
        if is_turn(*role, text) {
            seen += 1;
            if seen > turn {
                break;
            }
        } else if seen == turn && *role == Role::Assistant && !text.is_empty() {
            parts.push(text);
        }
    }
    (turn > 0 && seen >= turn && !parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The most recently modified regular file ending in `suffix` at most
/// `depth` directories below `dir` (symlinks are not followed).
fn newest(dir: &Path, depth: u32, suffix: &str) -> Option<PathBuf> {
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    let mut stack = vec![(dir.to_owned(), 0)];
    while let Some((d, level)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let path = entry.path();
            if meta.is_dir() && level < depth {
                stack.push((path, level + 1));
            } else if meta.is_file() && path.to_string_lossy().ends_with(suffix) {
                let at = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                if best.as_ref().is_none_or(|(t, p)| (at, &path) > (*t, p)) {
                    best = Some((at, path));
                }
            }
        }
    }
    best.map(|(_, p)| p)
}
