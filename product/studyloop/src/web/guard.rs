//! Who may talk to the console at all: the `Host` allow-list (DNS rebinding),
//! the `Origin` check and the JSON-only rule on state-changing requests (CSRF),
//! and the bounded request body. One middleware in front of every route,
//! the WebSocket upgrade included.
//!
//! Rules, and why:
//! - `Host` must name this server: `127.0.0.1`, `localhost` or `[::1]` with the
//!   port the connection arrived on; with `--lan` also the names configured in
//!   `STUDYLOOP_WEB_HOSTS`, the machine's hostname (and `<hostname>.local`) and
//!   the IP literal the client dialled. Anything else is `421`: a page on a
//!   rebound domain always sends its own domain as `Host`.
//! - `Origin` is compared with the server's own origins (`http://` + an allowed
//!   `Host`) and the exact entries of `STUDYLOOP_ALLOWED_ORIGINS`, never with the
//!   request's `Host` header (which the rebinding attacker controls).
//! - A non-GET request and a WebSocket upgrade need an allowed `Origin`; without
//!   one, `Sec-Fetch-Site` (if sent) must be `same-origin`. A request with
//!   neither header is a non-browser client (curl, the acceptance lanes): modern
//!   browsers send `Origin` on every POST and every WebSocket upgrade, so a
//!   cross-site page cannot produce such a request.
//! - A non-GET request with a body (or any `Content-Type`) must be
//!   `application/json` (`415` otherwise): an HTML form can only send
//!   urlencoded, multipart or text bodies, and a cross-site `fetch` with a JSON
//!   type needs a CORS preflight, which this server never grants.
//! - A body is read only up to [`MAX_BODY_BYTES`] within [`BODY_READ_TIMEOUT`].

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::app_state::AppState;
use crate::envelope::{ApiError, Code};

/// The largest request body accepted (the start request is a few hundred bytes).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// How long a client gets to send a request body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The loopback names every server answers to.
const LOOPBACK: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// The addresses of the connection a request arrived on (set by the accept loop).
#[derive(Debug, Clone, Copy)]
pub struct ConnAddrs {
    /// The server side: its port is the one `Host` must carry.
    pub local: SocketAddr,
    /// The client side (the Basic-auth limiter keys on its IP).
    pub peer: SocketAddr,
}

/// The names and origins this server answers to.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// `--lan`: also answer to `names` and to the local IP of each connection.
    pub lan: bool,
    /// Extra host names (lowercase, no port) for `--lan`.
    pub names: Vec<String>,
    /// Extra exact origins (`STUDYLOOP_ALLOWED_ORIGINS`).
    pub extra_origins: Vec<String>,
}

impl HostPolicy {
    /// Whether `authority` (`name[:port]`, as in `Host`) names this server on `local`.
    #[must_use]
    pub fn host_allowed(&self, authority: &str, local: SocketAddr) -> bool {
        let Some((name, port)) = split_authority(authority) else {
            return false;
        };
        if port != local.port() {
            return false;
        }
        let name = name.to_ascii_lowercase();
        if LOOPBACK.contains(&name.as_str()) {
            return true;
        }
        self.lan && (self.names.contains(&name) || name == ip_literal(local.ip()))
    }

    /// Whether `origin` is one of this server's own origins or an allowed extra.
    #[must_use]
    pub fn origin_allowed(&self, origin: &str, local: SocketAddr) -> bool {
        let origin = origin.trim();
        if self.extra_origins.iter().any(|o| o == origin) {
            return true;
        }
        origin
            .strip_prefix("http://")
            .is_some_and(|authority| self.host_allowed(authority, local))
    }

    /// The origins a page must be served from, for error messages.
    #[must_use]
    pub fn own_origins(&self, local: SocketAddr) -> Vec<String> {
        let port = local.port();
        let mut names: Vec<String> = LOOPBACK.iter().map(|n| (*n).to_owned()).collect();
        if self.lan {
            names.extend(self.names.iter().cloned());
            names.push(ip_literal(local.ip()));
        }
        names
            .into_iter()
            .map(|n| format!("http://{n}:{port}"))
            .chain(self.extra_origins.iter().cloned())
            .collect()
    }
}

/// `name[:port]` → (name, port); the port defaults to 80 (plain HTTP). `None`
/// for anything that is not a bare authority (userinfo, path, bad port).
fn split_authority(authority: &str) -> Option<(&str, u16)> {
    if authority.is_empty()
        || authority
            .bytes()
            .any(|b| matches!(b, b'/' | b'@' | b'?' | b'#' | b'\\') || b.is_ascii_whitespace())
    {
        return None;
    }
    let (name, port) = if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        (&authority[..end + 2], &rest[end + 1..])
    } else {
        authority
            .find(':')
            .map_or((authority, ""), |i| (&authority[..i], &authority[i..]))
    };
    let port = match port.strip_prefix(':') {
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        None if port.is_empty() => 80,
        _ => return None,
    };
    (!name.is_empty()).then_some((name, port))
}

/// How an IP appears in a `Host` header.
fn ip_literal(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or_else(|| format!("[{v6}]"), |v4| v4.to_string()),
    }
}

/// Parses a comma list (`STUDYLOOP_ALLOWED_ORIGINS`, `STUDYLOOP_WEB_HOSTS`):
/// trimmed, trailing `/` dropped, empties skipped.
#[must_use]
pub fn parse_list(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().trim_end_matches('/').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn refuse(status: StatusCode, message: String) -> Response {
    ApiError::new(status, Code::for_status(status), message).into_response()
}

/// Middleware: the rules in the module doc, then the (bounded) request.
pub async fn guard(State(app): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let Some(conn) = request.extensions().get::<ConnAddrs>().copied() else {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "request did not come through the studyloop web listener".into(),
        );
    };
    let policy = &app.hosts;
    let headers = request.headers();
    let host = header_str(headers, header::HOST.as_str())
        .or_else(|| request.uri().authority().map(|a| a.as_str()));
    if !host.is_some_and(|h| policy.host_allowed(h, conn.local)) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "Host {:?} is not a name of this server; open one of {} (for --lan, list the name in STUDYLOOP_WEB_HOSTS)",
                host.unwrap_or(""),
                policy.own_origins(conn.local).join(", ")
            ),
        );
    }
    let upgrade = header_str(headers, header::UPGRADE.as_str()).is_some();
    let changes_state = !matches!(*request.method(), Method::GET | Method::HEAD) || upgrade;
    if changes_state && let Err(why) = same_origin(headers, policy, conn.local) {
        return refuse(StatusCode::FORBIDDEN, why.to_string());
    }
    if matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    if has_body(headers) && !is_json(headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "Content-Type {:?} is not accepted; send the body as application/json",
                header_str(headers, header::CONTENT_TYPE.as_str()).unwrap_or("(none)")
            ),
        );
    }
    match bounded_body(request).await {
        Ok(request) => next.run(request).await,
        Err(response) => response,
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The CSRF rule: an allowed `Origin`, else `Sec-Fetch-Site: same-origin`, else
/// no browser metadata at all (a non-browser client).
fn same_origin(
    headers: &HeaderMap,
    policy: &HostPolicy,
    local: SocketAddr,
) -> Result<(), CrossSite> {
    if headers.get_all(header::ORIGIN).iter().count() > 1 {
        return Err(CrossSite::ManyOrigins);
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("(not text)");
        return if policy.origin_allowed(origin, local) {
            Ok(())
        } else {
            Err(CrossSite::Origin {
                origin: origin.to_owned(),
                own: policy.own_origins(local).join(", "),
            })
        };
    }
    match header_str(headers, "sec-fetch-site") {
        None | Some("same-origin") => Ok(()),
        Some(site) => Err(CrossSite::FetchSite(site.to_owned())),
    }
}

/// Why a state-changing request was refused as cross-site (the 403's message).
#[derive(Debug, thiserror::Error)]
enum CrossSite {
    /// Several `Origin` headers: ambiguous, never guessed at.
    #[error("more than one Origin header")]
    ManyOrigins,
    /// An `Origin` that is not this server's nor allow-listed.
    #[error(
        "Origin {origin:?} is not this server's; use the console served by StudyLoop ({own}), or add the origin to STUDYLOOP_ALLOWED_ORIGINS"
    )]
    Origin {
        /// The request's origin.
        origin: String,
        /// This server's own origins, comma-separated.
        own: String,
    },
    /// No `Origin`, and the browser says the request is cross-site.
    #[error("Sec-Fetch-Site {0:?} without an Origin: cross-site requests are refused")]
    FetchSite(String),
}

fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers.contains_key(header::CONTENT_TYPE)
        || header_str(headers, header::CONTENT_LENGTH.as_str()).is_some_and(|n| n.trim() != "0")
}

/// `application/json`, any case, parameters (charset) allowed.
fn is_json(headers: &HeaderMap) -> bool {
    header_str(headers, header::CONTENT_TYPE.as_str()).is_some_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// Reads the body (at most [`MAX_BODY_BYTES`], within [`BODY_READ_TIMEOUT`]) so
/// a slow or huge body cannot hold a connection or memory.
async fn bounded_body(request: Request) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    let read = axum::body::to_bytes(body, MAX_BODY_BYTES);
    match tokio::time::timeout(BODY_READ_TIMEOUT, read).await {
        Ok(Ok(bytes)) => Ok(Request::from_parts(parts, Body::from(bytes))),
        Ok(Err(_)) => Err(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "request body over {MAX_BODY_BYTES} bytes (or broken); send a smaller JSON body"
            ),
        )),
        Err(_) => Err(refuse(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "request body not received within {}s",
                BODY_READ_TIMEOUT.as_secs()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> SocketAddr {
        "127.0.0.1:8567".parse().expect("addr")
    }

    #[test]
    fn loopback_hosts_with_the_bound_port_only() {
        let p = HostPolicy::default();
        for ok in [
            "127.0.0.1:8567",
            "localhost:8567",
            "LOCALHOST:8567",
            "[::1]:8567",
        ] {
            assert!(p.host_allowed(ok, local()), "{ok}");
        }
        for bad in [
            "evil.example:8567",
            "127.0.0.1:8568",
            "127.0.0.1",
            "localhost.evil.example:8567",
            "127.0.0.1.nip.io:8567",
            "user@127.0.0.1:8567",
            "127.0.0.1:8567/x",
            "127.0.0.1:+8567",
            "[::1]8567",
            "",
        ] {
            assert!(!p.host_allowed(bad, local()), "{bad}");
        }
        let lan_addr: SocketAddr = "192.168.1.9:8567".parse().expect("addr");
        assert!(
            !p.host_allowed("192.168.1.9:8567", lan_addr),
            "loopback mode"
        );
        let lan = HostPolicy {
            lan: true,
            names: vec!["studybox.local".into()],
            extra_origins: Vec::new(),
        };
        assert!(lan.host_allowed("192.168.1.9:8567", lan_addr));
        assert!(lan.host_allowed("StudyBox.local:8567", lan_addr));
        assert!(!lan.host_allowed("evil.example:8567", lan_addr));
        assert!(!lan.host_allowed("192.168.1.10:8567", lan_addr));
    }

    #[test]
    fn origins_are_the_servers_own_never_the_host_header() {
        let mut p = HostPolicy::default();
        assert!(p.origin_allowed("http://127.0.0.1:8567", local()));
        assert!(p.origin_allowed("http://localhost:8567", local()));
        for bad in [
            "http://localhost:3000",
            "https://127.0.0.1:8567",
            "http://evil.example:8567",
            "null",
            "file://",
            "http://127.0.0.1:8567/",
        ] {
            assert!(!p.origin_allowed(bad, local()), "{bad}");
        }
        p.extra_origins = parse_list(Some(" https://study.example/ , "));
        assert!(p.origin_allowed("https://study.example", local()));
        assert_eq!(
            p.own_origins(local())[..3],
            [
                "http://127.0.0.1:8567",
                "http://localhost:8567",
                "http://[::1]:8567"
            ]
        );
    }
}
