//! `WS /api/session/ws?study_session_id=<id>`: attaches a browser (or the
//! acceptance lane) to the live session and relays in both directions.
//!
//! The `guard` has already checked `Host` and `Origin` (as for every route).
//! Refused before the upgrade (HTTP 403) when no session is live or the id does
//! not match. After the upgrade: `started` first; PTY output as binary frames;
//! ACP events as JSON frames; a `gap` frame wherever the session's bounded
//! queue dropped output nobody read in time; client frames dispatched to the
//! transport; `stop` ends the session; a newer socket supersedes this one; a
//! plain disconnect starts the grace period. Client messages are capped at
//! [`WS_MAX_MESSAGE_BYTES`] (a bigger one closes the socket).

use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::acp::AcpEvent;
use super::app_state::AppState;
use super::frames::{ClientFrame, ServerFrame};
use super::pty::PtyEvent;
use super::slot::{Live, Transport};
use crate::envelope::{ApiError, Code};

/// The largest client message (one prompt or a burst of keystrokes).
pub const WS_MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// The query string.
#[derive(Debug, Deserialize)]
pub struct WsQuery {
    /// The session to attach to.
    pub study_session_id: Option<String>,
}

/// The upgrade handler.
pub async fn handler(
    State(state): State<Arc<AppState>>,
    Query(query): Query<WsQuery>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Some(live) = state.slot.current() else {
        return refuse("no active web session; start one with POST /api/session/start");
    };
    if query.study_session_id.as_deref() != Some(live.info.study_session_id.as_str()) {
        return refuse("study_session_id does not match the active session");
    }
    upgrade
        .max_message_size(WS_MAX_MESSAGE_BYTES)
        .max_frame_size(WS_MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| relay(socket, live, state))
        .into_response()
}

fn refuse(message: &str) -> Response {
    ApiError::new(StatusCode::FORBIDDEN, Code::Forbidden, message).into_response()
}

enum Outbound {
    Text(String),
    Binary(Vec<u8>),
    Final(String),
}

async fn relay(mut socket: WebSocket, live: Arc<Live>, state: Arc<AppState>) {
    let (generation, mut newer) = live.attach();
    let started = ServerFrame::Started {
        agent: live.info.agent.clone(),
    };
    if socket
        .send(Message::Text(started.to_text().into()))
        .await
        .is_err()
    {
        live.detach(generation);
        return;
    }
    let mut pending: Option<Outbound> = None;
    loop {
        tokio::select! {
            biased;
            _ = newer.changed() => {
                let f = ServerFrame::AttachSuperseded {
                    study_session_id: live.info.study_session_id.clone(),
                };
                let _ = socket.send(Message::Text(f.to_text().into())).await;
                let _ = socket.send(Message::Close(None)).await;
                return;
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if let Some(reply) = dispatch(&live, &state, &text).await {
                        let _ = socket.send(Message::Text(reply.into())).await;
                    }
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => {
                    live.detach(generation);
                    return;
                }
                Some(Ok(_)) => {}
            },
            out = next_outbound(&live) => match out {
                Some((gap, out)) if gap > 0 => {
                    let f = ServerFrame::gap(gap);
                    let _ = socket.send(Message::Text(f.to_text().into())).await;
                    pending = Some(out);
                }
                Some((_, out)) => pending = Some(out),
                None => {
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            },
        }
        if let Some(out) = pending.take() {
            match out {
                Outbound::Text(t) => {
                    let _ = socket.send(Message::Text(t.into())).await;
                }
                Outbound::Binary(b) => {
                    let _ = socket.send(Message::Binary(b.into())).await;
                }
                Outbound::Final(t) => {
                    let _ = socket.send(Message::Text(t.into())).await;
                    let reason = if live_was_stopped(&state, &live) {
                        "ended"
                    } else {
                        "exit"
                    };
                    state
                        .slot
                        .end(Some(&live.info.study_session_id), reason, true)
                        .await;
                    let _ = socket.send(Message::Close(None)).await;
                    return;
                }
            }
        }
    }
}

/// Whether the session was already taken out of the slot (ended by request).
fn live_was_stopped(state: &AppState, live: &Live) -> bool {
    state
        .slot
        .current()
        .is_none_or(|l| l.info.study_session_id != live.info.study_session_id)
}

/// The next frame, with how many items the queue dropped just before it.
async fn next_outbound(live: &Live) -> Option<(u64, Outbound)> {
    match &live.transport {
        Transport::Pty(p) => {
            let (gap, event) = p.events().recv_with_gap().await?;
            Some((
                gap,
                match event {
                    PtyEvent::Output(bytes) => Outbound::Binary(bytes),
                    PtyEvent::Stopped { returncode, reason } => Outbound::Final(
                        ServerFrame::Stopped {
                            returncode,
                            reason: reason.to_owned(),
                        }
                        .to_text(),
                    ),
                },
            ))
        }
        Transport::Acp(a) => {
            let (gap, event) = a.events().recv_with_gap().await?;
            // An event that cannot be encoded reaches the console as a named
            // transport error, never as an empty frame.
            let text = serde_json::to_string(&event).unwrap_or_else(|err| {
                ServerFrame::TransportError {
                    message: format!(
                        "an ACP event could not be encoded as JSON and was dropped: {err}"
                    ),
                }
                .to_text()
            });
            Some((
                gap,
                if matches!(event, AcpEvent::Stopped { .. }) {
                    Outbound::Final(text)
                } else {
                    Outbound::Text(text)
                },
            ))
        }
    }
}

/// Applies one client frame; returns an error frame to send back, if any.
async fn dispatch(live: &Live, state: &AppState, text: &str) -> Option<String> {
    let error = |message: String| Some(ServerFrame::TransportError { message }.to_text());
    let frame = match ClientFrame::parse(text) {
        Ok(frame) => frame,
        Err(e) => return error(e.to_string()),
    };
    match (frame, &live.transport) {
        (ClientFrame::Stop, _) => {
            // The transport's own `stopped` event then reaches this socket.
            state
                .slot
                .end(Some(&live.info.study_session_id), "ended", true)
                .await;
            None
        }
        (ClientFrame::Input { data }, Transport::Pty(p)) => p
            .write(data.as_bytes())
            .err()
            .and_then(|e| error(e.to_string())),
        (ClientFrame::Input { data }, Transport::Acp(a)) => {
            a.prompt(&data).err().and_then(|e| error(e.to_string()))
        }
        (ClientFrame::Resize { cols, rows }, Transport::Pty(p)) => {
            p.resize(cols, rows);
            None
        }
        (ClientFrame::Resize { .. }, Transport::Acp(_)) => None,
        (
            ClientFrame::PermissionResponse {
                request_id,
                outcome,
            },
            Transport::Acp(a),
        ) => a
            .respond_permission(&request_id, outcome)
            .err()
            .and_then(|e| error(e.to_string())),
        (ClientFrame::PermissionResponse { .. }, Transport::Pty(_)) => {
            error("permission_response applies to ACP sessions only".into())
        }
    }
}
