//! One failure, one `error` object through every door (issue 30 item 1): the same
//! refused plan request sent as `studyloop … --json` (the real binary), to the web's
//! `/api/plans…` (the real server on a loopback port) and as an MCP `tools/call`
//! (the real `studyloop-mcp` binary, whose `structuredContent` carries it) yields the
//! identical `{"code", "message", "details"}`, since all three call
//! `PlanError::failure`. Each case is a failure a script meets: a plan that does
//! not exist, a change naming a stale revision, a create with a malformed request id.

use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::plans_tests::server_at;
use super::server_tests::rt;
use super::testkit;

/// A scratch HOME with the default config and a plans directory.
struct World {
    home: tempfile::TempDir,
    plans: std::path::PathBuf,
}

impl World {
    fn new() -> Self {
        let home = tempfile::tempdir().expect("tempdir");
        crate::config::init(&home.path().join(".config/studyloop/config.yaml"), false)
            .expect("config");
        let plans = home.path().join("plans");
        Self { home, plans }
    }

    fn env(&self, c: &mut Command) {
        c.env_clear()
            .env("HOME", self.home.path())
            .env("PATH", "/usr/bin:/bin")
            .env("STUDYLOOP_PLANS_DIR", &self.plans)
            .current_dir(self.home.path());
    }

    /// `studyloop ARGS` (with `--json`): its exit code and the JSON on stdout.
    fn cli(&self, args: &[&str]) -> (i32, Value) {
        let mut c = Command::new(testkit::bin("studyloop"));
        self.env(&mut c);
        let out = c.args(args).output().expect("run studyloop");
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code().unwrap_or(-1), v)
    }
}

/// Each `(tool, arguments)` as one `tools/call` to a fresh `studyloop-mcp` in
/// `home` (with `env`), negotiating `2025-06-18`: each tool result, in order.
pub(super) fn mcp_calls(home: &Path, env: &[(&str, &Path)], calls: &[(&str, Value)]) -> Vec<Value> {
    let mut cmd = Command::new(testkit::bin("studyloop-mcp"));
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn studyloop-mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "doors-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        lines.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}),
        );
    }
    for line in lines {
        writeln!(stdin, "{line}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut answers = vec![Value::Null; calls.len()];
    let mut left = calls.len();
    for line in stdout.lines().map_while(Result::ok) {
        let v: Value = serde_json::from_str(&line).expect("JSON-RPC");
        let slot = v["id"]
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .filter(|i| (1..=calls.len()).contains(i));
        if let Some(i) = slot {
            answers[i - 1] = v["result"].clone();
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    answers
}

/// The `error` object of a refused tool result, whose text is its message.
#[track_caller]
fn mcp_error(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "not refused: {result}");
    let error = result["structuredContent"]["error"].clone();
    assert_eq!(
        result["content"][0]["text"], error["message"],
        "the text a model reads is the failure's message: {result}"
    );
    error
}

/// One failure as each door is asked it.
struct Case {
    what: &'static str,
    /// `studyloop` arguments.
    cli: Vec<String>,
    /// Method, path and body of the web request.
    web: (&'static str, &'static str, Option<Value>),
    /// Tool and arguments.
    mcp: (&'static str, Value),
    /// The code every door must name.
    code: &'static str,
}

#[test]
fn the_same_plan_failure_is_the_same_error_object_through_cli_web_and_mcp() {
    let w = World::new();
    let create = json!({"request_id": "doors-1", "title": "SQL windows", "plan_id": "sql",
        "answers": {"why": "reports", "success": ["a running total"], "milestones": ["OVER"]}});
    let (code, made) = w.cli(&["plan", "new", "--json", &create.to_string()]);
    assert_eq!(code, 0, "{made}");
    let stale = "r0000000000000000";
    let bad_create = json!({"request_id": "Not An Id!", "title": "X", "answers": {}});
    let status = json!({"plan_id": "sql", "if_revision": stale, "status": "paused"});
    let cases = [
        Case {
            what: "an unknown plan",
            cli: vec!["plan".into(), "show".into(), "nope".into(), "--json".into()],
            web: ("GET", "/api/plans/nope", None),
            mcp: ("get_study_plan", json!({"plan_id": "nope"})),
            code: "not_found",
        },
        Case {
            what: "a stale if_revision",
            cli: vec![
                "plan".into(),
                "status".into(),
                "--json".into(),
                status.to_string(),
            ],
            web: (
                "PATCH",
                "/api/plans/sql",
                Some(json!({"if_revision": stale, "status": "paused"})),
            ),
            mcp: ("set_study_plan_status", status.clone()),
            code: "conflict",
        },
        Case {
            what: "a malformed request_id",
            cli: vec![
                "plan".into(),
                "new".into(),
                "--json".into(),
                bad_create.to_string(),
            ],
            web: ("POST", "/api/plans", Some(bad_create.clone())),
            mcp: ("create_study_plan", bad_create.clone()),
            code: "invalid_input",
        },
    ];
    let mcp = mcp_calls(
        w.home.path(),
        &[("STUDYLOOP_PLANS_DIR", &w.plans)],
        &cases
            .iter()
            .map(|c| (c.mcp.0, c.mcp.1.clone()))
            .collect::<Vec<_>>(),
    );
    let web: Vec<Value> = rt().block_on(async {
        let base = server_at(w.home.path(), Some(&w.plans)).await;
        let mut out = Vec::new();
        for Case {
            web: (method, path, body),
            ..
        } in &cases
        {
            let r = testkit::request(&base, method, path, body.as_ref()).await;
            assert!(r.status >= 400, "{method} {path}: {} {}", r.status, r.body);
            out.push(r.envelope()["error"].clone());
        }
        out
    });
    for (
        i,
        Case {
            what, cli, code, ..
        },
    ) in cases.iter().enumerate()
    {
        let args: Vec<&str> = cli.iter().map(String::as_str).collect();
        let (exit, out) = w.cli(&args);
        assert_ne!(exit, 0, "{what}: {out}");
        let cli = out["error"].clone();
        assert_eq!(cli["code"], *code, "{what}: {cli}");
        assert_eq!(web[i], cli, "{what}: the web's error is the CLI's");
        assert_eq!(mcp_error(&mcp[i]), cli, "{what}: MCP's error is the CLI's");
    }
    // The stale one names the revision the plan is at, so a client can re-read and redo.
    assert_eq!(
        web[1]["details"]["current_revision"],
        made["result"]["revision"]
    );
}
