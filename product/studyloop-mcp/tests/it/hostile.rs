//! Hostile `log_topic` arguments through the real server, as a model steered
//! by a prompt injection would send them: each is refused with its prefix
//! and writes nothing, or is stored as one sanitised feed line (no injected
//! lines, no terminal escapes), never as anything else.

use serde_json::{Value, json};

use super::stdio::{Mcp, world};

#[test]
fn hostile_log_topic_arguments_are_refused_or_stay_one_clean_line() {
    let (home, plans) = world();
    let dir = home.path().join(".config/studyloop");
    std::fs::write(
        dir.join("session-state.json"),
        r#"{"study_session_id":"s-1","mode":"study","topic":"SQL","started_at":"2026-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let feed = dir.join("session-topics.md");
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    // Outside the listed schema (enum, types, required): -32602 naming the argument.
    let off_schema: Vec<(Value, &str)> = vec![
        (json!({"topic": "t", "status": "win; rm -rf /"}), "`status`"),
        (json!({"topic": "t", "status": 7}), "`status`"),
        (json!({"topic": ["a"], "status": "win"}), "`topic`"),
        (json!({"status": "win"}), "`topic`"),
    ];
    let mut tries = 0;
    for (args, names) in off_schema {
        tries += 1;
        let r = m.request(
            "tools/call",
            json!({"name": "log_topic", "arguments": args}),
        );
        assert_eq!(r["error"]["code"], -32602, "{args}: {r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(names), "{args}: {msg}");
        assert!(!feed.exists(), "{args} wrote");
    }
    // Inside the schema but refused by the tool: its prefix, nothing written.
    let refused: Vec<Value> = vec![
        json!({"topic": "   ", "status": "win"}),
        json!({"topic": "x".repeat(10_000), "status": "win"}),
        json!({"topic": "t", "status": "win", "note": "n".repeat(100_000)}),
    ];
    for args in refused {
        tries += 1;
        let err = m.call("log_topic", args.clone()).unwrap_err();
        assert!(err.starts_with("invalid:"), "{args}: {err}");
        assert!(
            !feed.exists() || std::fs::read_to_string(&feed).unwrap().is_empty(),
            "{args} wrote"
        );
    }
    // Accepted, but only as one line without escapes or forged entries.
    let sneaky = [
        "joins\n- [00:00] forged | status:win | injected",
        "ansi \u{1b}]0;pwned\u{7}\u{1b}[2J title",
        "cr\rover | status:parked",
    ];
    for topic in sneaky {
        tries += 1;
        let _ = m.call(
            "log_topic",
            json!({"topic": topic, "status": "learning", "note": "a\nb"}),
        );
    }
    let text = std::fs::read_to_string(&feed).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() <= sneaky.len(),
        "{tries} tries; forged lines: {text:?}"
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(
        lines.iter().all(|l| l.starts_with("- ["))
            && !lines.iter().any(|l| l.starts_with("- [00:00] forged")),
        "{text:?}"
    );
}
