//! The agent→client requests of an ACP session: `session/request_permission`
//! (relayed to the console, answered later, at most [`MAX_PENDING_PERMISSIONS`]
//! waiting; all answered `cancelled` by [`cancel_pending`] when the session
//! ends) and `fs/read_text_file` / `fs/write_text_file` (answered at once
//! through [`SessionFs`], reads refused while [`transport::MAX_BACKLOG_BYTES`] of
//! earlier answers are unread; a request naming a session other than the one
//! `session/new` created, or arriving before it did, gets -32602). Anything
//! else gets -32601. Split from `client`,
//! which owns the connection; like it, this file names the protocol crate.

use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Error as RpcError, Responder, UntypedMessage};
use serde_json::Value;

use super::client::PermissionResponders;
use super::events::{AcpEvent, EventQueue};
use super::fs::SessionFs;
use super::transport;

/// What answering an agent→client request needs.
#[derive(Clone, Copy)]
pub(super) struct Answering<'a> {
    pub(super) fs: Option<&'a SessionFs>,
    pub(super) responders: &'a PermissionResponders,
    pub(super) events: &'a EventQueue,
    pub(super) backlog: &'a transport::Backlog,
    /// The ACP session id, known once `session/new` has answered.
    pub(super) session: &'a transport::SessionWatch,
}

/// Permission requests that may wait for the learner at once.
const MAX_PENDING_PERMISSIONS: usize = 64;

/// Answers one agent→client request: permission (relayed, answered later),
/// fs (answered now, confined to the session dir), anything else -32601.
pub(super) fn answer(
    msg: UntypedMessage,
    responder: Responder<Value, agent_client_protocol::V1>,
    to: &Answering<'_>,
) -> Result<(), RpcError> {
    let Answering {
        fs,
        responders,
        events,
        backlog,
        session,
    } = *to;
    let (method, params) = msg.into_parts();
    match method.as_str() {
        "session/request_permission" => {
            let request_id = responder.raw_id().to_string();
            let mut payload = params;
            if let Some(obj) = payload.as_object_mut() {
                obj.insert("_request_id".into(), Value::String(request_id.clone()));
            }
            {
                let mut pending = responders
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if pending.len() >= MAX_PENDING_PERMISSIONS {
                    drop(pending);
                    return responder.respond_with_error(RpcError::new(
                        -32000,
                        format!(
                            "{MAX_PENDING_PERMISSIONS} permission requests are already waiting for the learner; wait for an answer first"
                        ),
                    ));
                }
                pending.insert(request_id, responder);
            }
            events.push(AcpEvent::message("request_permission", payload));
            Ok(())
        }
        "fs/read_text_file" | "fs/write_text_file" => {
            let Some(fs) = fs else {
                return responder
                    .respond_with_error(RpcError::new(-32603, "session dir unavailable"));
            };
            let result = if method == "fs/read_text_file" {
                serde_json::from_value::<ReadTextFileRequest>(params)
                    .map_err(|e| RpcError::new(-32602, e.to_string()))
                    .and_then(|r| ours(&method, &r.session_id.0, session).map(|()| r))
                    .and_then(|r| {
                        let waiting = backlog.bytes();
                        if waiting > transport::MAX_BACKLOG_BYTES {
                            return Err(RpcError::new(
                                -32000,
                                format!(
                                    "{waiting} bytes of earlier answers are still waiting for the agent to read them; read them first"
                                ),
                            ));
                        }
                        fs.read(&r.path, r.line, r.limit)
                            .inspect(|content| backlog.add(content.len()))
                            .map(|content| to_json(&ReadTextFileResponse::new(content)))
                            .map_err(|e| RpcError::new(e.code(), e.to_string()))
                    })
            } else {
                serde_json::from_value::<WriteTextFileRequest>(params)
                    .map_err(|e| RpcError::new(-32602, e.to_string()))
                    .and_then(|r| ours(&method, &r.session_id.0, session).map(|()| r))
                    .and_then(|r| {
                        fs.write(&r.path, &r.content)
                            .map(|()| to_json(&WriteTextFileResponse::new()))
                            .map_err(|e| RpcError::new(e.code(), e.to_string()))
                    })
            };
            match result {
                Ok(value) => responder.respond(value),
                Err(e) => responder.respond_with_error(e),
            }
        }
        other => responder.respond_with_error(RpcError::new(
            -32601,
            format!("studyloop does not offer {other}"),
        )),
    }
}

/// Answers every permission request still waiting `cancelled` (the spec asks
/// it of a client that cancels) and tells the console which ones it withdrew
/// and `why`, so their buttons go dead with a reason.
pub(super) fn cancel_pending(responders: &PermissionResponders, events: &EventQueue, why: &str) {
    let pending: Vec<_> = responders
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .drain()
        .collect();
    for (request_id, responder) in pending {
        let _ = responder.respond(serde_json::json!({"outcome": {"outcome": "cancelled"}}));
        events.push(AcpEvent::message(
            "permission_cancelled",
            serde_json::json!({"_request_id": request_id, "why": why}),
        ));
    }
}

/// Whether a request for `asked` may be served: only the session this
/// connection's `session/new` created, and nothing before it answered.
fn ours(method: &str, asked: &str, session: &transport::SessionWatch) -> Result<(), RpcError> {
    match session.session_id() {
        Some(known) if known == asked => Ok(()),
        Some(known) => Err(RpcError::new(
            -32602,
            format!(
                "{method} names sessionId `{asked}`, but this client serves only its own session `{known}`; send the sessionId session/new returned"
            ),
        )),
        None => Err(RpcError::new(
            -32602,
            format!(
                "{method} for sessionId `{asked}` arrived before session/new answered; no session exists yet, so send file requests only after it"
            ),
        )),
    }
}

fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
