//! The console's per-launch secret: no local process that lacks the user's
//! files can drive `studyloop web`.
//!
//! Why: the `Host`/`Origin` rules (`guard`) stop web pages, not local
//! programs; a request with no `Origin` is what curl, a drill script on the
//! shared network or any other local process sends. So every launch makes a
//! random token (256 bits) and every `/api/` route, the WebSocket upgrade
//! included, and every non-GET request anywhere needs it — browsers too.
//!
//! How a client presents it:
//! - the URL the command prints, `http://127.0.0.1:PORT/?token=…` (as Jupyter
//!   does): a `GET` of a page with the right `token` is answered with a
//!   redirect to the same path without it and an `HttpOnly; SameSite=Strict`
//!   cookie, which the page's own requests and its WebSocket then carry;
//! - the header [`TOKEN_HEADER`], read from the 0600 file
//!   `<session dir>/web/<port>.token` ([`token_file`]) by the product's own CLI
//!   (a drill delivering a `practice_check`) and the acceptance clients. The
//!   file is written atomically when the server binds and removed when it
//!   stops; drill phases never see it (`modules::sandbox` hides its directory).
//!
//! Compared in constant time. A request that presents the token also promotes
//! its connection to the authenticated budget (`listen`).

use std::path::{Path, PathBuf};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::app_state::AppState;
use super::listen::ConnBudget;
use super::security::constant_time_eq;
pub use crate::console_token::{TOKEN_HEADER, read_token, token_dir, token_file};
use crate::envelope::{ApiError, Code};
use crate::fsutil;

/// The cookie the printed URL is traded for (browsers).
pub const COOKIE: &str = "studyloop_token";
/// The query parameter of the printed URL.
const QUERY: &str = "token";

/// One launch's secret.
#[derive(Clone)]
pub struct ConsoleToken(String);

impl std::fmt::Debug for ConsoleToken {
    // Never printed by accident (a panic message, a debug log).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsoleToken(…)")
    }
}

impl ConsoleToken {
    /// A fresh random token (32 bytes, hex).
    #[must_use]
    pub fn generate() -> Self {
        Self(crate::ids::random_hex(32))
    }

    /// The token text (for the printed URL and the token file).
    #[must_use]
    pub fn value(&self) -> &str {
        &self.0
    }

    fn matches(&self, given: &str) -> bool {
        constant_time_eq(given.trim().as_bytes(), self.0.as_bytes())
    }

    /// Whether `headers` carry the token (header or cookie).
    #[must_use]
    pub fn presented(&self, headers: &HeaderMap) -> bool {
        let by_header = headers
            .get_all(TOKEN_HEADER)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| self.matches(v));
        by_header || cookie_values(headers).any(|v| self.matches(v))
    }
}

/// Every value of a [`COOKIE`] cookie in the request.
fn cookie_values(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// The `token` query parameter, if any.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == QUERY)
        .map(|(_, v)| v)
}

/// The token file of a running server: written (0600, in a 0700 directory,
/// atomically) on creation, removed on drop.
#[derive(Debug)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// Writes `token` for the server on `port`.
    ///
    /// # Errors
    /// The directory or file cannot be written.
    pub fn write(session_dir: &Path, port: u16, token: &ConsoleToken) -> std::io::Result<Self> {
        fsutil::ensure_private_dir(&token_dir(session_dir))?;
        let path = token_file(session_dir, port);
        fsutil::atomic_write(&path, token.value().as_bytes(), 0o600)?;
        Ok(Self { path })
    }

    /// Where it was written.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        let _ = fsutil::remove_if_exists(&self.path);
    }
}

/// Whether a request to `path` with `method` needs the token: every `/api/`
/// route (reads too: plans and session state are the learner's) and every
/// request that is not a `GET`/`HEAD`. The SPA's own files stay open, so the
/// page can load and explain how to get in.
fn needs_token(method: &Method, path: &str) -> bool {
    path.starts_with("/api/") || path == "/api" || !matches!(*method, Method::GET | Method::HEAD)
}

/// Middleware: trades a URL token for the cookie, and refuses a request that
/// needs the token and does not carry it (`403`, naming how to get it).
pub async fn require(
    State(app): State<std::sync::Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let token = &app.token;
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    if matches!(method, Method::GET | Method::HEAD)
        && !path.starts_with("/api/")
        && let Some(given) = query_token(request.uri().query())
    {
        if !token.matches(given) {
            return refuse(
                "the token in this URL is not this console's (it changes on every launch); open the URL `studyloop web` printed last",
            );
        }
        promote(&request);
        return (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, path),
                (
                    header::SET_COOKIE,
                    format!(
                        "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
                        token.value()
                    ),
                ),
            ],
        )
            .into_response();
    }
    if token.presented(request.headers()) {
        promote(&request);
        return next.run(request).await;
    }
    if needs_token(&method, &path) {
        return refuse(
            "this console needs its launch token: open the URL `studyloop web` printed (http://127.0.0.1:PORT/?token=…), or send the X-StudyLoop-Token header with the contents of <session dir>/web/<port>.token",
        );
    }
    next.run(request).await
}

fn promote(request: &Request) {
    if let Some(budget) = request.extensions().get::<ConnBudget>() {
        budget.promote();
    }
}

fn refuse(message: &str) -> Response {
    ApiError::new(StatusCode::FORBIDDEN, Code::Forbidden, message).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn header_or_cookie_carries_the_token_and_nothing_else_does() {
        let t = ConsoleToken("abc123".into());
        let mut h = HeaderMap::new();
        assert!(!t.presented(&h));
        h.insert(TOKEN_HEADER, HeaderValue::from_static("abc124"));
        assert!(!t.presented(&h));
        h.insert(TOKEN_HEADER, HeaderValue::from_static("abc123"));
        assert!(t.presented(&h));
        let mut c = HeaderMap::new();
        c.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; studyloop_token=abc12"),
        );
        assert!(!t.presented(&c));
        c.insert(
            header::COOKIE,
            HeaderValue::from_static("a=b; studyloop_token=abc123"),
        );
        assert!(t.presented(&c));
        assert_eq!(query_token(Some("x=1&token=abc")), Some("abc"));
        assert_eq!(query_token(Some("tokens=abc")), None);
        assert!(!format!("{t:?}").contains("abc123"));
    }

    #[test]
    fn the_token_file_is_private_and_goes_with_the_server() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let t = ConsoleToken::generate();
        assert_eq!(t.value().len(), 64);
        let file = TokenFile::write(dir.path(), 8567, &t).unwrap();
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dmode = std::fs::metadata(token_dir(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dmode & 0o777, 0o700);
        assert_eq!(read_token(dir.path(), 8567).as_deref(), Some(t.value()));
        drop(file);
        assert_eq!(read_token(dir.path(), 8567), None);
    }
}
