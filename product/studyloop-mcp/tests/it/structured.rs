//! Every tool's `outputSchema` as `tools/list` shows it, compiled with the
//! server's own validator (`boon`, JSON Schema 2020-12), and every tool's
//! real `structuredContent` validated against it, on each success path
//! (issue 27 item 6): what a strict client (the TypeScript SDK validates
//! results against `outputSchema`) would accept or throw on.

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

/// Call `tool`, demand a success whose structuredContent the listed schema accepts.
fn valid_call(m: &mut Mcp, l: &Listed, seen: &mut Vec<String>, tool: &str, args: Value) -> Value {
    let out = m
        .call(tool, args.clone())
        .unwrap_or_else(|e| panic!("{tool} {args}: refused: {e}"));
    let idx = l.by_tool[tool];
    if let Err(e) = l.schemas.validate(&out, idx) {
        panic!("{tool} {args}: structuredContent breaks its outputSchema: {e:#}\n{out:#}");
    }
    seen.push(tool.to_owned());
    out
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
    for (tool, bad) in [
        (
            "list_study_plans",
            json!({"plans": "none", "count": 0, "problems": []}),
        ),
        ("evaluate_study_plan", json!({"plan_id": "x"})),
        ("end_session", json!({"ended": true})),
        (
            "session_search",
            json!({"mode": "fuzzy", "model": null, "notice": null, "results": [], "count": 0, "unembedded": 0}),
        ),
        (
            "log_topic",
            json!({"logged": true, "topic": "t", "status": "win", "study_session_id": "s", "db_write": 0}),
        ),
    ] {
        assert!(
            l.schemas.validate(&bad, l.by_tool[tool]).is_err(),
            "{tool} accepted {bad}"
        );
    }
}
