//! Test support shared by the web unit tests (`cfg(test)`) and the `web_acp` bench (which
//! includes this file with `#[path]`): locating the `studyloop-stub-acp` test double and a
//! raw HTTP/1.1 request against the server on a loopback port.
//!
//! It uses nothing of this crate, so it compiles the same way in both places. Not product
//! code: nothing outside tests and benches declares this module.

use std::path::PathBuf;

use serde_json::Value;

/// `target/<profile>/studyloop-stub-acp`, next to the running test or bench executable's
/// `deps/` directory.
///
/// # Panics
/// When the binary has not been built, naming the command that builds it.
pub(crate) fn stub_acp() -> PathBuf {
    bin("studyloop-stub-acp")
}

/// `target/<profile>/<name>` (a binary of this workspace), next to the running test or
/// bench executable's `deps/` directory.
///
/// # Panics
/// When the binary has not been built, naming the command that builds it.
pub(crate) fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test exe path");
    let bin = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("target/<profile>")
        .join(name);
    assert!(
        bin.is_file(),
        "{} is missing; run `cargo build --bins` (for a bench: `cargo build --bins --profile bench`) first",
        bin.display()
    );
    bin
}

/// One response: status, the header block lowercased, and the body text.
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Response {
    /// The body as JSON (`Null` when it is not JSON).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// Sends one `method path` request with an optional JSON body to `base` (`host:port`) over
/// a fresh connection and reads the whole response.
pub(crate) async fn request(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Response {
    let body = body.map(Value::to_string).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {base}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    raw(base, &req).await
}

/// Sends `text` (a whole HTTP/1.1 request, headers chosen by the caller) to `base` over a
/// fresh connection and reads the whole response.
pub(crate) async fn raw(base: &str, text: &str) -> Response {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(base).await.expect("connect");
    stream.write_all(text.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    // A reset after the response (the server closed first) still leaves the response read.
    let _ = stream.read_to_end(&mut raw).await;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    Response {
        status: head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0),
        head: head.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}
