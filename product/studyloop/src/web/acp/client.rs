//! The one place that uses the `agent-client-protocol` crate: it runs the
//! crate's v1 client over the agent's stdio and turns the conversation into
//! [`AcpEvent`]s and simple commands (prompt, permission answer, stop).
//!
//! The crate's typed requests carry our outbound calls; inbound traffic is
//! taken untyped so unknown `session/update` kinds pass through unchanged and
//! permission requests reach the browser exactly as the agent sent them.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, EnvVariable, FileSystemCapabilities,
    Implementation, InitializeRequest, McpServer, McpServerStdio, NewSessionRequest, PromptRequest,
    TextContent,
};
use agent_client_protocol::{Agent, Client, Error as RpcError, Responder, UntypedMessage};

use super::turn_error::{self, rpc_detail};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::events::{AcpEvent, EventQueue, map_session_update};
use super::fs::SessionFs;
use super::process::AgentProcess;
use super::{AcpError, AcpTimeouts, requests, transport};
use crate::mcp_registration::McpServerSpec;

/// What the owner asks of a running session.
#[derive(Debug)]
pub(super) enum Command {
    Prompt(String),
    Permission { request_id: String, outcome: Value },
    Stop,
}

/// What the handshake learned.
#[derive(Debug)]
pub(super) struct Handshake {
    pub agent_name: Option<String>,
    pub session_id: String,
}

pub(super) type PermissionResponders =
    Arc<Mutex<HashMap<String, Responder<Value, agent_client_protocol::V1>>>>;

/// Everything one driver task owns.
pub(super) struct Driver {
    pub process: AgentProcess,
    pub stdin: tokio::process::ChildStdin,
    pub stdout: tokio::process::ChildStdout,
    pub cwd: PathBuf,
    pub mcp_servers: Vec<McpServerSpec>,
    pub turns: Option<super::TurnLog>,
    pub timeouts: AcpTimeouts,
    pub events: Arc<EventQueue>,
    pub commands: mpsc::Receiver<Command>,
    pub ready: oneshot::Sender<Result<Handshake, AcpError>>,
}

/// Drives one agent process from spawn to stop. Reports the handshake on
/// `ready`, then serves `commands` until stop, EOF or a fatal transport error,
/// and always ends by killing the process group and pushing `Stopped`.
pub(super) async fn drive(driver: Driver) {
    let Driver {
        mut process,
        stdin,
        stdout,
        cwd,
        mcp_servers,
        turns,
        timeouts,
        events,
        commands,
        ready,
    } = driver;
    // The session id as the fs answers check it, learnt by the transport.
    let watch = transport::SessionWatch::default();
    let (lines, malformed, backlog) =
        transport::lines(stdin, stdout, events.clone(), watch.clone());
    let fs = SessionFs::new(&cwd).ok();
    let responders: PermissionResponders = Arc::default();
    let stderr = process.stderr.clone();
    let mut ready = Some(ready);
    let step: Arc<Mutex<&'static str>> = Arc::new(Mutex::new("initialize"));
    let step_m = step.clone();
    let outcome = {
        let events_n = events.clone();
        let events_r = events.clone();
        let responders_r = responders.clone();
        let events_m = events.clone();
        let (turns_n, turns_m) = (turns.clone(), turns.clone());
        let ready = &mut ready;
        Client
            .v1()
            .on_receive_notification(
                async move |msg: UntypedMessage, _cx: ConnectionTo<Agent>| {
                    if msg.method() == "session/update" {
                        if let Some(t) = &turns_n {
                            t.update(msg.params());
                        }
                        if let Some(event) = map_session_update(msg.params()) {
                            events_n.push(event);
                        }
                    }
                    // `_kiro.dev/*` and other notifications are not part of the console.
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |msg: UntypedMessage,
                            responder: Responder<Value, agent_client_protocol::V1>,
                            _cx: ConnectionTo<Agent>| {
                    let to = requests::Answering {
                        fs: fs.as_ref(),
                        responders: &responders_r,
                        events: &events_r,
                        backlog: &backlog,
                        session: &watch,
                    };
                    requests::answer(msg, responder, &to)
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(lines, async move |conn: ConnectionTo<Agent>| {
                let handshake = match handshake(&conn, &cwd, &mcp_servers, &timeouts, &step_m).await
                {
                    Ok(h) => h,
                    // Reported after the process is gone, with its exit status.
                    Err(e) => return Ok(Ending::HandshakeFailed(e)),
                };
                let session_id = handshake.session_id.clone();
                if let Some(tx) = ready.take() {
                    let _ = tx.send(Ok(handshake));
                }
                Ok(serve(
                    &conn,
                    &session_id,
                    &timeouts,
                    &events_m,
                    commands,
                    &responders,
                    turns_m.as_ref(),
                )
                .await)
            })
            .await
    };
    let (reason, message, failed) = match outcome {
        Ok(Ending::Cancel) => ("cancel", None, None),
        Ok(Ending::Exit) if malformed.is_set() => ("error", None, None),
        Ok(Ending::Exit) => ("exit", None, None),
        Ok(Ending::HandshakeFailed(e)) => ("error", None, Some(e)),
        Err(e) => ("error", Some(format!("ACP connection failed: {e}")), None),
    };
    // A reply cut short by the stop is still the turn's reply.
    if let Some(t) = &turns {
        t.turn_end();
    }
    let handshake_done = ready.is_none();
    if let Some(tx) = ready.take() {
        // The handshake failed or the connection ended before it could report:
        // say which step was running and how the agent exited.
        let code = process.terminate(timeouts.stop_grace).await;
        let status = code.map_or_else(
            || "killed by a signal".to_owned(),
            |c| format!("status {c}"),
        );
        let step = *step
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let err = match failed {
            Some(AcpError::Handshake { step, detail, .. }) => AcpError::Handshake {
                step,
                detail: format!("{detail} (agent {status})"),
                stderr_tail: stderr.text(),
            },
            Some(other) => other,
            None => AcpError::Handshake {
                step,
                detail: message.clone().map_or_else(
                    || format!("the agent exited ({status}) before answering"),
                    |m| format!("{m} (agent {status})"),
                ),
                stderr_tail: stderr.text(),
            },
        };
        let _ = tx.send(Err(err));
    }
    if let Some(message) = message {
        events.push(AcpEvent::TransportError { message });
    }
    if reason == "cancel" || reason == "exit" {
        // Give an agent that exits on cancel (or on stdin EOF) a moment to do
        // so; one that closed its stdout, a moment to report its status.
        let _ = tokio::time::timeout(timeouts.stop_grace, process.wait()).await;
    }
    let exited = process.try_exit();
    let returncode = process.terminate(timeouts.stop_grace).await;
    if handshake_done && reason == "exit" && exited != Some(Some(0)) {
        let how = match exited {
            Some(Some(code)) => format!("exited with status {code}"),
            Some(None) => "was killed by a signal".to_owned(),
            None => "closed its output and was stopped".to_owned(),
        };
        process.stderr_settled(STDERR_SETTLE).await;
        events.push(AcpEvent::TransportError {
            message: format!(
                "the ACP agent {how} during the session; agent stderr (last {} KB): {}",
                super::STDERR_TAIL_BYTES / 1024,
                stderr.text()
            ),
        });
    }
    events.push(AcpEvent::Stopped {
        returncode,
        reason: reason.to_owned(),
    });
}

enum Ending {
    Cancel,
    Exit,
    HandshakeFailed(AcpError),
}

/// A server spec in ACP's stdio form.
fn stdio_server(spec: &McpServerSpec) -> McpServer {
    let env = spec
        .env
        .iter()
        .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
        .collect();
    McpServer::Stdio(
        McpServerStdio::new(spec.name, spec.command.clone())
            .args(spec.args.clone())
            .env(env),
    )
}

async fn handshake(
    conn: &ConnectionTo<Agent>,
    cwd: &std::path::Path,
    mcp_servers: &[McpServerSpec],
    timeouts: &AcpTimeouts,
    step: &Mutex<&'static str>,
) -> Result<Handshake, AcpError> {
    let caps = ClientCapabilities::new().fs(FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true));
    let init = InitializeRequest::new(agent_client_protocol::schema::ProtocolVersion::V1)
        .client_capabilities(caps)
        .client_info(Implementation::new("studyloop", env!("CARGO_PKG_VERSION")));
    let init = call(
        conn,
        "initialize",
        timeouts.initialize,
        conn.send_request(init).block_task(),
    )
    .await?;
    let agent_name = init.agent_info.as_ref().map(|i| i.name.clone());
    *step
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = "session/new";
    let new = NewSessionRequest::new(cwd.to_path_buf())
        .mcp_servers(mcp_servers.iter().map(stdio_server).collect());
    let new = call(
        conn,
        "session/new",
        timeouts.new_session,
        conn.send_request(new).block_task(),
    )
    .await?;
    Ok(Handshake {
        agent_name,
        session_id: new.session_id.0.to_string(),
    })
}

/// One request with a deadline, failing fast if the agent goes away.
async fn call<T>(
    conn: &ConnectionTo<Agent>,
    step: &'static str,
    timeout: Duration,
    request: impl Future<Output = Result<T, RpcError>>,
) -> Result<T, AcpError> {
    let gone = || AcpError::Handshake {
        step,
        detail: "the agent exited or closed stdout".into(),
        stderr_tail: String::new(),
    };
    let answered = |result: Result<T, RpcError>| {
        result.map_err(|e| {
            if agent_client_protocol::is_incoming_transport_closed(&e)
                || agent_client_protocol::is_connection_terminated(&e)
            {
                gone()
            } else {
                AcpError::Rpc {
                    step,
                    detail: rpc_detail(&e),
                }
            }
        })
    };
    tokio::pin!(request);
    // `biased`: an agent that answers and then exits (a crash right after
    // `initialize`) has its answer routed before its EOF; a fair select would
    // pick the EOF about half the time and blame the wrong step.
    tokio::select! {
        biased;
        result = &mut request => answered(result),
        () = conn.incoming_closed() => {
            // The answer may still be in flight between the connection's reader
            // and this request: give it a moment before calling the agent gone.
            match tokio::time::timeout(ANSWER_AFTER_EOF, &mut request).await {
                Ok(Ok(answer)) => Ok(answer),
                _ => Err(gone()),
            }
        }
        () = tokio::time::sleep(timeout) => Err(AcpError::Timeout { step, after: timeout }),
    }
}

/// Prompts that may wait for the agent's answer at once.
const MAX_PROMPTS_IN_FLIGHT: usize = 4;

/// How long the stderr reader gets to drain a crashed agent's last words.
const STDERR_SETTLE: Duration = Duration::from_millis(500);

/// How long an answer already sent by an agent that then closed its stdout is
/// awaited: it only has to cross from the reader task to the request.
const ANSWER_AFTER_EOF: Duration = Duration::from_millis(200);

async fn serve(
    conn: &ConnectionTo<Agent>,
    session_id: &str,
    timeouts: &AcpTimeouts,
    events: &Arc<EventQueue>,
    mut commands: mpsc::Receiver<Command>,
    responders: &PermissionResponders,
    turns: Option<&super::TurnLog>,
) -> Ending {
    let mut in_flight: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    // Set once the learner ends the session: a prompt that then fails (the
    // agent drops it as it goes) was cancelled, not a failure to send again.
    let stopping = Arc::new(AtomicBool::new(false));
    loop {
        let command = tokio::select! {
            command = commands.recv() => command,
            () = conn.incoming_closed() => {
                settle(&mut in_flight, timeouts.stop_grace).await;
                return Ending::Exit;
            }
        };
        match command {
            Some(Command::Prompt(text)) => {
                let request = PromptRequest::new(
                    session_id.to_owned(),
                    vec![ContentBlock::Text(TextContent::new(text.clone()))],
                );
                in_flight.retain(|h| !h.is_finished());
                if in_flight.len() >= MAX_PROMPTS_IN_FLIGHT {
                    events.push(AcpEvent::TransportError {
                        message: format!(
                            "{MAX_PROMPTS_IN_FLIGHT} prompts are already waiting for the agent; wait for turn_end before sending more"
                        ),
                    });
                    continue;
                }
                if let Some(t) = turns {
                    t.prompt(&text);
                }
                let pending = conn.send_request(request).block_task();
                let (events, timeout) = (events.clone(), timeouts.prompt);
                let turns = turns.cloned();
                let stopping = stopping.clone();
                // Fire and forget: the console stays responsive (cancel, permission).
                in_flight.push(tokio::spawn(async move {
                    let event = match tokio::time::timeout(timeout, pending).await {
                        Ok(Err(_)) if stopping.load(Ordering::SeqCst) => {
                            AcpEvent::message("turn_end", json!({"reason": "cancelled"}))
                        }
                        Ok(Ok(done)) => {
                            let reason = serde_json::to_value(done.stop_reason)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_else(|| "end_turn".into());
                            AcpEvent::message("turn_end", json!({"reason": reason}))
                        }
                        // What the learner reads: the cause in words, then the detail.
                        Ok(Err(e)) => AcpEvent::TransportError {
                            message: turn_error::prompt_failed(&rpc_detail(&e)),
                        },
                        Err(_) => AcpEvent::TransportError {
                            message: turn_error::no_answer(timeout.as_secs()),
                        },
                    };
                    let failed = matches!(event, AcpEvent::TransportError { .. });
                    if let Some(t) = &turns {
                        t.turn_end();
                    }
                    events.push(event);
                    if failed {
                        // The console waits for turn_end to re-enable input.
                        events.push(AcpEvent::message("turn_end", json!({"reason": "error"})));
                    }
                }));
            }
            Some(Command::Permission {
                request_id,
                outcome,
            }) => {
                let responder = responders
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&request_id);
                match responder {
                    Some(r) => {
                        let _ = r.respond(json!({ "outcome": outcome }));
                    }
                    None => events.push(AcpEvent::TransportError {
                        message: format!("no pending permission request {request_id}"),
                    }),
                }
            }
            Some(Command::Stop) | None => {
                stopping.store(true, Ordering::SeqCst);
                // First, so an agent waiting on one sees its answer before the cancel.
                requests::cancel_pending(responders, events, "the session ended");
                let _ = conn.send_notification(CancelNotification::new(session_id.to_owned()));
                // Keep the connection open briefly so a running prompt can finish
                // with its cancelled stop reason (or the agent can exit on cancel).
                settle(&mut in_flight, timeouts.stop_grace).await;
                return Ending::Cancel;
            }
        }
    }
}

/// Waits (at most `grace`) for the in-flight prompt tasks to push their last
/// frame. Not raced against the agent's EOF: an agent that answers and exits
/// at once (on cancel, or after its turn) has its answer routed before the EOF,
/// and its task must push `turn_end` before the teardown pushes `stopped`. A
/// prompt the agent never answers is left behind after `grace`.
async fn settle(in_flight: &mut Vec<tokio::task::JoinHandle<()>>, grace: Duration) {
    let all = futures::future::join_all(in_flight.drain(..));
    let _ = tokio::time::timeout(grace, all).await;
}
