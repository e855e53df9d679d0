//! A minimal synchronous HTTP/1.1 JSON client for the product's loopback web
//! API: one request per connection (`Connection: close`), a deadline on every
//! read and write, the status and the parsed JSON body back.
//!
//! Only for `127.0.0.1` servers this tier starts itself (the product, the stub,
//! chromedriver); it is not a general client (no TLS, no redirects, no chunked
//! request bodies). A response is read to its `Content-Length` when it has one
//! (chromedriver keeps the connection open despite `Connection: close`), else to
//! the end of the stream.

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

impl Response {
    /// The `result` of the product's success envelope (`{"schema_version": 1,
    /// "command", "result"}`, docs/schemas/envelope.schema.json): what an `/api/*`
    /// route answered. `Null` when the body is not a success envelope (a refusal's
    /// `{"error": …}`, or a server that does not wrap), so a reader finds nothing
    /// rather than misreading the wrapper as the answer.
    #[must_use]
    pub fn result(&self) -> &Value {
        static NULL: Value = Value::Null;
        match &self.body {
            Value::Object(m) if m.get("schema_version") == Some(&Value::from(1)) => {
                m.get("result").unwrap_or(&NULL)
            }
            _ => &NULL,
        }
    }
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
    // A console this process started needs its token (`console_token`).
    let token = super::console_token::of(addr)
        .map(|t| format!("{}: {t}\r\n", super::console_token::HEADER))
        .unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{token}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body.as_bytes()).map_err(io)?;
    let raw = read_response(&mut stream).map_err(io)?;
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

/// The response bytes: the head, then `Content-Length` bytes of body when the
/// head names a length, else everything until the server closes.
fn read_response(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(end) = find(&raw, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            if let Some(len) = length {
                let want = end + 4 + len;
                while raw.len() < want {
                    let n = stream.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    raw.extend_from_slice(&buf[..n]);
                }
                raw.truncate(want.min(raw.len()));
                return Ok(raw);
            }
            stream.read_to_end(&mut raw)?;
            return Ok(raw);
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Ok(raw);
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that hands out its bytes in small pieces and then blocks (as an
    /// open connection would): reading must stop at the `Content-Length`.
    struct OpenConnection(std::io::Cursor<Vec<u8>>);

    impl Read for OpenConnection {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let cap = buf.len().min(7);
            let n = self.0.read(&mut buf[..cap])?;
            if n == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::WouldBlock));
            }
            Ok(n)
        }
    }

    #[test]
    fn a_response_is_read_to_its_content_length_on_an_open_connection() {
        let body = "{\"value\":[1,2,3]}";
        let text = format!(
            "HTTP/1.1 200 OK\r\nContent-Length:{}\r\n\r\n{body}",
            body.len()
        );
        let mut s = OpenConnection(std::io::Cursor::new(text.clone().into_bytes()));
        assert_eq!(read_response(&mut s).unwrap(), text.into_bytes());
    }

    #[test]
    fn without_a_length_the_body_runs_to_the_close() {
        let text = b"HTTP/1.1 200 OK\r\n\r\n{\"a\":1}".to_vec();
        let mut s = std::io::Cursor::new(text.clone());
        assert_eq!(read_response(&mut s).unwrap(), text);
    }
}
