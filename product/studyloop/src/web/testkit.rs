//! Test support shared by the web unit tests (`cfg(test)`) and the `web_acp` bench (which
//! includes this file with `#[path]`): locating the `studyloop-stub-acp` test double and a
//! raw HTTP/1.1 request against the server on a loopback port. A server's console token is
//! [`register`]ed once by whoever starts it; every request and upgrade made here then
//! carries it, except [`raw_without_token`] (the requests a local process without the
//! token would send).
//!
//! It uses nothing of this crate, so it compiles the same way in both places. Not product
//! code: nothing outside tests and benches declares this module.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

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

/// The console token header (the product's `web::token::TOKEN_HEADER`; this file uses
/// nothing of the crate).
pub(crate) const TOKEN_HEADER: &str = "x-studyloop-token";

static TOKENS: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

/// Records the console token of the server at `base`.
pub(crate) fn register(base: &str, token: &str) {
    let mut map = TOKENS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    map.get_or_insert_with(HashMap::new)
        .insert(base.to_owned(), token.to_owned());
}

/// The token registered for `base`.
///
/// # Panics
/// When none was registered (the test started a server without registering it).
pub(crate) fn token_of(base: &str) -> String {
    let map = TOKENS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    map.as_ref()
        .and_then(|m| m.get(base).cloned())
        .unwrap_or_else(|| panic!("no console token registered for {base}; call testkit::register"))
}

/// A WebSocket upgrade request for `path` on `base`, carrying the token.
pub(crate) fn ws_request(
    base: &str,
    path: &str,
) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut req = format!("ws://{base}{path}")
        .into_client_request()
        .expect("ws request");
    req.headers_mut()
        .insert(TOKEN_HEADER, token_of(base).parse().expect("token header"));
    req
}

/// One response: status, the header block lowercased, and the body text.
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Response {
    /// The answer as a script reads it: the `result` of a 2xx JSON body, which must be
    /// the success envelope (`{"schema_version", "command", "result"}`); any other body
    /// as parsed (a failure's `{"error": …}`; `Null` when it is not JSON).
    ///
    /// # Panics
    /// When a 2xx JSON body is not the success envelope.
    pub(crate) fn json(&self) -> Value {
        let v = self.envelope();
        if !(200..300).contains(&self.status) || v.is_null() {
            return v;
        }
        match v {
            Value::Object(mut m) if m.get("schema_version") == Some(&Value::from(1)) => m
                .remove("result")
                .unwrap_or_else(|| panic!("a success without `result`: {}", self.body)),
            _ => panic!(
                "HTTP {} answered JSON outside the success envelope: {}",
                self.status, self.body
            ),
        }
    }

    /// The body as JSON exactly as sent, envelope and all (`Null` when it is not JSON).
    pub(crate) fn envelope(&self) -> Value {
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

/// [`raw`] without the token: what a local process that cannot read the token file sends.
pub(crate) async fn raw_without_token(base: &str, text: &str) -> Response {
    send(base, text).await
}

/// Sends `text` (a whole HTTP/1.1 request, headers chosen by the caller, the server's token
/// added after the request line) to `base` over a fresh connection and reads the whole
/// response.
pub(crate) async fn raw(base: &str, text: &str) -> Response {
    let with_token = match text.split_once("\r\n") {
        Some((line, rest)) => format!("{line}\r\n{TOKEN_HEADER}: {}\r\n{rest}", token_of(base)),
        None => text.to_owned(),
    };
    send(base, &with_token).await
}

async fn send(base: &str, text: &str) -> Response {
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
