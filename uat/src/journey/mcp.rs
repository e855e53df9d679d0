//! `journey::mcp_lifecycle` (ungraded): the real `studyloop-mcp` over stdio in the
//! cell's scratch world, beside the real `studyloop web` sharing its store. The nine
//! plan tools are listed first in the reference order; a plan is created (draft),
//! activated, evaluated with `record=true` (both sinks saved), its milestone 0 set done,
//! its history shows the checkpoint; then the same plan is read back over
//! `GET /api/plans/{id}` and its document carries the checked milestone line. Every
//! JSON-RPC frame both ways goes to the bundle (`mcp/frames.jsonl`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::case::{Case, Checks, Destination, Finished, StepFailure, Steps};
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::selection::HarnessName;
use studyloop_actors::ActorKind;

use super::now::{api, world_and_server};
use super::web::errored;

/// The label every artefact of this cell carries.
pub const LABEL: &str = "plan door check: grades nothing (the MCP server driven by this test as its client; no agent, no model)";
/// The nine plan tools, in the reference order (the contract; other tools follow them).
pub const PLAN_TOOLS: [&str; 9] = [
    "list_study_plans",
    "get_study_plan",
    "get_planning_interview",
    "create_study_plan",
    "update_study_plan",
    "set_study_plan_status",
    "set_study_plan_milestone",
    "evaluate_study_plan",
    "delete_study_plan",
];
const PLAN_ID: &str = "uat-sql-windows";
const FIRST: &str = "OVER clause";
/// The document line a done milestone 0 must have.
const CHECKED: &str = "- [x] **OVER clause**";
const REPLY_TIMEOUT: Duration = Duration::from_secs(20);
const NOMINAL: HarnessName = HarnessName::Pi;

/// Runs the cell as a case into `dest`.
pub fn run(ctx: &TrialContext, dest: &dyn Destination) -> Finished {
    let mut case = Case::new(ctx, NOMINAL, Surface::Journey);
    case.actor = ActorKind::Scripted;
    let facts = &mut case.record.facts;
    facts.harness = Some("studyloop-mcp (the product's MCP server)".into());
    facts.auth_mode = None;
    facts.actor_backend = None;
    case.record.notes.push(LABEL.to_owned());
    case.run(dest, drive)
}

/// `studyloop-mcp` on stdio, its frames logged both ways.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: i64,
    frames: Vec<Value>,
}

impl Mcp {
    fn spawn(c: &Case<'_>) -> Result<Self, StepFailure> {
        let bin = bins::path("studyloop-mcp").map_err(errored)?;
        let scratch = c.scratch()?;
        let mut cmd = scratch.command(&bin);
        c.env
            .apply(&mut cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = scratch.spawn(&mut cmd).map_err(errored)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(errored("studyloop-mcp started without pipes"));
        };
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            lines,
            next_id: 0,
            frames: Vec::new(),
        })
    }

    fn send(&mut self, v: Value) -> Result<(), StepFailure> {
        writeln!(self.stdin, "{v}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| errored(format!("writing to studyloop-mcp: {e}")))?;
        self.frames.push(json!({"dir": "out", "frame": v}));
        Ok(())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, StepFailure> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).map_err(|_| {
                errored(format!(
                    "studyloop-mcp sent no reply to {method} within {REPLY_TIMEOUT:?}"
                ))
            })?;
            let v: Value = serde_json::from_str(&line).map_err(|e| {
                errored(format!("studyloop-mcp wrote a non-JSON line ({e}): {line}"))
            })?;
            self.frames.push(json!({"dir": "in", "frame": v}));
            if v["id"] == json!(id) {
                return Ok(v);
            }
        }
    }

    /// `tools/call`: the success envelope's `result` (its text is the envelope as
    /// JSON, docs/using-studyloop.md "The JSON envelope"), or the refusal text as a failure.
    fn call(&mut self, name: &str, args: Value) -> Result<Value, StepFailure> {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}))?;
        let res = &r["result"];
        let text = res["content"][0]["text"].as_str().unwrap_or_default();
        if !res.is_object() || res["isError"] == true {
            return Err(errored(format!(
                "tools/call {name} refused: {}",
                if text.is_empty() {
                    r.to_string()
                } else {
                    text.to_owned()
                }
            )));
        }
        let envelope: Value = serde_json::from_str(text).map_err(|e| {
            errored(format!(
                "tools/call {name}: its text is not JSON ({e}): {text}"
            ))
        })?;
        if envelope["schema_version"] != 1 || envelope.get("result").is_none() {
            return Err(errored(format!(
                "tools/call {name}: its text is not the success envelope: {text}"
            )));
        }
        Ok(envelope["result"].clone())
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    world_and_server(c)?;
    let mut mcp = c.step_doing(
        "mcp-start",
        "studyloop-mcp on stdio in the scratch env; initialize",
        |c| {
            let mut m = Mcp::spawn(c)?;
            let init = m.request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "studyloop-uat", "version": env!("CARGO_PKG_VERSION")}}),
            )?;
            m.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
            c.record.detail(json!({"server": init["result"]["serverInfo"]}));
            if init["result"]["capabilities"]["tools"].is_object() {
                Ok(m)
            } else {
                Err(errored(format!("initialize offered no tools: {init}")))
            }
        },
    )?;
    let lifecycle = lifecycle(c, &mut mcp);
    let frames: String = mcp.frames.iter().map(|f| format!("{f}\n")).collect();
    drop(mcp);
    c.record.attach("mcp/frames.jsonl", frames);
    lifecycle?;
    let detail = c.step_doing(
        "web-read-back",
        "GET /api/plans/{id} on the web server",
        |c| {
            let r = api(
                c,
                "plan-detail",
                "GET",
                &format!("/api/plans/{PLAN_ID}"),
                None,
            )?;
            if r.status == 200 {
                Ok(r.result().clone())
            } else {
                Err(errored(format!(
                    "GET /api/plans/{PLAN_ID} answered {}: {}",
                    r.status, r.text
                )))
            }
        },
    )?;
    c.verify(
        "same-plan-over-the-web",
        Checks::new()
            .check("status active, milestone 0 done", |_: &mut Case<'_>| {
                if detail["status"] == "active"
                    && detail["milestone_done"] == 1
                    && detail["milestones"][0]["done"] == true
                {
                    Ok(())
                } else {
                    Err(format!("the web API shows {detail}"))
                }
            })
            .check("the document holds the checked milestone line", |_| {
                let md = detail["markdown"].as_str().unwrap_or_default();
                if md.contains(CHECKED) {
                    Ok(())
                } else {
                    Err(format!("no `{CHECKED}` in the document: {md}"))
                }
            }),
    )
}

fn lifecycle(c: &mut Case<'_>, m: &mut Mcp) -> Result<(), StepFailure> {
    c.step_doing(
        "tools-list",
        "tools/list: the nine plan tools first, in order",
        |c| {
            let r = m.request("tools/list", json!({}))?;
            let names: Vec<&str> = r["result"]["tools"]
                .as_array()
                .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
                .unwrap_or_default();
            c.record.detail(json!({"tools": names}));
            if names.len() >= PLAN_TOOLS.len() && names[..PLAN_TOOLS.len()] == PLAN_TOOLS {
                Ok(())
            } else {
                Err(errored(format!(
                    "tools/list gave {names:?}, expected {PLAN_TOOLS:?} first"
                )))
            }
        },
    )?;
    let answers = json!({"why": "reports at work", "success": ["write a running total"],
        "milestones": [{"title": FIRST, "concepts": ["PARTITION BY"]}, "Frames"]});
    let rev = expect(
        c,
        m,
        "create",
        "create_study_plan",
        json!({"title": "SQL windows", "plan_id": PLAN_ID, "answers": answers, "request_id": "uat-mcp-create"}),
        |v| v["status"] == "draft",
    )?;
    let rev = expect(
        c,
        m,
        "activate",
        "set_study_plan_status",
        json!({"plan_id": PLAN_ID, "status": "active", "if_revision": rev}),
        |v| v["status"] == "active",
    )?;
    let rev = expect(
        c,
        m,
        "evaluate",
        "evaluate_study_plan",
        json!({"plan_id": PLAN_ID, "phase": "start", "record": true, "if_revision": rev}),
        |v| {
            v["db_write"] == "saved"
                && v["document_write"] == "saved"
                && v["recording_complete"] == true
        },
    )?;
    expect(
        c,
        m,
        "milestone",
        "set_study_plan_milestone",
        json!({"plan_id": PLAN_ID, "index": 0, "done": true, "if_revision": rev}),
        |v| v["milestone_done"] == 1,
    )?;
    expect(
        c,
        m,
        "history",
        "get_study_plan",
        json!({"plan_id": PLAN_ID, "include_history": true}),
        |v| v["status"] == "active" && v["checkpoints"].as_array().is_some_and(|a| a.len() == 1),
    )?;
    Ok(())
}

fn expect(
    c: &mut Case<'_>,
    m: &mut Mcp,
    id: &str,
    tool: &str,
    args: Value,
    ok: impl FnOnce(&Value) -> bool,
) -> Result<String, StepFailure> {
    c.step_doing(id, &format!("tools/call {tool} {args}"), |c| {
        let v = m.call(tool, args.clone())?;
        c.record.attach_json(&format!("mcp/{id}.json"), &v)?;
        if ok(&v) {
            // The plan's revision, which the next change sends back (issue 30 item 2).
            Ok(v["revision"].as_str().unwrap_or_default().to_owned())
        } else {
            Err(errored(format!("{tool} answered {v}")))
        }
    })
}
