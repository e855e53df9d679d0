//! Every tool's `outputSchema` as `tools/list` shows it, compiled with the
//! server's own validator (`boon`, JSON Schema 2020-12), and every tool's
//! real `structuredContent` validated against it, on each success path
//! (issue 27 item 6): what a strict client (the TypeScript SDK validates
//! results against `outputSchema`, a refusal's too) would accept or throw on.
//! The structuredContent is the envelope (issue 30 item 1): each success names the
//! `command` docs/using-studyloop.md lists for its tool, each refusal is the failure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::stdio::{Mcp, revision, world};

/// The listed output schemas, compiled, by tool name.
struct Listed {
    schemas: boon::Schemas,
    by_tool: BTreeMap<String, boon::SchemaIndex>,
}

fn listed(m: &mut Mcp) -> Listed {
    let r = m.request("tools/list", json!({}));
    let mut c = boon::Compiler::new();
    c.set_default_draft(boon::Draft::V2020_12);
    let mut schemas = boon::Schemas::new();
    let mut by_tool = BTreeMap::new();
    for t in r["result"]["tools"].as_array().cloned().unwrap_or_default() {
        let name = t["name"].as_str().unwrap_or_default().to_owned();
        let s = &t["outputSchema"];
        // The MCP spec: an outputSchema is an object schema.
        assert_eq!(s["type"], "object", "{name}: {t}");
        let url = format!("urn:test:{name}");
        c.add_resource(&url, s.clone())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let idx = c
            .compile(&url, &mut schemas)
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        by_tool.insert(name, idx);
    }
    assert_eq!(by_tool.len(), 13, "every tool lists an outputSchema");
    Listed { schemas, by_tool }
}

/// `tool -> command`, the MCP table of docs/using-studyloop.md "The JSON envelope".
fn documented() -> BTreeMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/using-studyloop.md");
    let doc = std::fs::read_to_string(path).expect("docs/using-studyloop.md");
    let section = doc
        .split("## The JSON envelope")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the section");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            match cells[..] {
                [_, tool, name, _]
                    if tool.starts_with('`')
                        && !tool.contains(' ')
                        && tool.contains('_')
                        && name.starts_with('`') =>
                {
                    Some((
                        tool.trim_matches('`').to_owned(),
                        name.trim_matches('`').to_owned(),
                    ))
                }
                _ => None,
            }
        })
        .collect()
}

/// Call `tool`, demand a success whose structuredContent the listed schema accepts
/// and whose `command` is the documented one; its `result`.
fn valid_call(m: &mut Mcp, l: &Listed, seen: &mut Vec<String>, tool: &str, args: Value) -> Value {
    let out = m.call_raw(tool, args.clone());
    assert_ne!(out["isError"], true, "{tool} {args}: refused: {out}");
    let content = &out["structuredContent"];
    let idx = l.by_tool[tool];
    if let Err(e) = l.schemas.validate(content, idx) {
        panic!("{tool} {args}: structuredContent breaks its outputSchema: {e:#}\n{content:#}");
    }
    let documented = documented();
    assert_eq!(
        content["command"].as_str(),
        documented.get(tool).map(String::as_str),
        "{tool}: the command docs/using-studyloop.md lists ({documented:?})"
    );
    seen.push(tool.to_owned());
    content["result"].clone()
}

/// Call `tool`, demand a refusal whose structuredContent (the failure envelope) the
/// listed schema accepts, as the TypeScript SDK checks it; its `error`.
fn refused_call(m: &mut Mcp, l: &Listed, tool: &str, args: Value) -> Value {
    let out = m.call_raw(tool, args.clone());
    assert_eq!(out["isError"], true, "{tool} {args}: {out}");
    let content = &out["structuredContent"];
    if let Err(e) = l.schemas.validate(content, l.by_tool[tool]) {
        panic!("{tool} {args}: the refusal breaks its outputSchema: {e:#}\n{content:#}");
    }
    content["error"].clone()
}

#[test]
fn every_tools_structured_content_matches_its_listed_output_schema() {
    let (home, plans) = world();
    let dir = home.path().join(".config/studyloop");
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let l = listed(&mut m);
    let mut seen = Vec::new();
    let s = &mut seen;
    valid_call(&mut m, &l, s, "list_study_plans", json!({}));
    valid_call(&mut m, &l, s, "get_planning_interview", json!({}));
    let bare = valid_call(
        &mut m,
        &l,
        s,
        "create_study_plan",
        json!({"title": "Bare", "plan_id": "bare", "answers": {}, "request_id": "req-bare"}),
    );
    // No milestones: progress is unknown (null), and the schema says so.
    let ev = valid_call(
        &mut m,
        &l,
        s,
        "evaluate_study_plan",
        json!({"plan_id": "bare", "phase": "start"}),
    );
    assert_eq!(ev["progress"], Value::Null, "{ev}");
    let answers = json!({"why": "reports", "success": ["a running total"],
        "milestones": [{"title": "OVER", "concepts": ["PARTITION BY"]}, "Frames"]});
    let r = valid_call(
        &mut m,
        &l,
        s,
        "create_study_plan",
        json!({"title": "SQL windows", "plan_id": "sql", "answers": answers, "status": "active", "request_id": "req-sql"}),
    );
    let r = valid_call(
        &mut m,
        &l,
        s,
        "update_study_plan",
        json!({"plan_id": "sql", "if_revision": revision(&r), "energy_floor": 3, "target_date": "2027-01-31", "topics": ["sql"]}),
    );
    let r = valid_call(
        &mut m,
        &l,
        s,
        "set_study_plan_milestone",
        json!({"plan_id": "sql", "if_revision": revision(&r), "index": 0, "done": true}),
    );
    let r = valid_call(
        &mut m,
        &l,
        s,
        "evaluate_study_plan",
        json!({"plan_id": "sql", "if_revision": revision(&r), "phase": "mid", "study_id": "s-x", "record": true}),
    );
    let r = valid_call(
        &mut m,
        &l,
        s,
        "record_plan_learning",
        json!({"plan_id": "sql", "if_revision": revision(&r), "title": "Frames", "body": "ROWS"}),
    );
    let got = valid_call(
        &mut m,
        &l,
        s,
        "get_study_plan",
        json!({"plan_id": "sql", "include_markdown": true, "include_history": true}),
    );
    assert!(
        got["markdown"].is_string() && got["checkpoints"].is_array(),
        "{got}"
    );
    valid_call(
        &mut m,
        &l,
        s,
        "set_study_plan_status",
        json!({"plan_id": "sql", "if_revision": revision(&r), "status": "paused"}),
    );
    valid_call(
        &mut m,
        &l,
        s,
        "list_study_plans",
        json!({"status": "paused"}),
    );
    valid_call(
        &mut m,
        &l,
        s,
        "delete_study_plan",
        json!({"plan_id": "bare", "if_revision": revision(&bare), "confirmed": true}),
    );
    // Nothing live: `ended: false`.
    let idle = valid_call(&mut m, &l, s, "end_session", json!({}));
    assert_eq!(idle["ended"], false, "{idle}");
    // A live session (state file only, an id no process carries): topic, search, end.
    let id = format!("s-mcp-structured-{}", std::process::id());
    std::fs::write(
        dir.join("session-state.json"),
        json!({"study_session_id": id, "mode": "study", "topic": "SQL",
            "started_at": "2026-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
    valid_call(
        &mut m,
        &l,
        s,
        "log_topic",
        json!({"topic": "window frames", "status": "win", "note": "ok"}),
    );
    valid_call(
        &mut m,
        &l,
        s,
        "log_topic",
        json!({"topic": "parked one", "status": "parked"}),
    );
    valid_call(
        &mut m,
        &l,
        s,
        "session_search",
        json!({"query": "window", "limit": 5}),
    );
    let ended = valid_call(&mut m, &l, s, "end_session", json!({}));
    assert_eq!(ended["ended"], true, "{ended}");
    let hits = valid_call(&mut m, &l, s, "session_search", json!({"query": "frames"}));
    assert!(hits["results"].is_array(), "{hits}");
    // Refusals: plan, session and store errors, each the failure its schema accepts.
    for (tool, args, code) in [
        ("get_study_plan", json!({"plan_id": "nope"}), "not_found"),
        (
            "set_study_plan_status",
            json!({"plan_id": "sql", "if_revision": "r0000000000000000", "status": "active"}),
            "conflict",
        ),
        ("log_topic", json!({"topic": "late"}), "no_active_session"),
        ("session_search", json!({"query": "  "}), "invalid_input"),
    ] {
        let e = refused_call(&mut m, &l, tool, args);
        assert_eq!(e["code"], code, "{tool}: {e}");
    }
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen.len(),
        13,
        "every tool succeeded at least once: {seen:?}"
    );
}

/// A result that breaks its schema is never sent as structuredContent: the
/// schema rejects a wrong shape (so the check above can fail).
#[test]
fn the_listed_output_schemas_reject_a_wrong_shape() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let l = listed(&mut m);
    let ok = |command: &str, result: Value| json!({"schema_version": 1, "command": command, "result": result});
    let empty = json!({"plans": [], "count": 0, "problems": []});
    assert!(
        l.schemas
            .validate(
                &ok("plan.list", empty.clone()),
                l.by_tool["list_study_plans"]
            )
            .is_ok()
    );
    for (tool, bad) in [
        // The bare result (no envelope), another tool's command, a code outside the set.
        ("list_study_plans", empty.clone()),
        ("list_study_plans", ok("plan.show", empty)),
        (
            "get_study_plan",
            json!({"error": {"code": "gone", "message": "x", "details": null}}),
        ),
        (
            "list_study_plans",
            ok(
                "plan.list",
                json!({"plans": "none", "count": 0, "problems": []}),
            ),
        ),
        (
            "evaluate_study_plan",
            ok("plan.evaluate", json!({"plan_id": "x"})),
        ),
        ("end_session", ok("session.end", json!({"ended": true}))),
        (
            "session_search",
            ok(
                "search",
                json!({"mode": "fuzzy", "model": null, "notice": null, "results": [], "count": 0, "unembedded": 0}),
            ),
        ),
        (
            "log_topic",
            ok(
                "topic",
                json!({"logged": true, "topic": "t", "status": "win", "study_session_id": "s", "db_write": 0}),
            ),
        ),
    ] {
        assert!(
            l.schemas.validate(&bad, l.by_tool[tool]).is_err(),
            "{tool} accepted {bad}"
        );
    }
}
