//! What an ACP session reports to its owner (the web socket relay): agent
//! messages mapped from `session/update`, transport errors and the final stop,
//! queued in a buffer bounded in events and bytes that drops the oldest event
//! when full (the relay turns each drop into a visible `gap` frame).
//!
//! The serialised form of [`AcpEvent`] is exactly the server→client WS frame
//! (`agent_message`, `transport_error`, `stopped`), so the relay forwards it
//! as is. Nothing here talks to the agent process.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::web::queue::{Final, Queue};

/// How many undelivered events are held before the oldest is dropped (a
/// 1000-chunk burst fits whole).
pub const EVENT_QUEUE_CAPACITY: usize = 4096;
/// How many bytes of undelivered events are held before the oldest is dropped.
pub const EVENT_QUEUE_BYTES: usize = 16 * 1024 * 1024;

/// One event from an ACP session, serialised as its WS frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AcpEvent {
    /// A relayed agent message (`agent_chunk`, `tool_call`, `turn_end`,
    /// `request_permission`, …) with its payload.
    AgentMessage {
        /// The mapped update kind.
        kind: String,
        /// The update without its `sessionUpdate` tag, plus `sessionId`.
        payload: Value,
    },
    /// Something went wrong talking to the agent; the text says what.
    TransportError {
        /// Human-readable cause, with the stderr tail when it helps.
        message: String,
    },
    /// The session is over; no more events follow.
    Stopped {
        /// The agent's exit status, `None` when it was killed by a signal.
        returncode: Option<i32>,
        /// `exit` (the agent ended), `cancel` (we stopped it) or `error`.
        reason: String,
    },
}

impl AcpEvent {
    /// An `agent_message` event.
    #[must_use]
    pub fn message(kind: &str, payload: Value) -> Self {
        Self::AgentMessage {
            kind: kind.to_owned(),
            payload,
        }
    }
}

/// Maps one `session/update` notification's params to an event, or `None` for
/// updates the console never shows (`available_commands_update`).
#[must_use]
pub fn map_session_update(params: &Value) -> Option<AcpEvent> {
    let update = params.get("update")?.as_object()?;
    let tag = update
        .get("sessionUpdate")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let kind = match tag {
        "agent_message_chunk" => "agent_chunk",
        "agent_thought_chunk" => "agent_thought",
        "available_commands_update" => return None,
        // tool_call, tool_call_update, turn_end, plan and anything newer pass through.
        other => other,
    };
    let mut payload: Map<String, Value> = update
        .iter()
        .filter(|(k, _)| k.as_str() != "sessionUpdate")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(sid) = params.get("sessionId") {
        payload.insert("sessionId".into(), sid.clone());
    }
    Some(AcpEvent::message(kind, Value::Object(payload)))
}

impl Final for AcpEvent {
    fn is_final(&self) -> bool {
        matches!(self, Self::Stopped { .. })
    }

    fn bytes(&self) -> usize {
        match self {
            Self::AgentMessage { kind, payload } => {
                // The serialised size: what the relay will hold as a frame.
                kind.len() + serde_json::to_vec(payload).map_or(0, |v| v.len())
            }
            Self::TransportError { message } => message.len(),
            Self::Stopped { reason, .. } => reason.len(),
        }
    }
}

/// The ACP session's event queue (oldest dropped beyond [`EVENT_QUEUE_CAPACITY`]).
pub type EventQueue = Queue<AcpEvent>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_kinds_and_keeps_session_id() {
        let params = json!({"sessionId": "s1", "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}});
        let event = map_session_update(&params).expect("shown");
        let frame = serde_json::to_value(&event).expect("serialise");
        assert_eq!(
            frame,
            json!({"type": "agent_message", "kind": "agent_chunk",
                   "payload": {"sessionId": "s1", "content": {"type": "text", "text": "hi"}}})
        );
        let thought = json!({"update": {"sessionUpdate": "agent_thought_chunk"}});
        assert!(matches!(map_session_update(&thought),
            Some(AcpEvent::AgentMessage { kind, .. }) if kind == "agent_thought"));
        let newer = json!({"update": {"sessionUpdate": "usage_update", "used": 3}});
        assert!(matches!(map_session_update(&newer),
            Some(AcpEvent::AgentMessage { kind, .. }) if kind == "usage_update"));
        let cmds = json!({"update": {"sessionUpdate": "available_commands_update"}});
        assert_eq!(map_session_update(&cmds), None);
    }

    #[test]
    fn queue_drops_oldest_and_closes_on_stop() {
        let q = EventQueue::new(EVENT_QUEUE_CAPACITY);
        for i in 0..=EVENT_QUEUE_CAPACITY {
            q.push(AcpEvent::message("n", json!(i)));
        }
        assert_eq!(q.dropped(), 1);
        assert_eq!(q.try_recv(), Some(AcpEvent::message("n", json!(1))));
        q.push(AcpEvent::Stopped {
            returncode: Some(0),
            reason: "exit".into(),
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let drained = rt.block_on(async {
            let mut n = 0;
            while q.recv().await.is_some() {
                n += 1;
            }
            n
        });
        assert_eq!(drained, EVENT_QUEUE_CAPACITY);
    }
}
