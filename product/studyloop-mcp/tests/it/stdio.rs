use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: i64,
}

impl Mcp {
    pub(crate) fn spawn(home: &Path, plans: Option<&Path>) -> Self {
        Self::spawn_version(home, plans, "2025-06-18")
    }

    /// Spawn and initialize under protocol `version` (the server must agree to it).
    pub(crate) fn spawn_version(home: &Path, plans: Option<&Path>, version: &str) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_studyloop-mcp"));
        cmd.env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(p) = plans {
            cmd.env("STUDYLOOP_PLANS_DIR", p);
        }
        let mut child = cmd.spawn().expect("spawn studyloop-mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut m = Self {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let init = m.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "studyloop-test", "version": "0"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "studyloop", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, v: &Value) {
        self.send_line(&v.to_string());
    }

    /// Write one raw line (a newline is added), as a careless client would.
    pub(crate) fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line the server writes, parsed; None when nothing comes within `wait`.
    pub(crate) fn next_json(&mut self, wait: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(wait).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}")))
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no reply to {method} within 20 s"));
            let v: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC: {line}: {e}"));
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// `tools/call`: the tool result (`content`, `structuredContent`, `isError`), which
    /// must be the published `$defs/mcp_tool_result` (docs/schemas/envelope.schema.json).
    pub(crate) fn call_raw(&mut self, name: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let res = r["result"].clone();
        assert!(res.is_object(), "tools/call {name} answered {r}");
        if let Err(e) = tool_result_schema().validate(&res) {
            panic!("tools/call {name}: not the published mcp_tool_result: {e}\n{res:#}");
        }
        res
    }

    /// `tools/call`: Ok(the success envelope's `result`) or Err(the refusal's text).
    /// A success's text is its envelope as JSON; a refusal's text is its failure's
    /// message, and its `structuredContent` that failure (issue 30 item 1).
    pub(crate) fn call(&mut self, name: &str, args: Value) -> Result<Value, String> {
        let res = self.call_raw(name, args);
        let text = res["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let structured = &res["structuredContent"];
        if res["isError"] == json!(true) {
            assert_eq!(structured["error"]["message"], json!(text), "{res}");
            Err(text)
        } else {
            let parsed: Value = serde_json::from_str(&text).expect("the text is the JSON");
            assert_eq!(structured, &parsed);
            assert_eq!(parsed["schema_version"], 1, "{parsed}");
            Ok(parsed["result"].clone())
        }
    }

    /// `tools/call` that must be refused: the `error` object of its `structuredContent`.
    pub(crate) fn refusal(&mut self, name: &str, args: Value) -> Value {
        let res = self.call_raw(name, args.clone());
        assert_eq!(res["isError"], true, "{name} {args}: {res}");
        res["structuredContent"]["error"].clone()
    }
}

/// The published envelope schema's `$defs/mcp_tool_result`, compiled.
pub(crate) struct ToolResultSchema(boon::Schemas, boon::SchemaIndex);

impl ToolResultSchema {
    pub(crate) fn validate(&self, v: &Value) -> Result<(), String> {
        self.0.validate(v, self.1).map_err(|e| format!("{e:#}"))
    }
}

pub(crate) fn tool_result_schema() -> ToolResultSchema {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schemas/envelope.schema.json"
    );
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the schema")).expect("JSON");
    // Added under its own `$id`, so the `#/$defs/…` pointer resolves in it (nothing is fetched).
    let id = schema["$id"].as_str().expect("$id").to_owned();
    let mut c = boon::Compiler::new();
    c.set_default_draft(boon::Draft::V2020_12);
    c.add_resource(&id, schema).expect("resource");
    let mut schemas = boon::Schemas::new();
    let idx = c
        .compile(&format!("{id}#/$defs/mcp_tool_result"), &mut schemas)
        .expect("compiles");
    ToolResultSchema(schemas, idx)
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates the plan `bare` (no answers) and returns its document, text and revision,
/// for tests that prove a refused call wrote nothing.
pub(crate) fn bare_plan(m: &mut Mcp, plans: &Path) -> (PathBuf, String, String) {
    let created = m
        .call(
            "create_study_plan",
            json!({"title": "Bare", "plan_id": "bare", "answers": {}, "request_id": "req-bare"}),
        )
        .unwrap();
    let doc = plans.join("bare.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    (doc, text, revision(&created))
}

/// The `revision` a plan result carries (what the next change sends back).
pub(crate) fn revision(result: &Value) -> String {
    result["revision"]
        .as_str()
        .unwrap_or_else(|| panic!("no revision in {result}"))
        .to_owned()
}

pub(crate) fn world() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    studyloop::config::init(&home.path().join(".config/studyloop/config.yaml"), false).unwrap();
    let plans = home.path().join("plans");
    (home, plans)
}

const ORDER: [&str; 13] = [
    "list_study_plans",
    "get_study_plan",
    "get_planning_interview",
    "create_study_plan",
    "update_study_plan",
    "set_study_plan_status",
    "set_study_plan_milestone",
    "evaluate_study_plan",
    "delete_study_plan",
    "record_plan_learning",
    "log_topic",
    "end_session",
    "session_search",
];

#[test]
fn tools_are_listed_in_the_reference_order() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let r = m.request("tools/list", json!({}));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ORDER);
    for t in r["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
}

#[test]
fn plan_lifecycle_over_stdio() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let answers = json!({"why": "reports at work", "success": ["write a running total"],
        "milestones": [{"title": "OVER clause", "concepts": ["PARTITION BY"]}, "Frames"]});
    let created = m
        .call(
            "create_study_plan",
            json!({"title": "SQL windows", "plan_id": "sql-windows", "answers": answers, "request_id": "req-sql"}),
        )
        .unwrap();
    assert_eq!(
        (
            created["status"].clone(),
            created["readiness"]["ready"].clone()
        ),
        (json!("draft"), json!(true))
    );
    // A retried create (same request_id, same arguments) returns the plan it made.
    let again = m
        .call(
            "create_study_plan",
            json!({"title": "SQL windows", "plan_id": "sql-windows", "answers": answers, "request_id": "req-sql"}),
        )
        .unwrap();
    assert_eq!(again["revision"], created["revision"]);
    let active = m
        .call(
            "set_study_plan_status",
            json!({"plan_id": "sql-windows", "status": "active", "if_revision": revision(&created)}),
        )
        .unwrap();
    // The revision it was read at is stale now: refused with the current one.
    let stale = m
        .call(
            "set_study_plan_milestone",
            json!({"plan_id": "sql-windows", "index": 0, "done": true, "if_revision": revision(&created)}),
        )
        .unwrap_err();
    assert!(
        stale.starts_with("stale_revision:") && stale.contains(&revision(&active)),
        "{stale}"
    );
    let ev = m
        .call(
            "evaluate_study_plan",
            json!({"plan_id": "sql-windows", "phase": "start", "record": true, "if_revision": revision(&active)}),
        )
        .unwrap();
    assert_eq!(
        (ev["db_write"].clone(), ev["document_write"].clone()),
        (json!("saved"), json!("saved")),
        "{ev}"
    );
    assert_eq!(ev["recording_complete"], json!(true));
    let ms = m
        .call(
            "set_study_plan_milestone",
            json!({"plan_id": "sql-windows", "index": 0, "done": true, "if_revision": revision(&ev)}),
        )
        .unwrap();
    assert_eq!(ms["milestone_done"], json!(1));
    let got = m
        .call(
            "get_study_plan",
            json!({"plan_id": "sql-windows", "include_history": true, "include_markdown": true}),
        )
        .unwrap();
    assert_eq!(got["checkpoints"].as_array().unwrap().len(), 1);
    let doc = std::fs::read_to_string(plans.join("sql-windows.md")).unwrap();
    assert!(doc.contains("- [x] **OVER clause**"), "{doc}");
    assert_eq!(got["markdown"].as_str().unwrap(), doc);
    let up = m.call("update_study_plan", json!({"plan_id": "sql-windows", "if_revision": revision(&ms), "energy_floor": 3, "target_date": "2027-01-31", "topics": ["sql"]})).unwrap();
    assert_eq!(
        (up["energy_floor"].clone(), up["target_date"].clone()),
        (json!(3), json!("2027-01-31"))
    );
    let rec = m
        .call(
            "record_plan_learning",
            json!({"plan_id": "sql-windows", "if_revision": revision(&up), "title": "Frames", "body": "ROWS vs RANGE"}),
        )
        .unwrap();
    assert_eq!(rec["created"], json!(true));
    let rec = m
        .call(
            "record_plan_learning",
            json!({"plan_id": "sql-windows", "if_revision": revision(&rec), "title": "Frames", "body": "again"}),
        )
        .unwrap();
    assert_eq!(
        (rec["created"].clone(), rec["records"].clone()),
        (json!(false), json!(1))
    );
    let list = m
        .call("list_study_plans", json!({"status": "active"}))
        .unwrap();
    assert_eq!(list["count"], json!(1));
    let interview = m.call("get_planning_interview", json!({})).unwrap();
    assert_eq!(interview["existing_plans"][0]["plan_id"], "sql-windows");
    assert!(
        m.call(
            "delete_study_plan",
            json!({"plan_id": "sql-windows", "if_revision": revision(&rec)})
        )
        .unwrap_err()
        .starts_with("invalid:")
    );
    let del = m
        .call(
            "delete_study_plan",
            json!({"plan_id": "sql-windows", "confirmed": true, "if_revision": revision(&rec)}),
        )
        .unwrap();
    assert_eq!(
        del,
        json!({"deleted": true, "plan_id": "sql-windows", "warnings": []})
    );
}

#[test]
fn every_refusal_prefix_and_no_write() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let (doc, before, rev) = bare_plan(&mut m, &plans);
    let cases = [
        ("get_study_plan", json!({"plan_id": "nope"}), "not_found:"),
        (
            "get_study_plan",
            json!({"plan_id": "../../etc/passwd"}),
            "invalid_id:",
        ),
        (
            "create_study_plan",
            json!({"title": "Bare", "plan_id": "bare", "answers": {}, "request_id": "req-bare-2"}),
            "conflict:",
        ),
        (
            "create_study_plan",
            json!({"title": "Other", "answers": {}, "request_id": "req-bare"}),
            "conflict:",
        ),
        (
            "set_study_plan_status",
            json!({"plan_id": "bare", "status": "active", "if_revision": rev}),
            "not_ready:",
        ),
        (
            "set_study_plan_status",
            json!({"plan_id": "bare", "status": "paused", "if_revision": "r0000000000000000"}),
            "stale_revision:",
        ),
        // A recorded evaluation changes the plan, so it needs the revision (the schema
        // cannot say so: a preview needs none). A missing required `request_id` or
        // `if_revision` is a schema refusal: protocol::arguments_the_schema_forbids_….
        (
            "evaluate_study_plan",
            json!({"plan_id": "bare", "phase": "mid", "record": true}),
            "invalid:",
        ),
        (
            "set_study_plan_milestone",
            json!({"plan_id": "bare", "index": 0, "done": true, "if_revision": rev}),
            "invalid_milestone:",
        ),
        // An unknown tool is a protocol error (-32602), not a tool refusal:
        // protocol::an_unknown_tool_is_invalid_params_naming_the_tools. So
        // are arguments the listed schema forbids (a status or phase outside
        // its enum, a value out of range, an unknown key, `answers` not an
        // object): protocol::arguments_the_schema_forbids_are_invalid_params_….
    ];
    for (tool, args, prefix) in cases {
        let err = m.call(tool, args.clone()).unwrap_err();
        assert!(err.starts_with(prefix), "{tool} {args}: {err}");
    }
    let nr = m
        .call(
            "set_study_plan_status",
            json!({"plan_id": "bare", "status": "active", "if_revision": rev}),
        )
        .unwrap_err();
    assert!(
        nr.contains("add a `why`"),
        "not_ready names its blockers: {nr}"
    );
    assert_eq!(
        std::fs::read_to_string(&doc).unwrap(),
        before,
        "a refusal wrote to the document"
    );
    // A malformed document: plan_error naming file and line, never overwritten.
    let broken = before.replace("## Milestones", "## Milestones\n\nnot a milestone");
    std::fs::write(&doc, &broken).unwrap();
    let err = m
        .call(
            "set_study_plan_milestone",
            json!({"plan_id": "bare", "index": 0, "done": true, "if_revision": rev}),
        )
        .unwrap_err();
    assert!(
        err.starts_with("plan_error:") && err.contains("bare.md:"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), broken);
}

#[test]
fn session_tools_and_the_scope_payload() {
    let (home, plans) = world();
    let mut m = Mcp::spawn(home.path(), Some(&plans));
    let err = m.refusal(
        "log_topic",
        json!({"topic": "window functions", "status": "win"}),
    );
    assert_eq!(err["code"], "no_active_session", "{err}");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("no active study session"),
        "{err}"
    );
    // A status outside the schema's enum is -32602 (protocol.rs).
    // A live session (state file only): the topic lands in the feed and the DB.
    let dir = home.path().join(".config/studyloop");
    std::fs::write(dir.join("session-state.json"),
        r#"{"study_session_id":"s-1","mode":"study","topic":"SQL","started_at":"2026-01-01T00:00:00Z"}"#).unwrap();
    let ok = m
        .call(
            "log_topic",
            json!({"topic": "window functions", "status": "win", "note": "got it"}),
        )
        .unwrap();
    assert_eq!(
        (ok["logged"].clone(), ok["db_write"].clone()),
        (json!(true), json!("saved"))
    );
    let feed = std::fs::read_to_string(dir.join("session-topics.md")).unwrap();
    assert!(
        feed.contains("window functions | status:win | got it"),
        "{feed}"
    );
    let db = rusqlite_row(&dir.join("sessions.db"));
    assert_eq!(
        db,
        (
            "SQL".to_owned(),
            "window functions".to_owned(),
            "confident".to_owned()
        )
    );
    let hits = m
        .call("session_search", json!({"query": "window"}))
        .unwrap();
    assert!(hits["results"].is_array());
    // The store's own refusal, as `studyloop search "  " --json` gives it.
    let err = m.refusal("session_search", json!({"query": "  "}));
    assert_eq!(err["code"], "invalid_input", "{err}");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with("the search query is empty"),
        "{err}"
    );
    // No scope: the scope gate's failure, on every tool (a plan tool's names the fix).
    let bare = tempfile::tempdir().unwrap();
    let mut m = Mcp::spawn(bare.path(), None);
    for tool in [
        "list_study_plans",
        "log_topic",
        "end_session",
        "session_search",
    ] {
        let args = match tool {
            "log_topic" => json!({"topic": "t"}),
            "session_search" => json!({"query": "q"}),
            _ => json!({}),
        };
        let v = m.refusal(tool, args);
        assert_eq!(v["code"], "scope_unconfigured", "{tool}: {v}");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("No context scope configured"),
            "{tool}: {v}"
        );
        if tool == "list_study_plans" {
            assert!(
                v["details"]["fix"]
                    .as_str()
                    .is_some_and(|f| f.contains("memory.default_scope")),
                "{v}"
            );
        }
    }
}

/// The `study_progress` row, read through the product's own store API.
fn rusqlite_row(db: &Path) -> (String, String, String) {
    let rows = studyloop::store::Store::open(db)
        .unwrap()
        .progress_for("SQL")
        .unwrap();
    let (concept, confidence) = rows.into_iter().next().expect("a progress row");
    ("SQL".to_owned(), concept, confidence)
}
