//! The line transport under the ACP client: newline-delimited JSON over the
//! agent's stdin/stdout, with a check on every inbound line.
//!
//! A line that is not JSON ends the incoming stream (the connection sees EOF),
//! raises a `transport_error` naming the bad line, and marks the session as
//! ended by error: an agent that breaks framing cannot be trusted further, but
//! it must never take the server down with it. The same happens to a line
//! longer than [`MAX_LINE_BYTES`] (output without newlines): it is never held
//! whole, so an agent cannot grow the server's memory without bound.
//!
//! It also learns the ACP session id here, from the `session/new` answer as it
//! comes off the wire ([`SessionWatch`]): a request the agent sends right after
//! that answer must find it known, and the crate hands the answer to the
//! waiting handshake only after it has moved on to the next line.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use super::events::{AcpEvent, EventQueue};

/// How much of a malformed line is quoted in the error.
const QUOTE_CHARS: usize = 120;
/// The longest line (one JSON-RPC message) accepted from an agent.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One inbound line, or why there is none.
enum Line {
    Text(String),
    TooLong,
    NotUtf8,
}

/// Reads one `\n`-terminated line of at most `max` bytes; `None` at EOF.
async fn next_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            if line.is_empty() {
                return Ok(None);
            }
            break;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max + 1 {
            return Ok(Some(Line::TooLong));
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if done {
            line.pop();
            break;
        }
    }
    Ok(Some(
        String::from_utf8(line).map_or(Line::NotUtf8, Line::Text),
    ))
}

/// Set once the agent sent a line that is not JSON.
#[derive(Debug, Clone, Default)]
pub struct MalformedFlag(Arc<AtomicBool>);

impl MalformedFlag {
    /// Whether a malformed line was seen.
    #[must_use]
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// File content handed to the connection but not yet written to the agent's
/// stdin: an agent that asks for files and never reads the answers would
/// otherwise grow the outgoing queue without bound.
#[derive(Debug, Clone, Default)]
pub struct Backlog(Arc<AtomicUsize>);

/// The backlog beyond which file reads are refused.
pub const MAX_BACKLOG_BYTES: usize = 32 * 1024 * 1024;

impl Backlog {
    /// Counts `n` bytes queued for the agent.
    pub fn add(&self, n: usize) {
        self.0.fetch_add(n, Ordering::AcqRel);
    }

    /// Counts `n` bytes written to the agent (never below zero).
    fn written(&self, n: usize) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
                Some(b.saturating_sub(n))
            });
    }

    /// Bytes still waiting.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

/// The ACP session id, set from the `session/new` answer the moment it is read
/// (before any later line), and the id of our `session/new` request it answers.
#[derive(Debug, Clone, Default)]
pub struct SessionWatch {
    request: Arc<Mutex<Option<Value>>>,
    session: Arc<OnceLock<String>>,
}

impl SessionWatch {
    /// The session id, once `session/new` has answered.
    #[must_use]
    pub fn session_id(&self) -> Option<&str> {
        self.session.get().map(String::as_str)
    }

    /// Notes the id of an outgoing `session/new` request.
    fn sent(&self, line: &str) {
        // Cheap test first: file answers can be megabytes long.
        if !line.contains("\"session/new\"") {
            return;
        }
        if let Ok(frame) = serde_json::from_str::<Value>(line)
            && frame["method"] == "session/new"
        {
            *self
                .request
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(frame["id"].clone());
        }
    }

    /// Takes the session id from the answer to our `session/new`.
    fn received(&self, frame: &Value) {
        let asked = self
            .request
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if asked.is_some_and(|id| frame.get("id") == Some(&id))
            && let Some(sid) = frame["result"]["sessionId"].as_str()
        {
            let _ = self.session.set(sid.to_owned());
        }
    }
}

type Outgoing = std::pin::Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>;
type Incoming = std::pin::Pin<Box<dyn Stream<Item = std::io::Result<String>> + Send>>;

/// Wraps the agent's pipes as the crate's line transport.
pub fn lines(
    stdin: ChildStdin,
    stdout: ChildStdout,
    events: Arc<EventQueue>,
    watch: SessionWatch,
) -> (Lines<Outgoing, Incoming>, MalformedFlag, Backlog) {
    let flag = MalformedFlag::default();
    let backlog = Backlog::default();
    let sent = backlog.clone();
    let watch_out = watch.clone();
    let outgoing: Outgoing = Box::pin(futures::sink::unfold(
        stdin,
        move |mut stdin: ChildStdin, mut line: String| {
            let sent = sent.clone();
            watch_out.sent(&line);
            async move {
                if !line.ends_with('\n') {
                    line.push('\n');
                }
                stdin.write_all(line.as_bytes()).await?;
                stdin.flush().await?;
                sent.written(line.len());
                Ok::<_, std::io::Error>(stdin)
            }
        },
    ));
    let state = (BufReader::new(stdout), events, flag.clone(), watch);
    let incoming: Incoming = Box::pin(futures::stream::unfold(Some(state), async |state| {
        let (mut reader, events, flag, watch) = state?;
        loop {
            let problem = match next_line(&mut reader, MAX_LINE_BYTES).await {
                Err(e) => return Some((Err(e), None)),
                Ok(None) => return None,
                Ok(Some(Line::Text(line))) if line.trim().is_empty() => continue,
                Ok(Some(Line::Text(line))) => {
                    if let Ok(frame) = serde_json::from_str::<Value>(&line) {
                        watch.received(&frame);
                        return Some((Ok(line), Some((reader, events, flag, watch))));
                    }
                    let quoted: String = line.chars().take(QUOTE_CHARS).collect();
                    format!("a line that is not JSON-RPC ({quoted:?})")
                }
                Ok(Some(Line::TooLong)) => {
                    format!("more than {MAX_LINE_BYTES} bytes without a newline")
                }
                Ok(Some(Line::NotUtf8)) => "a line that is not UTF-8".to_owned(),
            };
            flag.0.store(true, Ordering::Release);
            events.push(AcpEvent::TransportError {
                message: format!("the agent sent {problem}; ending the session"),
            });
            return None;
        }
    }));
    (Lines::new(outgoing, incoming), flag, backlog)
}
