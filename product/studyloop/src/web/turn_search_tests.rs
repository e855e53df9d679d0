//! Turn search end to end: turns driven through the real web ACP path (the
//! server, its WebSocket and `studyloop-stub-acp`) are found by their words
//! through both doors, the `studyloop search --json` binary and the
//! `studyloop-mcp` binary's `session_search`, each hit naming kind `turn`, the
//! session and the turn id; hostile turns neither fail nor match wrongly.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::start_tests::{send, turn_end, until, world, ws};
use super::testkit;

/// `studyloop search QUERY --json` in the world's HOME.
fn cli_search(home: &std::path::Path, query: &str) -> Value {
    let out = Command::new(testkit::bin("studyloop"))
        .args(["search", query, "--json"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("run studyloop search");
    assert!(out.status.success(), "search {query:?}: {out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("search --json is JSON");
    assert_eq!(
        (&v["schema_version"], &v["command"]),
        (&1.into(), &"search".into()),
        "{v}"
    );
    v["result"].clone()
}

/// `session_search` over the real `studyloop-mcp` binary (which validates its
/// answer against the listed outputSchema before sending it): the envelope's `result`.
fn mcp_search(home: &std::path::Path, query: &str) -> Value {
    let answer =
        super::doors_tests::mcp_calls(home, &[], &[("session_search", json!({"query": query}))])
            .remove(0);
    assert_ne!(answer["isError"], true, "{answer}");
    assert_eq!(answer["structuredContent"]["command"], "search", "{answer}");
    answer["structuredContent"]["result"].clone()
}

/// `(kind, session_id, turn_id, role)` of every hit.
fn hits(found: &Value) -> Vec<(String, String, String, String)> {
    found["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|h| {
            let s = |k: &str| h[k].as_str().unwrap_or("null").to_owned();
            (s("kind"), s("session_id"), s("turn_id"), s("role"))
        })
        .collect()
}

#[test]
fn web_acp_turns_are_found_by_both_doors_with_their_turn_ids() {
    let w = world(&[]);
    let hostile = format!(
        "nul\0byte \"quoted\" star* NEAR(a b) ' OR 1=1 -- {} tailword",
        "filler ".repeat(20_000)
    );
    let sid = w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "SQL windows", "agent": "codex", "transport": "acp"}))
            .await;
        assert_eq!(status, 201, "{body}");
        let mut sock = ws(&w, body["ws_url"].as_str().expect("ws_url")).await;
        until(&mut sock, |_| true).await;
        for text in ["how does zeppelinword partition the rows", hostile.as_str()] {
            send(&mut sock, json!({"type": "input", "data": text})).await;
            until(&mut sock, turn_end).await;
        }
        let (status, _) = w.http("POST", "/api/session/end", None).await;
        assert_eq!(status, 200);
        body["study_session_id"].as_str().expect("id").to_owned()
    });
    // Turns are written off the conversation's path: wait for the reply of t2.
    let deadline = Instant::now() + Duration::from_secs(10);
    while hits(&cli_search(&w.home, "quoted")).len() < 2 {
        assert!(Instant::now() < deadline, "turn t2 never indexed");
        std::thread::sleep(Duration::from_millis(100));
    }
    let turn = |t: &str, role: &str| {
        (
            "turn".to_owned(),
            sid.clone(),
            t.to_owned(),
            role.to_owned(),
        )
    };
    // The stub echoes the prompt: the prompt and the reply of t1 both match.
    let mut found = hits(&cli_search(&w.home, "zeppelinword"));
    found.sort();
    assert_eq!(found, [turn("t1", "agent"), turn("t1", "user")]);
    let mut by_mcp = hits(&mcp_search(&w.home, "zeppelinword"));
    by_mcp.sort();
    assert_eq!(by_mcp, found);
    // A word of no turn finds none; text past the 64 KiB bound is not indexed.
    assert!(hits(&cli_search(&w.home, "nowhereword")).is_empty());
    assert!(hits(&mcp_search(&w.home, "nowhereword")).is_empty());
    assert!(hits(&cli_search(&w.home, "tailword")).is_empty());
    // FTS syntax is searched as words: it finds t2 or nothing, never fails.
    for q in ["\"", "*", "NEAR(", "star*", "' OR 1=1 --", "NEAR(zzz"] {
        let got = hits(&cli_search(&w.home, q));
        assert!(got.iter().all(|h| h.2 == "t2"), "{q:?}: {got:?}");
        assert_eq!(hits(&mcp_search(&w.home, q)), got, "{q:?}");
    }
}
