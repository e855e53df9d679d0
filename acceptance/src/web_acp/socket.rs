//! The session WebSocket from the driver's side (synchronous tungstenite over
//! a plain loopback `TcpStream`): send JSON frames, read frames with a
//! deadline, and keep every frame exchanged for the evidence bundle.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::protocol::WebSocket;
use tungstenite::{Message, client::IntoClientRequest};

/// Why the socket failed.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// Connecting or the upgrade failed (the text says which, with the status).
    #[error("cannot open ws://{addr}{path}: {detail}")]
    Connect {
        /// host:port.
        addr: String,
        /// The path and query.
        path: String,
        /// What failed.
        detail: String,
    },
    /// The socket closed or broke.
    #[error("the session socket failed: {0}")]
    Io(String),
}

/// A frame read from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A JSON text frame.
    Json(Value),
    /// Raw PTY bytes.
    Bytes(Vec<u8>),
}

/// How long one blocking read may last before the interrupt flag is looked at.
const INTERRUPT_SLICE: Duration = Duration::from_millis(200);

/// One direction-tagged frame for the transcript.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Logged {
    /// `in` (server→driver) or `out`.
    pub dir: &'static str,
    /// Milliseconds since the socket opened.
    pub ms: u64,
    /// The frame (binary frames are summarised by length).
    pub frame: Value,
}

/// An open session socket.
#[derive(Debug)]
pub struct SessionSocket {
    ws: WebSocket<TcpStream>,
    opened: Instant,
    /// Every frame, in order.
    pub log: Vec<Logged>,
}

impl SessionSocket {
    /// Opens `ws_url` (a path such as `/api/session/ws?study_session_id=…`) on
    /// `addr`, with `origin` as the Origin header when given.
    ///
    /// # Errors
    /// [`SocketError::Connect`] with the HTTP status when the server refused.
    pub fn open(addr: &str, ws_url: &str, origin: Option<&str>) -> Result<Self, SocketError> {
        let fail = |detail: String| SocketError::Connect {
            addr: addr.into(),
            path: ws_url.into(),
            detail,
        };
        let mut req = format!("ws://{addr}{ws_url}")
            .into_client_request()
            .map_err(|e| fail(e.to_string()))?;
        if let Some(o) = origin {
            let value = o.parse().map_err(|_| fail(format!("bad origin {o:?}")))?;
            req.headers_mut().insert("origin", value);
        }
        if let Some(t) = super::console_token::of(addr) {
            let value = t
                .parse()
                .map_err(|_| fail("a console token that is no header value".into()))?;
            req.headers_mut()
                .insert(super::console_token::HEADER, value);
        }
        let stream = TcpStream::connect(addr).map_err(|e| fail(e.to_string()))?;
        let (ws, _) = tungstenite::client(req, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(tungstenite::Error::Http(resp)) => {
                fail(format!("HTTP {}", resp.status().as_u16()))
            }
            other => fail(other.to_string()),
        })?;
        Ok(Self {
            ws,
            opened: Instant::now(),
            log: Vec::new(),
        })
    }

    fn ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Sends one JSON frame.
    ///
    /// # Errors
    /// [`SocketError::Io`] when the socket is gone.
    pub fn send(&mut self, frame: &Value) -> Result<(), SocketError> {
        let ms = self.ms();
        self.log.push(Logged {
            dir: "out",
            ms,
            frame: frame.clone(),
        });
        self.ws
            .send(Message::Text(frame.to_string().into()))
            .map_err(|e| SocketError::Io(e.to_string()))
    }

    /// The next frame, or `Ok(None)` when `deadline` passes first.
    ///
    /// # Errors
    /// [`SocketError::Io`] when the socket closed or broke.
    pub fn next(&mut self, deadline: Instant) -> Result<Option<Frame>, SocketError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            // A Ctrl-C ends the wait within one slice, whatever the server does.
            crate::interrupt::check("the next session frame")
                .map_err(|e| SocketError::Io(e.to_string()))?;
            let stream = self.ws.get_mut();
            let slice = left.min(INTERRUPT_SLICE).max(Duration::from_millis(1));
            let _ = stream.set_read_timeout(Some(slice));
            match self.ws.read() {
                Ok(Message::Text(t)) => {
                    let v: Value =
                        serde_json::from_str(&t).unwrap_or_else(|_| json!({"raw": t.as_str()}));
                    let ms = self.ms();
                    self.log.push(Logged {
                        dir: "in",
                        ms,
                        frame: v.clone(),
                    });
                    return Ok(Some(Frame::Json(v)));
                }
                Ok(Message::Binary(b)) => {
                    let ms = self.ms();
                    self.log.push(Logged {
                        dir: "in",
                        ms,
                        frame: json!({"binary_bytes": b.len()}),
                    });
                    return Ok(Some(Frame::Bytes(b.to_vec())));
                }
                Ok(Message::Close(_)) => {
                    return Err(SocketError::Io("the server closed the socket".into()));
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(SocketError::Io(e.to_string())),
            }
        }
    }

    /// Closes politely (errors ignored: the session may already be over).
    pub fn close(mut self) -> Vec<Logged> {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
        self.log
    }
}
