//! The lifecycle steps both journeys share, on the web ACP driver of the acceptance
//! crate: the product's `studyloop web` in a scratch world, an ACP session started over
//! HTTP, the session socket as the learner's mentor, the end (a `stop` frame, then the
//! state must say `ended` and the agent must be gone), and the shutdown that always runs
//! (server exit code and log, the scratch sweep, no process left behind).
//!
//! What it is not: the conversation or the checks particular to a cell.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use studyloop_acceptance::lane::{LaneFailure, validate};
use studyloop_acceptance::procfs;
use studyloop_acceptance::scratch::{Env, Scratch};
use studyloop_acceptance::web_acp::{AcpMentor, WebServer};

use super::record::Journey;

/// One API call (not the start, which includes the agent's handshake).
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the agent process gets to exit after the session ended.
const AGENT_EXIT_TIMEOUT: Duration = Duration::from_secs(15);
/// SIGTERM grace for the server.
const SERVER_STOP_GRACE: Duration = Duration::from_secs(15);

/// Wraps any displayable error as an errored step.
pub fn errored(e: impl std::fmt::Display) -> LaneFailure {
    LaneFailure::errored(e.to_string())
}

/// Starts `studyloop web --port 0` in `scratch` with exactly `env`.
///
/// # Errors
/// The server did not print its URL, or the binary is not built.
pub fn start_server(
    j: &mut Journey,
    scratch: &Scratch,
    env: &Env,
) -> Result<WebServer, LaneFailure> {
    let server = WebServer::start_in(scratch, env).map_err(errored)?;
    j.detail(json!({"addr": server.addr, "binary": server.binary.display().to_string()}));
    Ok(server)
}

/// What the start answered.
#[derive(Debug, Clone)]
pub struct Started {
    /// The study session id.
    pub id: String,
    /// The session socket path.
    pub ws_url: String,
    /// The persona text to send first.
    pub persona: String,
    /// Its hash.
    pub persona_hash: String,
    /// The agent's pid (from the state), when reported.
    pub agent_pid: Option<i32>,
}

/// `POST /api/session/start` with transport `acp`; the start response goes to the bundle.
///
/// # Errors
/// Any status but 201, or a response missing a field the journey needs.
pub fn start_session(
    j: &mut Journey,
    server: &WebServer,
    topic: &str,
    agent: &str,
    timeout: Duration,
) -> Result<Started, LaneFailure> {
    let mut text = String::new();
    let start = server.start_acp_session(topic, agent, 6, timeout, |t| text = t.to_owned());
    j.attach("product/session-start.json", text);
    let start = start.map_err(errored)?;
    let started = Started {
        id: start.id,
        ws_url: start.ws_url,
        persona: start.persona,
        persona_hash: start.persona_hash,
        agent_pid: None,
    };
    let state = server.session_state(HTTP_TIMEOUT).map_err(errored)?;
    let agent_pid = state.body["child_pid"]
        .as_i64()
        .and_then(|p| i32::try_from(p).ok());
    j.detail(json!({
        "status": 201,
        "study_session_id": started.id,
        "transport": start.body["transport"],
        "agent": start.body["agent"],
        "persona_hash": started.persona_hash,
        "state_mode": state.body["mode"],
        "agent_pid_reported": agent_pid.is_some(),
    }));
    if state.body["study_session_id"] != started.id.as_str() {
        return Err(errored(format!(
            "GET /api/session/state does not show session {}: {}",
            started.id, state.text
        )));
    }
    Ok(Started {
        agent_pid,
        ..started
    })
}

/// Ends the session from the socket (`stop`), keeps the frame log and per-turn records,
/// then checks the `stopped` frame, the state (`mode: ended`) and that the agent exited.
///
/// # Errors
/// Whichever of those checks failed first.
pub fn end_session(
    j: &mut Journey,
    server: &WebServer,
    mentor: AcpMentor,
    started: &Started,
) -> Result<Value, LaneFailure> {
    let done = mentor.stop();
    j.attach("ws-turns.json", done.turns_json());
    j.attach("ws-frames.jsonl", done.frames_jsonl());
    let stopped = done.stopped;
    let state = server.session_state(HTTP_TIMEOUT).map_err(errored)?;
    j.attach(
        "product/session-state.json",
        serde_json::to_vec_pretty(&state.body).unwrap_or_default(),
    );
    let agent_gone = started.agent_pid.map(wait_gone);
    j.detail(json!({
        "stopped_frame": stopped,
        "state_mode": state.body["mode"],
        "state_ended_at": state.body["ended_at"],
        "agent_exited": agent_gone,
    }));
    match &stopped {
        Some(f) if f["reason"] == "cancel" => {}
        other => {
            return Err(errored(format!(
                "expected a `stopped` frame with reason cancel after `stop`, got {other:?}"
            )));
        }
    }
    if state.body["mode"] != "ended" {
        return Err(errored(format!(
            "state mode is {}, expected ended: {}",
            state.body["mode"], state.text
        )));
    }
    match agent_gone {
        Some(false) => Err(errored(format!(
            "the agent (pid {:?}) still runs {AGENT_EXIT_TIMEOUT:?} after the end",
            started.agent_pid
        ))),
        None => Err(errored(
            "the state never reported the agent's pid (child_pid)",
        )),
        Some(true) => Ok(state.body),
    }
}

fn wait_gone(pid: i32) -> bool {
    let until = Instant::now() + AGENT_EXIT_TIMEOUT;
    while procfs::process_alive(pid) {
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}

/// Stops the server (it must exit 0 on SIGTERM), keeps its log, sweeps the scratch
/// world and checks no process mentions it any more. Runs on every outcome; the
/// journey's own failure, if any, wins over a shutdown failure.
pub fn shutdown(
    j: &mut Journey,
    server: Option<WebServer>,
    scratch: Option<Scratch>,
    result: Result<(), LaneFailure>,
) -> Result<(), LaneFailure> {
    let stopped = j.step(
        "shutdown",
        "stop studyloop web (exit 0 on SIGTERM), sweep the scratch world, nothing left running",
        |j| {
            let mut problems = Vec::new();
            let code = server.map(|mut s| {
                let code = s.stop(SERVER_STOP_GRACE);
                j.attach("product/web-server.log", s.output());
                code
            });
            if let Some(code) = code
                && code != Some(0)
            {
                problems.push(format!("studyloop web exited {code:?} on SIGTERM, expected 0"));
            }
            let root = scratch.as_ref().map(|s| s.root().to_owned());
            if let Some(scratch) = scratch
                && let Err(e) = scratch.close()
            {
                problems.push(format!("the scratch sweep refused: {e}"));
            }
            let leftovers = root
                .as_deref()
                .map(validate::leftover_processes)
                .unwrap_or_default();
            if !leftovers.is_empty() {
                problems.push(format!("processes left after the sweep: {}", leftovers.join("; ")));
            }
            let swept = root.as_ref().is_some_and(|r| !r.exists());
            j.detail(json!({"server_exit": code, "scratch_removed": swept, "leftover_processes": leftovers}));
            if problems.is_empty() {
                Ok(())
            } else {
                Err(errored(problems.join("; ")))
            }
        },
    );
    result.and(stopped)
}
