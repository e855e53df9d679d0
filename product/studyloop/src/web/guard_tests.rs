//! The console's door over real HTTP/WS on a loopback port: DNS rebinding
//! (`Host`), CSRF (`Origin`, `Sec-Fetch-Site`, JSON-only bodies) and the LAN
//! password gate (scheme case, failure rate limit).

use tokio_tungstenite::tungstenite;

use super::server::ws_url;
use super::server_tests::{Server, rt, server, start_acp_cmd};
use super::testkit::{self, Response};
use crate::web::acp::limit_tests::script_agent;

fn port(s: &Server) -> u16 {
    s.base
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .expect("port")
}

/// `method path` to the server with exactly these extra headers (Host first).
async fn send(
    s: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    let lines: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let text = format!(
        "{method} {path} HTTP/1.1\r\n{lines}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    testkit::raw(&s.base, &text).await
}

/// A live ACP session (an agent that idles) in the server's slot.
async fn live(s: &Server, dir: &std::path::Path) -> String {
    start_acp_cmd(s, script_agent(dir, "sleep 300")).await
}

#[test]
fn a_foreign_host_is_refused_on_every_route() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = live(&s, dir.path()).await;
        let p = port(&s);
        let ws = ws_url(&id);
        let routes = [
            ("GET", "/"),
            ("GET", "/static/app.js"),
            ("GET", "/session"),
            ("GET", "/api/session/state"),
            ("GET", "/api/session/options"),
            ("POST", "/api/session/end"),
            ("POST", "/api/session/start"),
            ("GET", ws.as_str()),
        ];
        let foreign = [
            format!("evil.example:{p}"),
            format!("127.0.0.1.nip.io:{p}"),
            format!("localhost:{}", p.wrapping_add(1)),
            "evil.example".to_owned(),
        ];
        for host in &foreign {
            for (method, path) in routes {
                let origin = format!("http://{host}");
                let r = send(
                    &s,
                    method,
                    path,
                    &[
                        ("Host", host),
                        ("Origin", &origin),
                        ("Content-Type", "application/json"),
                    ],
                    "",
                )
                .await;
                assert_eq!(
                    r.status, 421,
                    "{method} {path} with Host {host}: {}",
                    r.body
                );
                assert!(r.body.contains("not a name of this server"), "{}", r.body);
            }
        }
        assert!(
            s.state.slot.current().is_some(),
            "a refused request ended the session"
        );
        for host in [
            format!("127.0.0.1:{p}"),
            format!("localhost:{p}"),
            format!("[::1]:{p}"),
        ] {
            let r = send(&s, "GET", "/api/session/state", &[("Host", &host)], "").await;
            assert_eq!(r.status, 200, "Host {host}: {}", r.body);
        }
    });
}

/// A WebSocket upgrade with these Host and Origin headers; the HTTP status when refused.
async fn upgrade(s: &Server, id: &str, host: &str, origin: &str) -> Result<(), u16> {
    let mut req = testkit::ws_request(&s.base, &ws_url(id));
    req.headers_mut()
        .insert("host", host.parse().expect("host"));
    req.headers_mut()
        .insert("origin", origin.parse().expect("origin"));
    match tokio_tungstenite::connect_async(req).await {
        Ok(_) => Ok(()),
        Err(tungstenite::Error::Http(resp)) => Err(resp.status().as_u16()),
        Err(other) => panic!("unexpected WS error {other}"),
    }
}

#[test]
fn a_rebound_page_cannot_open_the_socket_and_origins_are_the_servers_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        let id = live(&s, dir.path()).await;
        let p = port(&s);
        let evil = format!("evil.example:{p}");
        // The rebinding attack: Origin host equals Host, both the attacker's.
        assert_eq!(
            upgrade(&s, &id, &evil, &format!("http://{evil}")).await,
            Err(421)
        );
        let own = format!("127.0.0.1:{p}");
        for origin in [
            "http://localhost:3000".to_owned(),
            format!("https://127.0.0.1:{p}"),
            "null".to_owned(),
        ] {
            assert_eq!(upgrade(&s, &id, &own, &origin).await, Err(403), "{origin}");
        }
        assert_eq!(
            upgrade(&s, &id, &own, &format!("http://localhost:{p}")).await,
            Ok(())
        );
    });
}

#[test]
fn a_cross_site_form_or_fetch_cannot_end_or_start_a_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    rt().block_on(async {
        let s = server(None).await;
        live(&s, dir.path()).await;
        let p = port(&s);
        let host = format!("127.0.0.1:{p}");
        let own = format!("http://{host}");
        let start_body = r#"{"topic":"Ownership","energy":5,"harness":"codex"}"#;
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, u16);
        let cases: [Case<'_>; 8] = [
            (
                "/api/session/end",
                &[
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Origin", &own),
                ],
                "a=b",
                415,
            ),
            (
                "/api/session/end",
                &[("Content-Type", "text/plain"), ("Origin", &own)],
                "{}",
                415,
            ),
            (
                "/api/session/end",
                &[("Content-Type", "multipart/form-data; boundary=x")],
                "--x--",
                415,
            ),
            (
                "/api/session/start",
                &[
                    ("Content-Type", "text/plain;charset=UTF-8"),
                    ("Origin", &own),
                ],
                start_body,
                415,
            ),
            (
                "/api/session/end",
                &[
                    ("Content-Type", "application/json"),
                    ("Origin", "https://evil.example"),
                ],
                "{}",
                403,
            ),
            (
                "/api/session/end",
                &[("Content-Type", "application/json"), ("Origin", "null")],
                "",
                403,
            ),
            (
                "/api/session/end",
                &[("Sec-Fetch-Site", "cross-site")],
                "",
                403,
            ),
            (
                "/api/session/start",
                &[
                    ("Content-Type", "application/json"),
                    ("Origin", "http://localhost:3000"),
                ],
                start_body,
                403,
            ),
        ];
        for (path, headers, body, want) in cases {
            let mut all = vec![("Host", host.as_str())];
            all.extend_from_slice(headers);
            let r = send(&s, "POST", path, &all, body).await;
            assert_eq!(r.status, want, "POST {path} {headers:?}: {}", r.body);
        }
        assert!(
            s.state.slot.current().is_some(),
            "a cross-site request ended the learner's session"
        );
        // The console's own fetch (JSON, same origin) and a non-browser client both pass.
        let r = send(
            &s,
            "POST",
            "/api/session/end",
            &[
                ("Host", &host),
                ("Origin", &own),
                ("Content-Type", "application/json; charset=utf-8"),
            ],
            "",
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let r = send(&s, "POST", "/api/session/end", &[("Host", &host)], "").await;
        assert_eq!(
            r.status, 404,
            "no Origin, no Sec-Fetch-Site: a non-browser client; {}",
            r.body
        );
    });
}

fn basic(scheme: &str, password: &str) -> String {
    // base64("u:" + password) for the two passwords these tests use.
    let encoded = match password {
        "s3cret" => "dTpzM2NyZXQ=",
        _ => "dTp3cm9uZw==",
    };
    format!("{scheme} {encoded}")
}

#[test]
fn basic_auth_scheme_is_case_insensitive_and_failures_are_rate_limited() {
    rt().block_on(async {
        let s = server(Some("s3cret")).await;
        let host = s.base.clone();
        for scheme in ["Basic", "basic", "BASIC", "bAsIc"] {
            let auth = basic(scheme, "s3cret");
            let r = send(
                &s,
                "GET",
                "/api/session/state",
                &[("Host", &host), ("Authorization", &auth)],
                "",
            )
            .await;
            assert_eq!(r.status, 200, "scheme {scheme}: {}", r.body);
        }
        let wrong = basic("Basic", "wrong");
        let mut statuses = Vec::new();
        for _ in 0..8 {
            let r = send(
                &s,
                "GET",
                "/api/session/state",
                &[("Host", &host), ("Authorization", &wrong)],
                "",
            )
            .await;
            statuses.push(r.status);
            if r.status == 429 {
                let retry: u64 = r
                    .head
                    .lines()
                    .find_map(|l| l.strip_prefix("retry-after: "))
                    .and_then(|v| v.trim().parse().ok())
                    .expect("429 carries Retry-After in seconds");
                assert!((1..=3600).contains(&retry), "{retry}");
            }
        }
        assert_eq!(statuses[..5], [401; 5], "{statuses:?}");
        assert!(statuses[5..].iter().all(|&c| c == 429), "{statuses:?}");
        // While locked out even the right password waits: no free guesses.
        let right = basic("Basic", "s3cret");
        let r = send(
            &s,
            "GET",
            "/api/session/state",
            &[("Host", &host), ("Authorization", &right)],
            "",
        )
        .await;
        assert_eq!(r.status, 429, "{}", r.body);
    });
}
