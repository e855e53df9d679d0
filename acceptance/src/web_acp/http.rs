//! A minimal synchronous HTTP/1.1 JSON client for the product's loopback web
//! API: one request per connection (`Connection: close`), a deadline on every
//! read and write, the status and the parsed JSON body back.
//!
//! Only for `127.0.0.1` servers this tier starts itself; it is not a general
//! client (no TLS, no redirects, no chunked request bodies).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// Why a request failed before an HTTP status was read.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Connecting, writing or reading failed.
    #[error("{method} http://{addr}{path} failed: {source}; is `studyloop web` still running?")]
    Io {
        /// The method.
        method: String,
        /// host:port.
        addr: String,
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The response was not HTTP.
    #[error("{method} http://{addr}{path} returned something that is not HTTP: {head:?}")]
    NotHttp {
        /// The method.
        method: String,
        /// host:port.
        addr: String,
        /// The path.
        path: String,
        /// The first bytes.
        head: String,
    },
}

/// A response: status and body (`Value::Null` when the body is not JSON).
#[derive(Debug, Clone)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The parsed body.
    pub body: Value,
    /// The raw body text.
    pub text: String,
}

/// Sends `method path` with an optional JSON body to `addr` (`127.0.0.1:port`).
///
/// # Errors
/// [`HttpError`] when no HTTP response was read within `timeout`.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<Response, HttpError> {
    let io = |source| HttpError::Io {
        method: method.into(),
        addr: addr.into(),
        path: path.into(),
        source,
    };
    let mut stream = TcpStream::connect(addr).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body.as_bytes()).map_err(io)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(io)?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, text) = raw.split_once("\r\n\r\n").unwrap_or((raw.as_str(), ""));
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| HttpError::NotHttp {
            method: method.into(),
            addr: addr.into(),
            path: path.into(),
            head: head.chars().take(80).collect(),
        })?;
    let text = text.to_owned();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok(Response { status, body, text })
}
