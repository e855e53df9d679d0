//! `POST /api/session/start` (pty | acp), `GET /api/session/options` and the
//! state overlay, built on the product's session core: the same claim,
//! persona, adapters, DB row and end path as the CLI. Only the transport and
//! the session dir name (`pty-…`/`acp-…`) differ.
//!
//! Status codes (reference §5.2): 201 started; 400 unknown agent, an agent
//! without ACP, a bad origin, or a scope problem; 409 a session is already
//! live; 422 a malformed body (topic, energy, transport, purpose); 503 the
//! harness or adapter binary is missing; 502 the agent failed its handshake;
//! 500 anything else. Every failure after the claim is rolled back.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::acp::{AcpSession, AcpTimeouts};
use super::agents;
use super::app_state::{AppState, ws_url};
use super::pty::PtySession;
use super::slot::{Live, LiveInfo, Transport};
use crate::adapters::{self, HARNESS_ORDER, Harness};
use crate::env;
use crate::session::Energy;

use super::start_prep as prep;
use super::start_req::err;
pub use super::start_req::{ApiError, Code, PURPOSES, StartReq, mode_for};

pub use prep::state_json;

/// Validates a start body (the JSON of `POST /api/session/start`).
///
/// # Errors
/// [`ApiError`] with the route's status for the first bad field.
pub(crate) fn parse(app: &AppState, body: &[u8]) -> Result<StartReq, ApiError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        err(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body is not JSON ({e}); send {{\"topic\": …}}"),
        )
    })?;
    let field = |k: &str| v.get(k).filter(|x| !x.is_null());
    let topic = field("topic")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if topic.is_empty() || topic.chars().count() > 200 {
        return Err(err(
            StatusCode::UNPROCESSABLE_ENTITY,
            "topic is required (1-200 characters)",
        ));
    }
    let energy = match field("energy") {
        None => Energy::parse("5"),
        Some(e) => Energy::parse(
            &e.as_u64()
                .map(|n| n.to_string())
                .unwrap_or_else(|| e.to_string()),
        ),
    }
    .map_err(|e| err(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    let transport = match field("transport").and_then(Value::as_str).unwrap_or("pty") {
        "pty" => "pty",
        "acp" => "acp",
        other => {
            return Err(err(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("transport `{other}` is not supported"),
            )
            .with_details(json!({"supported_transports": ["pty", "acp"]})));
        }
    };
    let given = field("purpose").and_then(Value::as_str).unwrap_or("focus");
    let Some(purpose) = PURPOSES.into_iter().find(|p| *p == given) else {
        let msg = format!("purpose `{given}` is not accepted; use study, focus or planning");
        return Err(err(StatusCode::UNPROCESSABLE_ENTITY, msg)
            .with_details(json!({"supported_purposes": PURPOSES})));
    };
    let origin = match field("origin").and_then(Value::as_str).unwrap_or("study") {
        "study" => "study",
        "body-double" => "body-double",
        other => {
            let msg = format!("origin `{other}` is not accepted; use study or body-double");
            return Err(err(StatusCode::BAD_REQUEST, msg));
        }
    };
    let resume = match field("resume") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            let shown: String = other.to_string().chars().take(30).collect();
            let msg = format!("resume `{shown}` is not accepted; use true or false");
            return Err(err(StatusCode::UNPROCESSABLE_ENTITY, msg));
        }
    };
    let supported: Vec<&str> = HARNESS_ORDER.iter().map(|h| h.as_str()).collect();
    let harness = match field("agent").and_then(Value::as_str) {
        Some(name) => Harness::parse(name).map_err(|_| {
            err(StatusCode::BAD_REQUEST, format!("unknown agent `{name}`"))
                .with_details(json!({"supported_agents": supported,
                       "repair": "pick one of supported_agents"}))
        })?,
        None => {
            let priority = prep::priority(&app.ctx);
            adapters::detect(&app.ctx.env, &priority).map_err(|e| {
                err(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
                    .with_details(json!({"agent": null, "binary": null,
                           "install_hint": "install a harness (for this repo: `just harnesses`)"}))
            })?
        }
    };
    if transport == "acp" && agents::acp_launch(harness).is_none() {
        return Err(err(
            StatusCode::BAD_REQUEST,
            format!("agent `{}` cannot run over ACP", harness.as_str()),
        )
        .with_details(json!({"supported_agents": agents::acp_capable(),
                   "repair": "use transport pty for this agent, or an ACP-capable agent"})));
    }
    Ok(StartReq {
        topic: topic.to_owned(),
        energy,
        harness,
        transport,
        purpose,
        origin,
        resume,
        notice: None,
    })
}

fn conflict(live: &Live) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        Code::SessionActive,
        "A study session is already active; end it first or reattach",
    )
    .with_details(
        json!({"study_session_id": live.info.study_session_id, "topic": live.info.topic,
               "agent": live.info.agent, "detached": live.detached(),
               "reattach_url": "/#study-session"}),
    )
}

/// The program a launch needs, unless a test hatch replaces it: 503 when missing.
fn require_binary(app: &AppState, req: &StartReq) -> Result<Option<PathBuf>, ApiError> {
    let hatch_var = if req.transport == "acp" {
        env::STUDYLOOP_TEST_ACP_CMD
    } else {
        env::STUDYLOOP_TEST_AGENT_CMD
    };
    if app.ctx.env.get_nonempty(hatch_var).ok().flatten().is_some() {
        return Ok(None);
    }
    let agent = req.harness.as_str();
    let missing = |binary: &str, hint: String| {
        err(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("`{binary}` for agent {agent} is not on PATH"),
        )
        .with_details(json!({"agent": agent, "binary": binary, "install_hint": hint}))
    };
    if req.transport == "acp" {
        let launch = agents::acp_launch(req.harness)
            .ok_or_else(|| err(StatusCode::BAD_REQUEST, "no ACP"))?;
        let bin = launch.argv[0];
        crate::procs::which(&app.ctx.env, bin)
            .map(Some)
            .ok_or_else(|| missing(bin, agents::install_hint(&launch)))
    } else {
        let adapter = req.harness.adapter();
        adapter.require_binary(&app.ctx.env).map(Some).map_err(|_| {
            missing(
                adapter.binaries[0],
                "install it (for this repo: `just harnesses`)".into(),
            )
        })
    }
}

/// `POST /api/session/start`.
pub async fn start(State(app): State<Arc<AppState>>, body: Bytes) -> Response {
    match start_inner(&app, &body).await {
        Ok(v) => crate::envelope::respond(StatusCode::CREATED, "session.start", v),
        Err(e) => e.into_response(),
    }
}

async fn start_inner(app: &Arc<AppState>, body: &[u8]) -> Result<Value, ApiError> {
    let req = parse(app, body)?;
    let _one_at_a_time = app.start_lock.lock().await;
    start_req(app, req).await
}

/// Starts the session `req` describes: the one start path (the route above
/// and Labs' Start drill both come through here, each holding
/// `AppState::start_lock`). 409 when one is live.
///
/// # Errors
/// [`ApiError`] with the route's status; everything after the claim is rolled back.
pub(crate) async fn start_req(app: &Arc<AppState>, req: StartReq) -> Result<Value, ApiError> {
    if let Some(live) = app.slot.current() {
        return Err(conflict(&live));
    }
    let binary = require_binary(app, &req)?;
    let (ctx, r) = (app.ctx.clone(), req.clone());
    let prepared = tokio::task::spawn_blocking(move || prep::prepare(&ctx, &r, binary.as_deref()))
        .await
        .map_err(|e| {
            err(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("start task failed: {e}"),
            )
        })??;
    let transport = match &prepared.launch {
        prep::Launch::Pty(cmd) => PtySession::start(cmd)
            .map(Transport::Pty)
            .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        prep::Launch::Acp(cmd) => AcpSession::start(cmd.clone(), AcpTimeouts::default())
            .await
            .map(Transport::Acp)
            .map_err(|e| {
                err(StatusCode::BAD_GATEWAY, e.to_string())
                    .with_details(json!({"agent": req.harness.as_str()}))
            }),
    };
    let transport = match transport {
        Ok(t) => t,
        Err(e) => {
            let rb = prepared.rollback.clone();
            let why = e.message().to_owned();
            let _ = tokio::task::spawn_blocking(move || rb.run(&why)).await;
            return Err(e);
        }
    };
    let info = LiveInfo {
        study_session_id: prepared.id.clone(),
        topic: req.topic.clone(),
        energy: req.energy.get(),
        agent: req.harness.as_str().to_owned(),
        transport: req.transport,
        purpose: req.purpose.to_owned(),
        origin: req.origin.to_owned(),
        started_at: prepared.now.clone(),
    };
    let live = Arc::new(Live::new(info, transport));
    let (ctx, p, l, port) = (app.ctx.clone(), prepared.clone(), live.clone(), app.port);
    let written = tokio::task::spawn_blocking(move || prep::write_state(&ctx, &p, &l, port)).await;
    let occupied = match written {
        Ok(Ok(())) => app
            .slot
            .occupy(live.clone())
            .map_err(|other| conflict(&other)),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(err(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("state task failed: {e}"),
        )),
    };
    if let Err(e) = occupied {
        stop_unslotted(&live).await;
        let rb = prepared.rollback.clone();
        let _ = tokio::task::spawn_blocking(move || rb.run("the web start failed")).await;
        return Err(e);
    }
    let mut out = json!({
        "study_session_id": prepared.id, "topic": req.topic, "energy": req.energy.get(),
        "agent": req.harness.as_str(), "transport": req.transport, "purpose": req.purpose,
        "origin": req.origin, "ws_url": ws_url(&prepared.id),
        "persona_hash": prepared.persona_hash, "resumed": req.resume,
    });
    if req.transport == "acp" {
        out["persona_text"] = json!(prepared.persona_text);
    }
    Ok(out)
}

/// Stops a transport that never made it into the slot.
async fn stop_unslotted(live: &Arc<Live>) {
    match &live.transport {
        Transport::Acp(a) => a.stop().await,
        Transport::Pty(_) => {
            let l = live.clone();
            let _ = tokio::task::spawn_blocking(move || {
                if let Transport::Pty(p) = &l.transport {
                    p.stop_blocking(std::time::Duration::from_secs(2));
                }
            })
            .await;
        }
    }
}

/// `GET /api/session/options`: the agents the start picker offers.
pub async fn options(State(app): State<Arc<AppState>>) -> Response {
    let env = &app.ctx.env;
    let agents: Vec<Value> = HARNESS_ORDER
        .iter()
        .map(|h| {
            json!({"name": h.as_str(), "label": h.adapter().label,
                   "installed": h.adapter().resolve_binary(env).is_some(),
                   "acp": agents::acp_launch(*h).is_some()})
        })
        .collect();
    let default = adapters::detect(env, &prep::priority(&app.ctx))
        .ok()
        .map(Harness::as_str);
    crate::envelope::respond(
        StatusCode::OK,
        "session.options",
        json!({"agents": agents, "default_agent": default, "transports": ["pty", "acp"],
                "purposes": PURPOSES}),
    )
}

/// `GET /api/session/state`.
pub async fn state(State(app): State<Arc<AppState>>) -> Response {
    let app2 = app.clone();
    match tokio::task::spawn_blocking(move || state_json(&app2)).await {
        Ok(v) => crate::envelope::respond(StatusCode::OK, "session.state", v),
        // A panic reading the state is not "no session": say it failed.
        Err(e) => err(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("reading the session state failed: {e}"),
        )
        .into_response(),
    }
}
