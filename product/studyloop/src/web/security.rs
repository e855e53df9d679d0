//! Response hardening and the optional password gate.
//!
//! Every response carries a strict CSP (`default-src 'self'`; the SPA has no
//! inline script or third-party code), `X-Frame-Options: DENY`, `nosniff`,
//! `no-referrer` and a permissions policy. HTTP Basic auth is enforced only
//! when a password is configured, which `--lan` requires; the scheme is matched
//! case-insensitively (RFC 7617), the user name is ignored and the password
//! compared in constant time. Failures are rate-limited per client IP (see
//! `auth_limit`): after [`FREE_FAILURES`] wrong passwords the client gets `429`
//! with `Retry-After` until the lockout ends, whatever it sends; past a global
//! budget of failures from all clients together, every client not known good
//! is locked out too.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The headers added to every response.
const HEADERS: &[(&str, &str)] = &[
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    ),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    (
        "permissions-policy",
        "camera=(), microphone=(), geolocation=()",
    ),
    ("cache-control", "no-store"),
];

/// Middleware: adds [`HEADERS`] to the response.
pub async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let map = response.headers_mut();
    for (name, value) in HEADERS {
        map.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    response
}

use super::auth_limit::Limiter;
pub use super::auth_limit::{FREE_FAILURES, LOCKOUT};
use super::guard::ConnAddrs;
use crate::envelope::{Code, Failure};

/// The password, when one is set.
#[derive(Debug, Clone)]
pub struct Password(pub Option<String>);

/// Middleware state: the password and its failure limiter.
#[derive(Debug)]
pub struct Gate {
    password: Password,
    limiter: Limiter,
}

impl Gate {
    /// A gate for `password` with a fresh limiter.
    #[must_use]
    pub fn new(password: Password) -> Self {
        Self {
            password,
            limiter: Limiter::default(),
        }
    }
}

/// Middleware: requires `Authorization: Basic …` with the password when set.
pub async fn basic_auth(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let Some(expected) = gate.password.0.as_deref() else {
        return next.run(request).await;
    };
    let client = request.extensions().get::<ConnAddrs>().map(|c| c.peer.ip());
    if let Some(wait) = gate.limiter.locked(client) {
        return too_many(wait);
    }
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let given = header
        .and_then(strip_basic)
        .and_then(decode_base64)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|pair| pair.split_once(':').map(|(_, p)| p.to_owned()));
    if given.is_some_and(|p| constant_time_eq(p.as_bytes(), expected.as_bytes())) {
        gate.limiter.succeeded(client);
        return next.run(request).await;
    }
    // No header at all is the browser asking for the prompt, not a guess.
    if header.is_some()
        && let Some(wait) = gate.limiter.failed(client)
    {
        return too_many(wait);
    }
    (
        StatusCode::UNAUTHORIZED,
        [(
            header::WWW_AUTHENTICATE,
            "Basic realm=\"StudyLoop\", charset=\"UTF-8\"",
        )],
        axum::Json(
            Failure::new(
                Code::Unauthorized,
                "password required; log in with the console password",
            )
            .to_json(),
        ),
    )
        .into_response()
}

fn too_many(wait: std::time::Duration) -> Response {
    let secs = wait.as_secs().max(1);
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, secs.to_string())],
        axum::Json(
            Failure::new(
                Code::RateLimited,
                format!("too many wrong passwords; try again in {secs} s"),
            )
            .with_details(serde_json::json!({"retry_after_secs": secs}))
            .to_json(),
        ),
    )
        .into_response()
}

/// The credentials after a `Basic` scheme in any letter case (RFC 7617 §2 and
/// RFC 9110 §11.1: auth schemes are case-insensitive).
fn strip_basic(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(char::is_whitespace)?;
    scheme.eq_ignore_ascii_case("basic").then(|| rest.trim())
}

/// Equal bytes, compared in time that depends only on the lengths.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Standard base64 (with or without padding); `None` on any other byte.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    };
    let bytes = text.trim().trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0_u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= value(c)? << (18 - 6 * i);
        }
        let n = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        out.extend_from_slice(&acc.to_be_bytes()[1..=n]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_compare() {
        assert_eq!(
            decode_base64("dTpzZWNyZXQ=").as_deref(),
            Some(&b"u:secret"[..])
        );
        assert_eq!(
            decode_base64("dTpzZWNyZXQ").as_deref(),
            Some(&b"u:secret"[..])
        );
        assert_eq!(decode_base64("@@"), None);
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert_eq!(strip_basic("bAsIc  dTp4"), Some("dTp4"));
        assert_eq!(strip_basic("Bearer dTp4"), None);
        assert_eq!(strip_basic("Basic"), None);
    }
}
