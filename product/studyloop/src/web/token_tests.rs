//! The console token (`token`) and the connection budgets (`listen`) over real HTTP on a
//! loopback port: a local process without the token is refused on every route the router
//! has (walked from `server::routes`, so a new route is covered at once) and on the
//! WebSocket upgrade; the printed URL is traded for a cookie; and sockets held by such a
//! process never lock out a client that has the token.

use std::time::Duration;

use tokio_tungstenite::tungstenite;

use super::server::{routes, ws_url};
use super::server_tests::{rt, server};
use super::testkit;

/// A concrete path for a route pattern.
fn concrete(pattern: &str) -> String {
    pattern
        .replace("{id}", "some-plan")
        .replace("{index}", "0")
        .replace("{file}", "app.js")
}

fn request(base: &str, method: &str, path: &str, extra: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: {base}\r\n{extra}Content-Type: application/json\r\n\
         Content-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
}

/// Every (method, route) a local process could try without the token, and the status it
/// got. GETs of the SPA's own files (`/`, `/static/…`, `/session`) are the only open ones.
#[test]
fn without_the_token_every_api_route_and_every_write_is_refused() {
    rt().block_on(async {
        let s = server(None).await;
        let wrong = format!("{}: {}\r\n", testkit::TOKEN_HEADER, "0".repeat(64));
        let cookie = "Cookie: studyloop_token=guess\r\n".to_owned();
        let mut tried = 0;
        let mut let_through = Vec::new();
        for (pattern, _) in routes() {
            let path = concrete(pattern);
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                if method == "GET" && !path.starts_with("/api/") {
                    continue;
                }
                for extra in ["", wrong.as_str(), cookie.as_str()] {
                    tried += 1;
                    let text = request(&s.base, method, &path, extra);
                    let r = testkit::raw_without_token(&s.base, &text).await;
                    if r.status != 403 {
                        let_through.push(format!(
                            "{method} {path} [{}] -> {}",
                            extra.trim(),
                            r.status
                        ));
                    }
                }
            }
        }
        eprintln!(
            "figure: {} of {tried} tokenless requests let through",
            let_through.len()
        );
        assert!(let_through.is_empty(), "let through: {let_through:#?}");
        assert!(
            tried > 100,
            "only {tried} requests: did the route list shrink?"
        );
        // The SPA itself still loads, so it can tell the learner how to get in.
        let page = testkit::raw_without_token(&s.base, &request(&s.base, "GET", "/", "")).await;
        assert_eq!(page.status, 200);
        // The same routes answer with the token (the refusal was the token, not the route).
        let ok = testkit::request(&s.base, "GET", "/api/session/state", None).await;
        assert_eq!(ok.status, 200, "{}", ok.body);
    });
}

/// The upgrade without the token (none, a wrong one) is refused before any session is
/// looked up; with it, the refusal is about the session (404), not the token.
#[test]
fn the_websocket_upgrade_needs_the_token() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    rt().block_on(async {
        let s = server(None).await;
        let url = format!("ws://{}{}", s.base, ws_url("no-such-session"));
        // The status, and whether the refusal names the token (the session route
        // refuses an unknown session with 403 too).
        let status = |r: Result<_, tungstenite::Error>| match r {
            Ok(()) => (101, false),
            Err(tungstenite::Error::Http(resp)) => {
                let body = String::from_utf8_lossy(resp.body().as_deref().unwrap_or_default())
                    .into_owned();
                (resp.status().as_u16(), body.contains("launch token"))
            }
            Err(other) => panic!("unexpected WS error {other}"),
        };
        let bare = url.clone().into_client_request().expect("req");
        let none = status(tokio_tungstenite::connect_async(bare).await.map(drop));
        let mut wrong = url.into_client_request().expect("req");
        wrong
            .headers_mut()
            .insert(testkit::TOKEN_HEADER, "f00".parse().expect("header"));
        let wrong = status(tokio_tungstenite::connect_async(wrong).await.map(drop));
        let with = testkit::ws_request(&s.base, &ws_url("no-such-session"));
        let with = status(tokio_tungstenite::connect_async(with).await.map(drop));
        assert_eq!((none, wrong), ((403, true), (403, true)));
        assert!(
            !with.1,
            "the token's upgrade was refused for the token: {with:?}"
        );
    });
}

/// `GET /?token=…` (the printed URL) is answered with a redirect to `/` and an
/// `HttpOnly; SameSite=Strict` cookie that then opens the API; a wrong URL token gets none.
#[test]
fn the_printed_url_is_traded_for_a_strict_http_only_cookie() {
    rt().block_on(async {
        let s = server(None).await;
        let token = testkit::token_of(&s.base);
        let path = format!("/?token={token}");
        let r = testkit::raw_without_token(&s.base, &request(&s.base, "GET", &path, "")).await;
        assert_eq!(r.status, 303);
        assert!(r.head.contains("\r\nlocation: /\r\n"), "{}", r.head);
        let cookie = r
            .head
            .lines()
            .find_map(|l| l.strip_prefix("set-cookie: "))
            .expect("a cookie")
            .to_owned();
        assert!(
            cookie.contains("httponly") && cookie.contains("samesite=strict"),
            "{cookie}"
        );
        let pair = cookie.split(';').next().expect("pair");
        let extra = format!("Cookie: {pair}\r\n");
        let api = request(&s.base, "GET", "/api/session/state", &extra);
        let api = testkit::raw_without_token(&s.base, &api).await;
        assert_eq!(api.status, 200, "{}", api.body);
        let bad =
            testkit::raw_without_token(&s.base, &request(&s.base, "GET", "/?token=nope", "")).await;
        assert_eq!(bad.status, 403);
        assert!(!bad.head.contains("set-cookie"), "{}", bad.head);
    });
}

/// Issue 25 item 14: one local process holds 200 idle sockets (no token); the learner's
/// client, with the token, still gets every one of 100 requests answered.
#[test]
fn sockets_held_without_the_token_never_starve_the_learner() {
    rt().block_on(async {
        let s = server(None).await;
        let mut held = Vec::new();
        for _ in 0..200 {
            if let Ok(c) = tokio::net::TcpStream::connect(&s.base).await {
                held.push(c);
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut answered = 0;
        for _ in 0..100 {
            let r = tokio::time::timeout(
                Duration::from_secs(5),
                testkit::request(&s.base, "GET", "/api/session/state", None),
            )
            .await;
            if r.is_ok_and(|r| r.status == 200) {
                answered += 1;
            }
        }
        eprintln!("figure: {answered} of 100 requests with the token answered while 200 tokenless sockets were held");
        assert_eq!(answered, 100);
        drop(held);
    });
}
