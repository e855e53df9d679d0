//! Protocol errors, framing, batches, tool annotations and argument checks
//! against the listed schemas, as raw JSON lines on the real binary's stdin
//! (issue 27 items 1-6): what a client that gets something wrong, or that
//! speaks `2025-03-26`, reads back.

use std::time::Duration;

use serde_json::{Value, json};

use crate::stdio::{Mcp, bare_plan, world};

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

/// `tools/call` whose arguments break the tool's listed `inputSchema`:
/// `-32602` naming the argument, what it must be, and the fix; the tool does not run.
fn schema_refusal(m: &mut Mcp, tool: &str, args: &Value) -> Value {
    let r = m.request("tools/call", json!({"name": tool, "arguments": args}));
    assert_error(&r, -32602, &r["id"].clone(), &format!("{tool} {args}"));
    assert_eq!(r["error"]["data"]["tool"], tool, "{r}");
    r
}

#[test]
fn arguments_the_schema_forbids_are_invalid_params_naming_argument_type_and_fix() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let (doc, before, rev) = bare_plan(&mut m, &plans);
    // (tool, arguments, words the message must hold)
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "topics": "sql"}),
            vec!["`topics`", "an array", "the string \"sql\"", "[\"sql\"]"],
        ),
        (
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "success": "ship it"}),
            vec!["`success`", "an array", "[\"ship it\"]"],
        ),
        (
            "get_study_plan",
            json!({"plan_id": "bare", "include_markdown": null}),
            vec!["`include_markdown`", "a boolean", "got null", "omit it"],
        ),
        (
            "delete_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "confirmed": null}),
            vec!["`confirmed`", "a boolean", "got null"],
        ),
        (
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "colour": "red"}),
            vec!["`colour`", "remove it", "accepted:", "topics"],
        ),
        (
            "get_planning_interview",
            json!({"x": 1}),
            vec!["`x`", "takes no arguments"],
        ),
        (
            "get_study_plan",
            json!({}),
            vec!["`plan_id`", "required", "add \"plan_id\""],
        ),
        (
            "create_study_plan",
            json!({"title": "X", "answers": {}}),
            vec!["`request_id`", "required", "add \"request_id\""],
        ),
        (
            "set_study_plan_status",
            json!({"plan_id": "bare", "status": "paused"}),
            vec!["`if_revision`", "required", "add \"if_revision\""],
        ),
        (
            "set_study_plan_status",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "status": "finished"}),
            vec!["`status`", "one of: draft, active, paused", "\"finished\""],
        ),
        (
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "energy_floor": 0}),
            vec!["`energy_floor`", "at least 1", "the number 0"],
        ),
        (
            "get_study_plan",
            json!({"plan_id": "bare", "history_limit": 201}),
            vec!["`history_limit`", "at most 200"],
        ),
        (
            "create_study_plan",
            json!({"request_id": "req-x", "title": "X", "answers": "nope"}),
            vec!["`answers`", "an object"],
        ),
        (
            "set_study_plan_milestone",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "index": "0", "done": true}),
            vec![
                "`index`",
                "an integer",
                "the string \"0\"",
                "without quotes",
            ],
        ),
        (
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "milestones": ["one", 2]}),
            vec!["`milestones[1]`", "accepted forms", "a string", "an object"],
        ),
        (
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "milestones": [{"title": 3}]}),
            vec!["`milestones[0]`", "accepted forms"],
        ),
        (
            "log_topic",
            json!({"topic": "t", "status": "bored"}),
            vec!["`status`", "one of: learning, struggling"],
        ),
        (
            "evaluate_study_plan",
            json!({"plan_id": "bare", "phase": "never"}),
            vec!["`phase`", "one of: start, mid, end"],
        ),
    ];
    for (tool, args, words) in &cases {
        let r = schema_refusal(&mut m, tool, args);
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        for w in words {
            assert!(msg.contains(w), "{tool} {args}: no {w:?} in {msg}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(&doc).unwrap(),
        before,
        "a refused call wrote to the document"
    );
    // The same arguments in the declared types are accepted and written.
    m.call(
        "update_study_plan",
        json!({"plan_id": "bare", "if_revision": rev, "topics": ["sql"], "success": ["ship it"]}),
    )
    .unwrap();
    let after = std::fs::read_to_string(&doc).unwrap();
    assert!(after.contains("ship it"), "{after}");
}

/// One mechanism for every tool: each property of each listed `inputSchema`,
/// sent in a wrong type, and an extra property, is refused naming it.
#[test]
fn every_listed_schema_is_the_one_checked() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let r = m.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().cloned().unwrap_or_default();
    let mut checked = 0;
    for t in &tools {
        let name = t["name"].as_str().unwrap_or_default();
        let schema = &t["inputSchema"];
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (prop, s) in &props {
            let wrong = match s["type"].as_str() {
                Some("string") => json!(5),
                Some("boolean") => Value::Null,
                Some("integer") => json!("1"),
                Some("array" | "object") => json!("x"),
                other => panic!("{name}.{prop}: a type the test does not know: {other:?}"),
            };
            let r = schema_refusal(&mut m, name, &json!({ prop.as_str(): wrong }));
            let msg = r["error"]["message"].as_str().unwrap_or_default();
            assert!(msg.contains(&format!("`{prop}`")), "{name}.{prop}: {msg}");
            checked += 1;
        }
        let r = schema_refusal(&mut m, name, &json!({"zz_extra": 1}));
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("`zz_extra`"), "{name}: {msg}");
    }
    assert!(
        tools.len() == 13 && checked > 40,
        "{} tools, {checked} properties",
        tools.len()
    );
}

/// From `2025-11-25` on (SEP-1303) the same violations are a tool execution
/// error (`isError`, `invalid:` and the same words), so a model reads them and
/// corrects its call; `2025-03-26` keeps `-32602`, like `2025-06-18` above.
#[test]
fn from_2025_11_25_arguments_the_schema_forbids_are_a_tool_error_the_model_reads() {
    let (home, plans) = world();
    let mut m = Mcp::spawn_version(home.path(), Some(&plans), "2025-11-25");
    let (doc, before, _) = bare_plan(&mut m, &plans);
    let err = m
        .call(
            "update_study_plan",
            json!({"plan_id": "bare", "if_revision": "r0000000000000000", "topics": "sql"}),
        )
        .unwrap_err();
    for w in ["invalid: ", "`topics`", "an array", "[\"sql\"]"] {
        assert!(err.contains(w), "no {w:?} in {err}");
    }
    assert!(err.starts_with("invalid: "), "{err}");
    let err = m
        .call(
            "get_study_plan",
            json!({"plan_id": "bare", "include_markdown": null}),
        )
        .unwrap_err();
    assert!(
        err.contains("`include_markdown`") && err.contains("a boolean"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&doc).unwrap(),
        before,
        "a refused call wrote"
    );
    let (home, plans) = world();
    let mut m = Mcp::spawn_version(home.path(), Some(&plans), "2025-03-26");
    schema_refusal(
        &mut m,
        "update_study_plan",
        &json!({"plan_id": "bare", "topics": "sql"}),
    );
}
