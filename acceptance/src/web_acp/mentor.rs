//! [`AcpMentor`]: the product's web console, driven over its session
//! WebSocket, as the `Mentor` a learner actor talks to. One learner message is
//! one `input` frame; the reply is the concatenated `agent_chunk` text up to
//! the turn's `turn_end`.
//!
//! Like the browser console, it sends the persona as the first prompt (its
//! reply is kept for evidence, not shown to the actor) and answers permission
//! requests itself, preferring `allow_once`, then `allow_always`, then the
//! first option; every answer is recorded.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use studyloop_actors::{Mentor, MentorError, MentorReply};

use super::socket::{Frame, Logged, SessionSocket, SocketError};

/// What one turn produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TurnRecord {
    /// What was sent.
    pub prompt: String,
    /// The reply text.
    pub reply: String,
    /// The `turn_end` reason.
    pub(crate) stop_reason: Option<String>,
    /// Permission answers given during the turn (request id → option id).
    pub permissions: Vec<(String, String)>,
    /// Transport errors seen.
    pub errors: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}

/// The web console as a mentor.
#[derive(Debug)]
pub struct AcpMentor {
    socket: SessionSocket,
    turn_timeout: Duration,
    /// Every turn, the persona turn first.
    pub turns: Vec<TurnRecord>,
    /// The agent named in `started`.
    pub agent: Option<String>,
}

impl AcpMentor {
    /// Opens the session socket and waits for `started`.
    ///
    /// # Errors
    /// [`SocketError`] when the socket cannot open or no `started` arrives.
    pub fn attach(addr: &str, ws_url: &str, turn_timeout: Duration) -> Result<Self, SocketError> {
        let mut socket = SessionSocket::open(addr, ws_url, Some(&format!("http://{addr}")))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let agent = match socket.next(deadline)? {
            Some(Frame::Json(f)) if f["type"] == "started" => {
                f["agent"].as_str().map(str::to_owned)
            }
            other => {
                return Err(SocketError::Io(format!(
                    "expected a `started` frame, got {other:?}"
                )));
            }
        };
        Ok(Self {
            socket,
            turn_timeout,
            turns: Vec::new(),
            agent,
        })
    }

    /// Sends the persona as the first prompt; returns the agent's reply to it.
    ///
    /// # Errors
    /// [`MentorError`] as for a learner turn.
    pub fn deliver_persona(&mut self, persona: &str) -> Result<String, MentorError> {
        self.turn(persona)
    }

    fn turn(&mut self, text: &str) -> Result<String, MentorError> {
        let started = Instant::now();
        let mut record = TurnRecord {
            prompt: text.to_owned(),
            reply: String::new(),
            stop_reason: None,
            permissions: Vec::new(),
            errors: Vec::new(),
            elapsed_ms: 0,
        };
        let result = self.run_turn(text, &mut record);
        record.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.turns.push(record);
        result
    }

    fn run_turn(&mut self, text: &str, record: &mut TurnRecord) -> Result<String, MentorError> {
        let failed = |e: SocketError| MentorError::Failed(e.to_string());
        self.socket
            .send(&json!({"type": "input", "data": text}))
            .map_err(failed)?;
        let deadline = Instant::now() + self.turn_timeout;
        loop {
            let frame = match self.socket.next(deadline).map_err(failed)? {
                None => {
                    return Err(MentorError::TurnTimeout {
                        waited: self.turn_timeout,
                        detail: format!("partial reply {:?}", record.reply),
                    });
                }
                Some(Frame::Bytes(_)) => continue,
                Some(Frame::Json(f)) => f,
            };
            match (frame["type"].as_str(), frame["kind"].as_str()) {
                (Some("agent_message"), Some("agent_chunk")) => {
                    if let Some(t) = frame["payload"]["content"]["text"].as_str() {
                        record.reply.push_str(t);
                    }
                }
                (Some("agent_message"), Some("request_permission")) => {
                    let answer = self.answer_permission(&frame["payload"]).map_err(failed)?;
                    record.permissions.push(answer);
                }
                (Some("agent_message"), Some("turn_end")) => {
                    let reason = frame["payload"]["reason"].as_str().map(str::to_owned);
                    record.stop_reason.clone_from(&reason);
                    if reason.as_deref() == Some("error") {
                        return Err(MentorError::Failed(format!(
                            "the turn ended in error: {}",
                            record.errors.join("; ")
                        )));
                    }
                    return Ok(record.reply.clone());
                }
                (Some("transport_error"), _) => {
                    record
                        .errors
                        .push(frame["message"].as_str().unwrap_or_default().to_owned());
                }
                (Some("stopped"), _) => {
                    return Err(MentorError::Failed(format!(
                        "the session stopped mid-turn (reason {}, returncode {}): {}",
                        frame["reason"],
                        frame["returncode"],
                        record.errors.join("; ")
                    )));
                }
                (Some("attach_superseded"), _) => {
                    return Err(MentorError::Failed(
                        "another socket took over the session".into(),
                    ));
                }
                _ => {}
            }
        }
    }

    fn answer_permission(&mut self, payload: &Value) -> Result<(String, String), SocketError> {
        let request_id = payload["_request_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let options = payload["options"].as_array().cloned().unwrap_or_default();
        let pick = ["allow_once", "allow_always"]
            .iter()
            .find_map(|kind| options.iter().find(|o| o["kind"] == *kind))
            .or_else(|| options.first())
            .and_then(|o| o["optionId"].as_str())
            .map(str::to_owned);
        let outcome = match &pick {
            Some(id) => json!({"outcome": "selected", "optionId": id}),
            None => json!({"outcome": "cancelled"}),
        };
        self.socket.send(
            &json!({"type": "permission_response", "requestId": request_id, "outcome": outcome}),
        )?;
        Ok((request_id, pick.unwrap_or_else(|| "cancelled".into())))
    }

    /// Sends `stop`, waits briefly for `stopped`, closes; returns the per-turn
    /// records, the frame log and the `stopped` frame when one arrived.
    pub fn stop(mut self) -> Stopped {
        let mut stopped = None;
        if self.socket.send(&json!({"type": "stop"})).is_ok() {
            let deadline = Instant::now() + Duration::from_secs(15);
            while let Ok(Some(frame)) = self.socket.next(deadline) {
                if let Frame::Json(f) = frame
                    && f["type"] == "stopped"
                {
                    stopped = Some(f);
                    break;
                }
            }
        }
        Stopped {
            log: self.socket.close(),
            turns: std::mem::take(&mut self.turns),
            stopped,
        }
    }
}

/// What a stopped [`AcpMentor`] leaves for the evidence bundle.
#[derive(Debug)]
pub struct Stopped {
    /// Every turn, the persona turn first.
    pub turns: Vec<TurnRecord>,
    /// Every frame sent and received.
    pub log: Vec<Logged>,
    /// The `stopped` frame, when one arrived.
    pub stopped: Option<Value>,
}

impl Stopped {
    /// The turns as pretty JSON (the bundle's turn file).
    ///
    /// # Errors
    /// A serialisation failure (never an empty file in its place).
    pub(crate) fn turns_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec_pretty(&self.turns)
    }

    /// The frame log as JSON lines (the bundle's `ws-frames.jsonl`).
    ///
    /// # Errors
    /// A serialisation failure (never an empty line in its place).
    pub fn frames_jsonl(&self) -> Result<String, serde_json::Error> {
        self.log
            .iter()
            .map(|f| serde_json::to_string(f).map(|line| line + "\n"))
            .collect()
    }
}

impl Mentor for AcpMentor {
    fn send(&mut self, learner_message: &str) -> Result<MentorReply, MentorError> {
        self.turn(learner_message).map(MentorReply::new)
    }
}
