//! The console token of each `studyloop web` this process started, by address: the
//! product refuses every `/api/` route and the session upgrade without it (its
//! `web::token`), so the clients of this tier carry it the way the learner's do.
//!
//! [`super::server::WebServer`] records the token from the URL the product prints
//! and forgets it when the server stops; [`super::http::request`] and
//! [`super::socket::SessionSocket`] send it as [`HEADER`] to a recorded address,
//! and [`super::browser::Browser`] opens a recorded console the first time through
//! the printed URL (`/?token=…`, which the product trades for its cookie). One table,
//! so no caller of those clients has to know about the token.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// The header the product reads the token from.
pub const HEADER: &str = "x-studyloop-token";

static TOKENS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

fn table() -> std::sync::MutexGuard<'static, BTreeMap<String, String>> {
    TOKENS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records `token` for the console at `addr` (`127.0.0.1:port`).
pub fn record(addr: &str, token: &str) {
    table().insert(addr.to_owned(), token.to_owned());
}

/// Forgets the console at `addr` (it stopped).
pub fn forget(addr: &str) {
    table().remove(addr);
}

/// The token of the console at `addr`, when this process started one there.
#[must_use]
pub fn of(addr: &str) -> Option<String> {
    table().get(addr).cloned()
}

/// `http://addr/…#x` with the token added as the query (`http://addr/?token=…#x`)
/// when `url` is a recorded console's page; `None` otherwise.
#[must_use]
pub fn login_url(url: &str) -> Option<String> {
    let rest = url.strip_prefix("http://")?;
    let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let token = of(addr)?;
    let (path, fragment) = path.split_at(path.find('#').unwrap_or(path.len()));
    if path.contains('?') {
        return None;
    }
    let path = if path.is_empty() { "/" } else { path };
    Some(format!("http://{addr}{path}?token={token}{fragment}"))
}

/// The server's address and token from the line `studyloop web` prints
/// (`… listening on http://127.0.0.1:PORT/?token=…`).
#[must_use]
pub fn from_listening_line(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("studyloop web listening on http://")?;
    let (addr, token) = rest.trim().split_once("/?token=")?;
    Some((addr.to_owned(), token.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_console_page_gets_the_token_and_nothing_else_does() {
        record("127.0.0.1:1", "t0k");
        assert_eq!(
            login_url("http://127.0.0.1:1/#study-plans").as_deref(),
            Some("http://127.0.0.1:1/?token=t0k#study-plans")
        );
        assert_eq!(
            login_url("http://127.0.0.1:1").as_deref(),
            Some("http://127.0.0.1:1/?token=t0k")
        );
        assert_eq!(login_url("http://127.0.0.1:2/#x"), None);
        assert_eq!(login_url("about:blank"), None);
        forget("127.0.0.1:1");
        assert_eq!(of("127.0.0.1:1"), None);
        assert_eq!(
            from_listening_line("studyloop web listening on http://127.0.0.1:9/?token=ab"),
            Some(("127.0.0.1:9".into(), "ab".into()))
        );
    }
}
