//! The stub provider's request log: one [`LogRecord`] per request, one JSON object
//! per line, so validators can prove what reached the model (persona marker, user
//! turns, the reply and its nonce, usage) without trusting the harness's screen.
//!
//! The log never holds request bodies or credentials: only the derived facts below.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// Which wire protocol a request used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// OpenAI Chat Completions (`…/chat/completions`).
    ChatCompletions,
    /// OpenAI Responses (`…/responses`).
    Responses,
    /// Anthropic Messages (`…/messages`).
    Messages,
    /// Anthropic token counting (`…/messages/count_tokens`).
    CountTokens,
    /// Model listing (`GET …/models`).
    Models,
    /// A liveness probe (`HEAD` anything, `GET /`, `GET /health`).
    Probe,
    /// Any other path (answered 404).
    Unknown,
}

/// Token counts the stub reported for one request (`None` = not applicable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsageRecord {
    /// Input tokens reported in the response's usage fields.
    pub input_tokens: Option<u64>,
    /// Output tokens reported in the response's usage fields.
    pub output_tokens: Option<u64>,
}

/// One request as the stub saw and answered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// 1-based order of arrival within this stub process.
    pub seq: u64,
    /// When the request arrived, RFC 3339 UTC.
    pub time: String,
    /// HTTP method.
    pub method: String,
    /// Request path without the query string.
    pub path: String,
    /// The `model` field of the request body, when present.
    pub model: Option<String>,
    /// The protocol the path selected.
    pub protocol: Protocol,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// Messages (or Responses input items) in the request.
    pub message_count: u64,
    /// Real user turns in the request (the `n` of the reply).
    pub user_turns: u64,
    /// The persona word found after `PERSONA=`, if any.
    pub persona: Option<String>,
    /// SHA-256 (lowercase hex) of the last real user text, exactly as it
    /// arrived (trimmed, newlines kept): lets a validator prove a multi-line
    /// turn reached the model whole without the log holding the text.
    #[serde(default)]
    pub user_text_sha256: Option<String>,
    /// The output cap the client asked for (`max_tokens`,
    /// `max_completion_tokens` or `max_output_tokens`), when it sent one:
    /// proves a learner's token budget reached its model request.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// The first struggle of the product's resume section found in the
    /// request (proves the harness passed the resume context to the model).
    #[serde(default)]
    pub recall: Option<String>,
    /// The derived facts of a drill's `practice_check` block in the last user
    /// text (bounded, labelled, every output line prefixed), never its text.
    #[serde(default)]
    pub practice_check: Option<crate::practice::PracticeCheck>,
    /// The client's `User-Agent`, which tells harnesses apart.
    pub user_agent: Option<String>,
    /// The full reply text the stub generated, when it generated one.
    pub reply: Option<String>,
    /// The usage reported to the client.
    pub usage: UsageRecord,
    /// HTTP status sent (200 even when a fault later truncates the body).
    pub status: u16,
    /// The injected fault applied to this request, e.g. `fail-status 429`,
    /// `stall 500ms`, `truncate after 3 events`.
    pub fault: Option<String>,
    /// The scripted tool call this request was answered with (`--tool-script`).
    #[serde(default)]
    pub tool_call: Option<ToolCallRecord>,
    /// The text of the tool result this request carried after the last user
    /// text (first 200 characters): the follow-up to a scripted call.
    #[serde(default)]
    pub tool_result: Option<String>,
    /// Why a matching scripted call was not made (its tool was not offered).
    #[serde(default)]
    pub tool_note: Option<String>,
}

/// A scripted tool call as the stub sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The offered tool's full name, as called (e.g. `mcp__studyloop__log_topic`).
    pub name: String,
    /// The call id sent (`call_stub_<seq>` or `toolu_stub_<seq>`).
    pub id: String,
    /// The arguments, as the JSON text sent.
    pub arguments: String,
}

/// Why the request log could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The log file could not be opened for appending.
    #[error("cannot open the stub request log {path}: {source} (pass a writable --log path)")]
    Open {
        /// The path given.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// An append-only JSON-lines file of [`LogRecord`]s (0600, `O_APPEND`): each
/// record is written with one `write` so concurrent writers never interleave.
#[derive(Debug)]
pub struct RequestLog {
    file: Mutex<File>,
}

impl RequestLog {
    /// Opens (creating 0600 if needed) `path` for appending.
    pub fn open(path: &Path) -> Result<Self, LogError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|source| LogError::Open {
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    /// Appends one record. A failed write is reported on stderr and otherwise
    /// ignored: losing a log line must not fail the request being served.
    pub fn append(&self, record: &LogRecord) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(err) => {
                eprintln!("studyloop-stub-provider: cannot encode log record: {err}");
                return;
            }
        };
        line.push(b'\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Err(err) = file.write_all(&line) {
            eprintln!("studyloop-stub-provider: cannot write the request log: {err}");
        }
    }

    /// Reads every record of a log file, in order (for validators and tests).
    pub fn read_all(path: &Path) -> std::io::Result<Vec<LogRecord>> {
        let text = std::fs::read_to_string(path)?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(std::io::Error::other))
            .collect()
    }
}
