//! The axum application of `studyloop web`: shared state, the router, and
//! the serve loop with its reaper.
//!
//! Routes: `GET /` and `/static/{file}` (the SPA), `GET /session` (redirect),
//! `POST /api/session/start`, `GET /api/session/options`, `GET
//! /api/session/state` (see `start`), `POST /api/session/end`, `WS
//! /api/session/ws`, `GET /api/labs` (installed drills, `modules::labs`), `POST
//! /api/labs/drill/start|cancel` (bind a drill to the session, `labs`), `POST
//! /api/session/practice-check` (a drill result for the live session,
//! `practice`). Every response gets the security headers; the password
//! gate applies when a password is set; the `guard` (Host, Origin, JSON-only,
//! bounded body) runs in front of every route; `listen` bounds connections.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use serde_json::{Value, json};

use super::guard::{self, HostPolicy};
use super::listen::{self, Limits};
use super::security::{self, Gate, Password};
use super::slot::{ATTACH_GRACE, Slot};
use super::{assets, plans, start, ws};
use crate::context::Ctx;

/// State shared by every handler.
#[derive(Debug)]
pub struct AppState {
    /// The server process's context (env snapshot, cwd, exe): what every
    /// session operation resolves paths from.
    pub ctx: Ctx,
    /// The port served (recorded as `web_port`).
    pub port: Option<u16>,
    /// The live session slot.
    pub slot: Slot,
    /// The names and origins this server answers to (`guard`).
    pub hosts: HostPolicy,
    /// Connection limits (`listen`).
    pub limits: Limits,
    /// How long detached or never-attached sessions are held.
    pub grace: Duration,
    /// Serializes the console's starts (`POST /api/session/start` and Labs'
    /// Start drill): a double click starts one session and binds the later
    /// requests to it, and two starts never both pass the state-file claim
    /// (both are this process's) to race for the slot.
    pub start_lock: tokio::sync::Mutex<()>,
}

impl AppState {
    /// State around `slot` with the reference grace period, loopback names,
    /// `allowed_origins` as the extra origins and the default limits.
    #[must_use]
    pub fn new(ctx: Ctx, slot: Slot, allowed_origins: Vec<String>) -> Self {
        Self {
            ctx,
            port: None,
            slot,
            hosts: HostPolicy {
                extra_origins: allowed_origins,
                ..HostPolicy::default()
            },
            limits: Limits::default(),
            grace: ATTACH_GRACE,
            start_lock: tokio::sync::Mutex::new(()),
        }
    }
}

/// The whole application: every route, the security headers, the guard and
/// the password gate (with its failure limiter).
pub fn router(state: Arc<AppState>, password: Password) -> Router {
    let gate = Arc::new(Gate::new(password));
    Router::new()
        .route("/", get(assets::index))
        .route("/static/{file}", get(assets::file))
        .route("/session", get(assets::session_redirect))
        .route("/api/session/start", post(start::start))
        .route("/api/session/options", get(start::options))
        .route("/api/session/state", get(start::state))
        .route("/api/session/end", post(end))
        .route("/api/session/ws", get(ws::handler))
        .route("/api/labs", get(labs))
        .route("/api/labs/drill/start", post(super::labs::start))
        .route("/api/labs/drill/cancel", post(super::labs::cancel))
        .route(
            "/api/session/practice-check",
            post(super::practice::practice_check),
        )
        .route("/api/plans", get(plans::list).post(plans::create))
        .route("/api/plans/interview", get(plans::interview))
        .route(
            "/api/plans/{id}",
            get(plans::detail).patch(plans::patch).delete(plans::delete),
        )
        .route("/api/plans/{id}/markdown", get(plans::markdown))
        .route("/api/plans/{id}/history", get(plans::history))
        .route(
            "/api/plans/{id}/evaluate",
            get(plans::evaluate_preview).post(plans::evaluate),
        )
        .route(
            "/api/plans/{id}/milestones/{index}/toggle",
            post(plans::toggle),
        )
        .route("/api/now", get(plans::now))
        .layer(middleware::from_fn_with_state(gate, security::basic_auth))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(middleware::from_fn(security::headers))
        .with_state(state)
}

/// The live slot as JSON: the session's fields plus `active`, `detached`,
/// `reattach_url`; `last_release` when idle. The caller may overlay the
/// state file (which also knows CLI sessions).
#[must_use]
pub fn slot_json(state: &AppState) -> Value {
    match state.slot.current() {
        Some(live) => {
            let mut v = serde_json::to_value(&live.info).unwrap_or_else(|_| json!({}));
            if let Some(obj) = v.as_object_mut() {
                let id = &live.info.study_session_id;
                obj.insert("active".into(), json!(true));
                obj.insert("detached".into(), json!(live.detached()));
                obj.insert("child_pid".into(), json!(live.child_pid()));
                obj.insert("ws_url".into(), json!(ws_url(id)));
                obj.insert("reattach_url".into(), json!("/#study-session"));
                obj.insert("drill".into(), json!(live.drill()));
            }
            v
        }
        None => json!({ "active": false, "last_release": state.slot.last_release() }),
    }
}

/// The WS address of session `id`.
#[must_use]
pub fn ws_url(id: &str) -> String {
    format!("/api/session/ws?study_session_id={id}")
}

/// `GET /api/labs`: the installed drills (read-only; nothing runs from the
/// browser).
async fn labs(State(state): State<Arc<AppState>>) -> Json<Value> {
    let env = state.ctx.env.clone();
    let v = tokio::task::spawn_blocking(move || crate::modules::labs::catalogue(&env))
        .await
        .unwrap_or_else(|_| json!({ "modules": [] }));
    Json(v)
}

async fn end(State(state): State<Arc<AppState>>) -> Response {
    match state.slot.end(None, "ended", true).await {
        Some(info) => Json(json!({ "ended": true, "topic": info.topic })).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": "No active session" })),
        )
            .into_response(),
    }
}

/// Serves `app` on `addr` until `shutdown` resolves, reaping abandoned or
/// exited sessions every few seconds; ends the live session on the way out.
///
/// # Errors
/// The bind or serve error.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let reaper_state = state.clone();
    let reaper = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(2));
        loop {
            tick.tick().await;
            release_if_ended_elsewhere(&reaper_state).await;
            reaper_state.slot.reap(reaper_state.grace).await;
        }
    });
    let result = listen::accept_loop(listener, app, state.limits, shutdown).await;
    reaper.abort();
    state.slot.end(None, "server-stopped", true).await;
    result
}

/// A live session that the state file no longer shows as active (ended by
/// `studyloop study --end` or another door) is released without ending it twice.
async fn release_if_ended_elsewhere(state: &Arc<AppState>) {
    let Some(live) = state.slot.current() else {
        return;
    };
    let id = live.info.study_session_id.clone();
    let ctx = state.ctx.clone();
    let still_active = tokio::task::spawn_blocking(move || {
        let paths = crate::settings::session_paths(&ctx.env).ok()?;
        let s = crate::state::StateStore::new(&paths).read().ok()??;
        Some(s.is_active() && s.study_session_id.as_deref() == Some(id.as_str()))
    })
    .await
    .ok()
    .flatten();
    // Unknown (unreadable state) is not proof of an end: keep the session.
    if still_active == Some(false) {
        state
            .slot
            .end(Some(&live.info.study_session_id), "ended-elsewhere", false)
            .await;
    }
}
