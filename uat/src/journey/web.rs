//! The lifecycle steps both journeys share, on the web ACP driver of the acceptance
//! crate: the product's `studyloop web` in the case's scratch world (in its server
//! slot), an ACP session started over HTTP, the session socket as the learner's mentor
//! (in the case's ACP slot), and the end (a `stop` frame, then the state must say
//! `ended` and the agent must be gone). The shutdown is the case engine's finish step.
//!
//! What it is not: the conversation or the checks particular to a cell.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use studyloop_acceptance::case::{Case, StepFailure};
use studyloop_acceptance::procfs;
use studyloop_acceptance::web_acp::{AcpMentor, WebServer};

/// One API call (not the start, which includes the agent's handshake).
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the agent process gets to exit after the session ended.
const AGENT_EXIT_TIMEOUT: Duration = Duration::from_secs(15);

/// Wraps any displayable error as an errored step.
pub fn errored(e: impl std::fmt::Display) -> StepFailure {
    StepFailure::from_error(e)
}

/// The case's product server.
///
/// # Errors
/// None was started.
pub fn server<'c>(c: &'c Case<'_>) -> Result<&'c WebServer, StepFailure> {
    c.slots
        .server
        .as_ref()
        .ok_or_else(|| errored("no product server"))
}

/// Starts `studyloop web --port 0` in the case's scratch world with exactly its env,
/// into the server slot.
///
/// # Errors
/// The server did not print its URL, or the binary is not built.
pub fn start_server(c: &mut Case<'_>) -> Result<(), StepFailure> {
    let server = WebServer::start_in(c.scratch()?, &c.env).map_err(errored)?;
    c.record
        .detail(json!({"addr": server.addr, "binary": server.binary.display().to_string()}));
    c.slots.put_server(server);
    Ok(())
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
    c: &mut Case<'_>,
    topic: &str,
    agent: &str,
    timeout: Duration,
) -> Result<Started, StepFailure> {
    let mut text = String::new();
    let start = server(c)?.start_acp_session(topic, agent, 6, timeout, |t| text = t.to_owned());
    c.record.attach("product/session-start.json", text);
    let start = start.map_err(errored)?;
    let state = server(c)?.session_state(HTTP_TIMEOUT).map_err(errored)?;
    let agent_pid = state.body["child_pid"]
        .as_i64()
        .and_then(|p| i32::try_from(p).ok());
    c.record.detail(json!({
        "status": 201,
        "study_session_id": start.id,
        "transport": start.body["transport"],
        "agent": start.body["agent"],
        "persona_hash": start.persona_hash,
        "state_mode": state.body["mode"],
        "agent_pid_reported": agent_pid.is_some(),
    }));
    if state.body["study_session_id"] != start.id.as_str() {
        return Err(errored(format!(
            "GET /api/session/state does not show session {}: {}",
            start.id, state.text
        )));
    }
    Ok(Started {
        id: start.id,
        ws_url: start.ws_url,
        persona: start.persona,
        persona_hash: start.persona_hash,
        agent_pid,
    })
}

/// Attaches the session socket into the case's ACP slot and sends the persona first;
/// returns its reply.
///
/// # Errors
/// The socket did not open or the persona turn failed.
pub fn attach_and_send_persona(
    c: &mut Case<'_>,
    started: &Started,
    turn_timeout: Duration,
) -> Result<String, StepFailure> {
    let addr = server(c)?.addr.clone();
    let mentor = AcpMentor::attach(&addr, &started.ws_url, turn_timeout).map_err(errored)?;
    let mentor = c.slots.put_acp(mentor);
    mentor.deliver_persona(&started.persona).map_err(errored)
}

/// Ends the session from the socket (`stop`), keeps the frame log and per-turn records,
/// then checks the `stopped` frame, the state (`mode: ended`) and that the agent exited.
///
/// # Errors
/// Whichever of those checks failed first.
pub fn end_session(c: &mut Case<'_>, started: &Started) -> Result<Value, StepFailure> {
    let stopped = c.stop_acp()?;
    let state = server(c)?.session_state(HTTP_TIMEOUT).map_err(errored)?;
    c.record
        .attach_json("product/session-state.json", &state.body)?;
    let agent_gone = started.agent_pid.map(wait_gone);
    c.record.detail(json!({
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
