//! The line transport under the ACP client: newline-delimited JSON over the
//! agent's stdin/stdout, with a check on every inbound line.
//!
//! A line that is not JSON ends the incoming stream (the connection sees EOF),
//! raises a `transport_error` naming the bad line, and marks the session as
//! ended by error: an agent that breaks framing cannot be trusted further, but
//! it must never take the server down with it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use super::events::{AcpEvent, EventQueue};

/// How much of a malformed line is quoted in the error.
const QUOTE_CHARS: usize = 120;

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

type Outgoing = std::pin::Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>;
type Incoming = std::pin::Pin<Box<dyn Stream<Item = std::io::Result<String>> + Send>>;

/// Wraps the agent's pipes as the crate's line transport.
pub fn lines(
    stdin: ChildStdin,
    stdout: ChildStdout,
    events: Arc<EventQueue>,
) -> (Lines<Outgoing, Incoming>, MalformedFlag) {
    let flag = MalformedFlag::default();
    let outgoing: Outgoing = Box::pin(futures::sink::unfold(
        stdin,
        async |mut stdin: ChildStdin, mut line: String| {
            if !line.ends_with('\n') {
                line.push('\n');
            }
            stdin.write_all(line.as_bytes()).await?;
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        },
    ));
    let state = (BufReader::new(stdout).lines(), events, flag.clone());
    let incoming: Incoming = Box::pin(futures::stream::unfold(Some(state), async |state| {
        let (mut reader, events, flag) = state?;
        loop {
            match reader.next_line().await {
                Err(e) => return Some((Err(e), None)),
                Ok(None) => return None,
                Ok(Some(line)) if line.trim().is_empty() => {}
                Ok(Some(line)) => {
                    if serde_json::from_str::<serde_json::Value>(&line).is_ok() {
                        return Some((Ok(line), Some((reader, events, flag))));
                    }
                    flag.0.store(true, Ordering::Release);
                    let quoted: String = line.chars().take(QUOTE_CHARS).collect();
                    events.push(AcpEvent::TransportError {
                        message: format!(
                            "the agent sent a line that is not JSON-RPC ({quoted:?}); \
                                 ending the session"
                        ),
                    });
                    return None;
                }
            }
        }
    }));
    (Lines::new(outgoing, incoming), flag)
}
