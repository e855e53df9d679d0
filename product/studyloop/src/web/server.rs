//! The axum application of `studyloop web`: the router and the serve loop with its
//! reaper (the shared state is `app_state`).
//!
//! Routes: `GET /`, `/static/{file}` and `/favicon.ico` (the SPA), `GET /session` (redirect),
//! `POST /api/session/start`, `GET /api/session/options`, `GET
//! /api/session/state` (see `start`), `POST /api/session/end`, `WS
//! /api/session/ws`, `GET /api/labs` (installed drills, `modules::labs`), `POST
//! /api/labs/drill/start|cancel` (bind a drill to the session, `labs`), `POST
//! /api/session/practice-check` (a drill result for the live session,
//! `practice`). Every response gets the security headers; the password
//! gate applies when a password is set; the `guard` (Host, Origin, JSON-only,
//! bounded body) runs in front of every route; the console `token` is needed
//! by every `/api/` route and every non-GET request; `listen` bounds connections.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Router, middleware};
use serde_json::json;

use super::guard;
use super::listen;
use super::security::{self, Gate, Password};
use super::{assets, plans, start, token, ws};
use crate::envelope::{self, ApiError, Code};

// The state lives in its own file so the handlers import it without importing the
// router that imports them.
pub use super::app_state::{AppState, slot_json, ws_url};

/// Every route of the console: the one list the router is built from, so a
/// test can walk all of them (a new route is covered by the token test at once).
#[must_use]
pub fn routes() -> Vec<(&'static str, MethodRouter<Arc<AppState>>)> {
    vec![
        ("/", get(assets::index)),
        ("/static/{file}", get(assets::file)),
        ("/favicon.ico", get(assets::favicon)),
        ("/session", get(assets::session_redirect)),
        ("/api/session/start", post(start::start)),
        ("/api/session/options", get(start::options)),
        ("/api/session/state", get(start::state)),
        ("/api/session/end", post(end)),
        ("/api/session/ws", get(ws::handler)),
        ("/api/labs", get(labs)),
        ("/api/labs/drill/start", post(super::labs::start)),
        ("/api/labs/drill/cancel", post(super::labs::cancel)),
        (
            "/api/session/practice-check",
            post(super::practice::practice_check),
        ),
        ("/api/plans", get(plans::list).post(plans::create)),
        ("/api/plans/interview", get(plans::interview)),
        (
            "/api/plans/{id}",
            get(plans::detail).patch(plans::patch).delete(plans::delete),
        ),
        ("/api/plans/{id}/markdown", get(plans::markdown)),
        ("/api/plans/{id}/history", get(plans::history)),
        (
            "/api/plans/{id}/evaluate",
            get(plans::evaluate_preview).post(plans::evaluate),
        ),
        (
            "/api/plans/{id}/milestones/{index}/toggle",
            post(plans::toggle),
        ),
        ("/api/now", get(plans::now)),
    ]
}

/// The whole application: every route, the security headers, the guard, the
/// password gate (with its failure limiter) and the console token.
pub fn router(state: Arc<AppState>, password: Password) -> Router {
    let gate = Arc::new(Gate::new(password));
    routes()
        .into_iter()
        .fold(Router::new(), |r, (path, method)| r.route(path, method))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            token::require,
        ))
        .layer(middleware::from_fn_with_state(gate, security::basic_auth))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(middleware::from_fn(security::headers))
        .with_state(state)
}

/// `GET /api/labs`: the installed drills (read-only; nothing runs from the
/// browser).
async fn labs(State(state): State<Arc<AppState>>) -> Response {
    let env = state.ctx.env.clone();
    match tokio::task::spawn_blocking(move || crate::modules::labs::catalogue(&env)).await {
        Ok(v) => envelope::respond(StatusCode::OK, "labs.list", v),
        // A panic in the catalogue is not "no modules installed".
        Err(e) => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            Code::Internal,
            format!("listing the installed drills failed: {e}"),
        )
        .into_response(),
    }
}

async fn end(State(state): State<Arc<AppState>>) -> Response {
    match state.slot.end(None, "ended", true).await {
        Some(info) => envelope::respond(
            StatusCode::OK,
            "session.end",
            json!({ "ended": true, "topic": info.topic }),
        ),
        None => ApiError::new(
            StatusCode::NOT_FOUND,
            Code::NoActiveSession,
            "No active session; nothing to end",
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
