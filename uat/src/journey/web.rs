//! The lifecycle steps both journeys share, on the web ACP driver of the acceptance
//! crate: the product's `studyloop web` in the case's scratch world (in its server
//! slot), an ACP session started over HTTP, the session socket as the learner's mentor
//! (in the case's ACP slot), and the end (a `stop` frame, then the state must say
//! `ended` and the agent must be gone). The shutdown is the case engine's finish step.
//!
//! What it is not: the conversation or the checks particular to a cell.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use studyloop_acceptance::case::{Case, Conversation, StepFailure, Steps, Transport, converse};
use studyloop_acceptance::door::SessionState;
use studyloop_acceptance::procfs;
use studyloop_acceptance::web_acp::AcpMentor;

/// One API call (not the start, which includes the agent's handshake).
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the agent process gets to exit after the session ended.
const AGENT_EXIT_TIMEOUT: Duration = Duration::from_secs(15);

/// Wraps any displayable error as an errored step.
pub fn errored(e: impl std::fmt::Display) -> StepFailure {
    StepFailure::from_error(e)
}

pub use studyloop_acceptance::lane::web_acp::start_server;

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
    let start = c
        .server()?
        .start_acp_session(topic, agent, 6, timeout, |t| text = t.to_owned());
    c.record.attach("product/session-start.json", text);
    let start = start.map_err(errored)?;
    let state = session_state(c)?;
    let agent_pid = state.child_pid();
    c.record.detail(json!({
        "status": 201,
        "study_session_id": start.id,
        "transport": start.body["transport"],
        "agent": start.body["agent"],
        "persona_hash": start.persona_hash,
        "state_mode": state.mode(),
        "agent_pid_reported": agent_pid.is_some(),
    }));
    if state.study_session_id() != Some(start.id.as_str()) {
        return Err(errored(format!(
            "GET /api/session/state does not show session {}: {state}",
            start.id
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

/// How a journey opens its session: the words of its two steps and its limits.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    /// What the `session-start` step does, in words.
    pub start_what: &'a str,
    /// What the `persona` step does, in words.
    pub persona_what: &'a str,
    /// The study topic.
    pub topic: &'a str,
    /// The agent (harness) name.
    pub agent: &'a str,
    /// The start's limit (it includes the agent's ACP handshake).
    pub start_timeout: Duration,
    /// One turn's limit.
    pub turn_timeout: Duration,
}

/// The `server-start`, `session-start` and `persona` steps: `studyloop web` in the
/// case's scratch world, the ACP session started over HTTP, the session socket attached
/// into the case's ACP slot and the persona sent first; `judge` checks the persona's
/// reply (and may record the step's detail).
///
/// # Errors
/// Whichever step failed, named.
pub fn open_session(
    c: &mut Case<'_>,
    o: Opening<'_>,
    judge: impl FnOnce(&mut Case<'_>, &str) -> Result<(), StepFailure>,
) -> Result<Started, StepFailure> {
    c.step_doing(
        "server-start",
        "studyloop web --port 0 in the scratch world",
        start_server,
    )?;
    let started = c.step_doing("session-start", o.start_what, |c| {
        start_session(c, o.topic, o.agent, o.start_timeout)
    })?;
    c.step_doing("persona", o.persona_what, |c| {
        let addr = c.server()?.addr.clone();
        let mentor = AcpMentor::attach(&addr, &started.ws_url, o.turn_timeout).map_err(errored)?;
        let reply = c
            .slots
            .put_acp(mentor)
            .deliver_persona(&started.persona)
            .map_err(errored)?;
        judge(c, &reply)
    })?;
    Ok(started)
}

/// The learner talks over the session socket; the step's detail records the
/// transcript's outcome, turns and error whatever happened.
///
/// # Errors
/// The conversation's failure (`case::converse`).
pub fn talk(c: &mut Case<'_>) -> Result<Conversation, StepFailure> {
    let talk = c.with_acp(|c, m| converse(c, Transport::Socket(m)));
    let t = c.record.transcript.as_ref();
    let detail = json!({
        "outcome": t.map(|t| t.outcome),
        "turns": t.map_or(0, |t| t.turns.len()),
        "error": t.and_then(|t| t.error.clone()),
    });
    c.record.detail(detail);
    talk
}

/// The agent named in the socket's `started` frame.
#[must_use]
pub fn agent(c: &Case<'_>) -> Option<String> {
    c.slots.acp.as_ref().and_then(|m| m.agent.clone())
}

/// Ends the session from the socket (`stop`), keeps the frame log and per-turn records,
/// then checks the `stopped` frame, the state (`mode: ended`) and that the agent exited.
///
/// # Errors
/// Whichever of those checks failed first.
pub fn end_session(c: &mut Case<'_>, started: &Started) -> Result<Value, StepFailure> {
    let stopped = c.stop_acp()?;
    let state = session_state(c)?;
    c.record
        .attach_json("product/session-state.json", state.raw())?;
    let agent_gone = started.agent_pid.map(wait_gone);
    c.record.detail(json!({
        "stopped_frame": stopped,
        "state_mode": state.mode(),
        "state_ended_at": state.ended_at(),
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
    if !state.is_ended() {
        return Err(errored(format!(
            "state mode is {:?}, expected ended: {state}",
            state.mode()
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
        Some(true) => Ok(state.raw().clone()),
    }
}

/// `GET /api/session/state`, through the typed view.
///
/// # Errors
/// No server, or no answer within [`HTTP_TIMEOUT`].
pub fn session_state(c: &Case<'_>) -> Result<SessionState, StepFailure> {
    let state = c.server()?.session_state(HTTP_TIMEOUT).map_err(errored)?;
    Ok(SessionState::from(state.result().clone()))
}

pub(super) fn wait_gone(pid: i32) -> bool {
    let until = Instant::now() + AGENT_EXIT_TIMEOUT;
    while procfs::process_alive(pid) {
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}
