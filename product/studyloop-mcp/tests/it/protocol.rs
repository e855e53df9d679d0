//! Protocol errors, framing, batches and tool annotations, as raw JSON lines
//! on the real binary's stdin (issue 27 items 1-4 and 6): what a client that
//! gets something wrong, or that speaks `2025-03-26`, reads back.

use std::time::Duration;

use serde_json::{Value, json};

use crate::stdio::{Mcp, world};

const WAIT: Duration = Duration::from_secs(20);

/// The next line the server writes; the test fails when nothing comes.
fn answer(m: &mut Mcp, what: &str) -> Value {
    m.next_json(WAIT)
        .unwrap_or_else(|| panic!("no answer to {what} within 20 s"))
}

fn assert_error(v: &Value, code: i64, id: &Value, what: &str) {
    assert_eq!(v["jsonrpc"], "2.0", "{what}: {v}");
    assert_eq!(v["error"]["code"], code, "{what}: {v}");
    assert_eq!(&v["id"], id, "{what}: {v}");
    assert!(v.get("result").is_none(), "{what}: {v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{what}: {v}"
    );
}

/// The session still answers after the bad lines.
fn still_alive(m: &mut Mcp) {
    let r = m.request("ping", json!({}));
    assert!(r["result"].is_object(), "{r}");
}

#[test]
fn an_unknown_tool_is_invalid_params_naming_the_tools() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let r = m.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_error(&r, -32602, &r["id"].clone(), "unknown tool");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("no_such_tool") && msg.contains("list_study_plans"),
        "{r}"
    );
}

#[test]
fn malformed_tools_call_params_are_invalid_params_with_the_id() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    for (id, params, what) in [
        (json!(501), json!({"arguments": {}}), "no name"),
        (
            json!("a-502"),
            json!({"name": "list_study_plans", "arguments": [1, 2]}),
            "arguments an array",
        ),
        (json!(503), json!({"name": 7}), "name a number"),
        (json!(504), json!("list_study_plans"), "params a string"),
    ] {
        m.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string(),
        );
        let v = answer(&mut m, what);
        assert_error(&v, -32602, &id, what);
    }
    still_alive(&mut m);
}

#[test]
fn framing_errors_are_answered_with_the_readable_id() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let null = Value::Null;
    let cases: [(&str, i64, Value); 7] = [
        ("this is not JSON", -32700, null.clone()),
        (
            r#"{"jsonrpc": "2.0", "id": 1, "method": "ping""#,
            -32700,
            null.clone(),
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 7, "method": 42}"#,
            -32600,
            json!(7),
        ),
        (
            r#"{"jsonrpc": "1.0", "id": "x-8", "method": "ping"}"#,
            -32600,
            json!("x-8"),
        ),
        (r#"{"jsonrpc": "2.0", "id": 9}"#, -32600, json!(9)),
        (
            r#"{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}"#,
            -32600,
            null.clone(),
        ),
        ("5", -32600, null.clone()),
    ];
    for (line, code, id) in cases {
        m.send_line(line);
        let v = answer(&mut m, line);
        assert_error(&v, code, &id, line);
    }
    // A malformed notification (no id) is not answered (JSON-RPC 2.0 §4.1).
    m.send_line(r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 3}"#);
    still_alive(&mut m);
}

#[test]
fn a_batch_is_answered_as_an_array_under_2025_03_26() {
    let (home, plans) = world();
    let mut m = Mcp::spawn_version(home.path(), Some(&plans), "2025-03-26");
    m.send_line(
        &json!([
            {"jsonrpc": "2.0", "id": 101, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
            {"jsonrpc": "2.0", "id": "b-102", "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 103, "method": "tools/call", "params": {"arguments": {}}},
            7
        ])
        .to_string(),
    );
    let v = answer(&mut m, "a batch");
    let items = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    assert_eq!(items.len(), 4, "{v}");
    let by_id = |id: Value| {
        items
            .iter()
            .find(|i| i["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id} in {v}"))
    };
    assert!(by_id(json!(101))["result"].is_object(), "{v}");
    assert_eq!(
        by_id(json!("b-102"))["result"]["tools"]
            .as_array()
            .map(Vec::len),
        Some(13),
        "{v}"
    );
    assert_error(
        by_id(json!(103)),
        -32602,
        &json!(103),
        "bad call in a batch",
    );
    assert_error(by_id(Value::Null), -32600, &Value::Null, "7 in a batch");
    // An empty array is one Invalid Request, not an empty array.
    m.send_line("[]");
    assert_error(&answer(&mut m, "[]"), -32600, &Value::Null, "[]");
    // A batch of notifications only gets no answer at all.
    m.send_line(r#"[{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 2}}]"#);
    still_alive(&mut m);
}

#[test]
fn a_batch_is_refused_clearly_after_2025_03_26() {
    for version in ["2025-06-18", "2025-11-25"] {
        let (home, plans) = world();
        let mut m = Mcp::spawn_version(home.path(), Some(&plans), version);
        m.send_line(r#"[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#);
        let v = answer(&mut m, "a batch");
        assert_error(&v, -32600, &Value::Null, version);
        let msg = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains(version) && msg.contains("2025-03-26"),
            "{version}: {v}"
        );
        still_alive(&mut m);
    }
}

#[test]
fn every_tool_has_a_title_and_annotations() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let r = m.request("tools/list", json!({}));
    // (name, readOnly, destructive, idempotent)
    let want = [
        ("list_study_plans", true, false, true),
        ("get_study_plan", true, false, true),
        ("get_planning_interview", true, false, true),
        ("create_study_plan", false, false, false),
        ("update_study_plan", false, true, true),
        ("set_study_plan_status", false, false, true),
        ("set_study_plan_milestone", false, false, true),
        ("evaluate_study_plan", false, false, false),
        ("delete_study_plan", false, true, true),
        ("record_plan_learning", false, false, true),
        ("log_topic", false, false, false),
        ("end_session", false, true, true),
        ("session_search", true, false, true),
    ];
    let tools = r["result"]["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(tools.len(), want.len(), "{r}");
    for (t, (name, ro, destructive, idempotent)) in tools.iter().zip(want) {
        assert_eq!(t["name"], name, "{t}");
        let title = t["title"].as_str().unwrap_or_default();
        assert!(!title.is_empty() && title != name, "{name}: {t}");
        let a = &t["annotations"];
        assert_eq!(a["title"], title, "{name}: {t}");
        assert_eq!(a["readOnlyHint"], ro, "{name}: {t}");
        assert_eq!(a["destructiveHint"], destructive, "{name}: {t}");
        assert_eq!(a["idempotentHint"], idempotent, "{name}: {t}");
        assert_eq!(a["openWorldHint"], false, "{name}: {t}");
    }
}
