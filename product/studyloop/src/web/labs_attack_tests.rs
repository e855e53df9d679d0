//! Labs' Start/Cancel drill under attack, against the real server: hostile,
//! generated and oversized drill ids, a tampered or removed module, and a page
//! on another origin. Each refusal is a 4xx naming the bad value (bounded and
//! escaped), and none starts a session or runs a phase.

use serde_json::{Value, json};

use super::labs_tests::{DRILL, acp, install, nothing_ran, post};
use super::start_tests::world;

#[test]
fn hostile_unknown_removed_and_tampered_drills_are_refused_naming_them() {
    let w = world(&[]);
    let store = install(&w);
    w.rt.block_on(async {
        let start = |drill: Value| post(&w, "/api/labs/drill/start", json!({"drill": drill}));
        let huge = format!("{}/d/t", "a".repeat(60_000));
        let cases: [(Value, u16, &str); 9] = [
            (
                json!("../../etc/passwd"),
                400,
                "`../../etc/passwd` is not a drill",
            ),
            (
                json!("my-drills/../../../x"),
                400,
                "`my-drills/../../../x` is not a drill",
            ),
            (json!(format!("{DRILL}/..")), 400, "is not a drill"),
            (json!(huge), 400, "…` is not a drill"),
            (json!(format!("{DRILL}\u{202e}")), 400, "ready-01\\u{202e}`"),
            (
                json!("my-drills/getting-started/ready-01\u{0}\u{1b}[2J"),
                400,
                "\\0\\u{1b}[2J",
            ),
            (
                json!("nope/d/t"),
                404,
                "module `nope` is not installed; installed: my-drills",
            ),
            (
                json!("my-drills/nope/t"),
                404,
                "deck `nope` is not in module `my-drills`; it has: getting-started",
            ),
            (json!(7), 422, "send {\"drill\""),
        ];
        for (drill, status, says) in cases {
            let (got, body) = start(drill.clone()).await;
            let error = body["error"]["message"].as_str().unwrap_or_default();
            assert_eq!(got, status, "{drill:.80}: {body:.300}");
            assert!(error.contains(says), "{says:?} not in {error:.300}");
            assert!(
                error.len() < 400,
                "the error echoes the whole id: {}",
                error.len()
            );
        }
        // Generated ids: separators, dots, controls, bidi, non-ASCII, percent.
        let alphabet: Vec<char> = "a-/.%\\ é\u{0}\u{1b}\u{202e}\u{200b}\n9".chars().collect();
        let mut seed: u64 = 0x5eed;
        for n in 0..300 {
            let len = 1 + n % 90;
            let id: String = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    alphabet[usize::try_from(seed >> 33).unwrap_or(0) % alphabet.len()]
                })
                .collect();
            let (got, body) = start(json!(id)).await;
            let error = body["error"]["message"].as_str().unwrap_or_default();
            assert!(matches!(got, 400 | 404), "{id:?}: {got} {body}");
            assert!(
                error.len() < 400 && !error.contains('\u{1b}') && !error.contains('\u{202e}'),
                "{error:?}"
            );
        }
        let over = json!({"drill": "a".repeat(70_000)});
        let (got, _) = w.http("POST", "/api/labs/drill/start", Some(over)).await;
        assert_eq!(got, 413, "a body over 64 KiB");
        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(
            st["active"], false,
            "a refused drill started a session: {st}"
        );

        let snap = std::fs::read_dir(store.dir.join("snapshots"))
            .expect("snapshots")
            .next()
            .expect("one")
            .expect("entry")
            .path();
        // The snapshot is kept read-only; a tamperer with the learner's uid (not
        // only root, who ignores the mode) can make it writable again first.
        let script = snap.join("scripts/check.sh");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        std::fs::write(&script, "#!/bin/sh\necho pwned\n").expect("tamper");
        let (got, body) = start(json!(DRILL)).await;
        assert_eq!(got, 409, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("the snapshot of module `my-drills` was changed after install"),
            "{body}"
        );
        store.remove("my-drills").expect("remove");
        let (got, body) = start(json!(DRILL)).await;
        assert_eq!(got, 404, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("installed: none"),
            "{body}"
        );
    });
    nothing_ran(&store);
}

#[test]
fn a_page_on_another_origin_cannot_start_or_cancel_a_drill() {
    let w = world(&[]);
    let store = install(&w);
    w.rt.block_on(async {
        let port = w.base.rsplit(':').next().expect("port").to_owned();
        let local = format!("127.0.0.1:{port}");
        let body = json!({"drill": DRILL, "session": acp()}).to_string();
        // One POST with this Host, extra headers and Content-Type.
        let send = |path: &str, host: &str, extra: &str, ctype: &str| {
            let req = format!(
                "POST {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let base = w.base.clone();
            async move { crate::web::testkit::raw(&base, &req).await }
        };
        let (start, cancel, json) = ("/api/labs/drill/start", "/api/labs/drill/cancel", "application/json");
        let evil = "Origin: http://evil.example\r\n";
        let rebound = format!("evil.example:{port}");
        for (path, host, extra, ctype, want) in [
            (start, local.as_str(), evil, json, 403),
            (start, local.as_str(), "Sec-Fetch-Site: cross-site\r\n", json, 403),
            (cancel, local.as_str(), evil, json, 403),
            // A rebound domain (DNS rebinding) sends its own name as Host.
            (start, rebound.as_str(), "", json, 421),
            // A form post (no preflight) is not JSON.
            (start, local.as_str(), "", "text/plain", 415),
        ] {
            let r = send(path, host, extra, ctype).await;
            assert_eq!(r.status, want, "{path} {host} {extra} {ctype}: {}", r.body);
        }
        let (_, st) = w.http("GET", "/api/session/state", None).await;
        assert_eq!(st["active"], false, "a cross-origin page started a session: {st}");
        // The control: the console's own page may (so the refusals above are the guard's).
        let own = format!("Origin: http://{local}\r\n");
        let r = send(start, &local, &own, json).await;
        assert_eq!(r.status, 201, "{}", r.body);
        w.http("POST", "/api/session/end", None).await;
    });
    nothing_ran(&store);
}

/// The same class on the dashboard's own Start: before the start lock, two
/// concurrent starts both passed the state-file claim (both are this
/// process's), both launched an agent, and the loser's rollback rewrote the
/// state file under the winner.
#[test]
fn concurrent_dashboard_starts_make_one_session_and_keep_its_state() {
    const ROUNDS: usize = 5;
    let w = world(&[]);
    w.rt.block_on(async {
        for round in 0..ROUNDS {
            let body = |topic: &str| json!({"topic": topic, "agent": "codex", "transport": "acp"});
            let (a, b) = tokio::join!(w.start(body("first")), w.start(body("second")));
            let mut statuses = [a.0, b.0];
            statuses.sort_unstable();
            assert_eq!(statuses, [201, 409], "round {round}: {a:?} {b:?}");
            let winner = if a.0 == 201 { &a.1 } else { &b.1 };
            let file = w.state_file().expect("state file");
            assert_eq!(
                (file.study_session_id.as_deref(), file.is_active()),
                (winner["study_session_id"].as_str(), true),
                "round {round}: the state file lost the live session"
            );
            w.http("POST", "/api/session/end", None).await;
        }
    });
}
