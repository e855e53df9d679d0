//! Labs' **Start drill** and **Cancel drill** (`POST /api/labs/drill/start`,
//! `POST /api/labs/drill/cancel`): which drill is active for this console's
//! live session, held server-side on the session ([`DrillBinding`]).
//!
//! Start drill takes `{"drill": "MODULE/DECK/TASK", "session": {…}}`. The id
//! must be one `GET /api/labs` lists for an intact snapshot
//! (`modules::labs::find`: 400 malformed, 404 not installed or unknown, 409
//! tampered). With a session live in this console the drill is bound to it
//! and the mentor is told ([`labs::started_notice`], through the session's
//! transport like a `practice_check` block); with none, a session is started
//! through the one start path (`start::start_req`, `session` being the body
//! `POST /api/session/start` takes, topic defaulting to the drill id) with the
//! notice appended to its persona, so the mentor reads it after its brief and
//! before anything else. Requests are serialized: a double click starts one
//! session and the second request finds the drill already bound.
//!
//! Cancel drill unbinds and tells the mentor; a session the drill started
//! keeps running (ending a session is the learner's own act: it writes the
//! session's notes and closes its record).
//!
//! Nothing here runs a phase script: the learner runs the commands in their
//! own terminal, after typed consent (`studyloop drill`), and the check's
//! result reaches this session through `POST /api/session/practice-check`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::app_state::AppState;
use super::slot::DrillBinding;
use super::start;
use super::start_req::{ApiError, err};
use crate::modules::ModuleError;
use crate::modules::labs;

/// The status a drill lookup failure gets; the message names the id.
fn lookup_error(e: ModuleError) -> ApiError {
    let status = match e {
        ModuleError::BadDrill(_) => StatusCode::BAD_REQUEST,
        ModuleError::NotInstalled { .. } | ModuleError::UnknownDrill { .. } => {
            StatusCode::NOT_FOUND
        }
        ModuleError::Tampered { .. } => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    err(status, e.to_string())
}

fn body_json(body: &[u8]) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(body).map_err(|e| {
        err(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the body is not JSON ({e}); send {{\"drill\": \"MODULE/DECK/TASK\"}}"),
        )
    })
}

fn reply(command: &str, r: Result<(StatusCode, Value), ApiError>) -> Response {
    match r {
        Ok((status, v)) => crate::envelope::respond(status, command, v),
        Err(e) => e.into_response(),
    }
}

/// `POST /api/labs/drill/start`.
pub(crate) async fn start(State(app): State<Arc<AppState>>, body: Bytes) -> Response {
    reply("labs.drill.start", start_drill(&app, &body).await)
}

async fn start_drill(app: &Arc<AppState>, body: &[u8]) -> Result<(StatusCode, Value), ApiError> {
    let v = body_json(body)?;
    let Some(id) = v["drill"].as_str() else {
        return Err(err(
            StatusCode::UNPROCESSABLE_ENTITY,
            "send {\"drill\": \"MODULE/DECK/TASK\"} (one of the ids GET /api/labs lists)",
        ));
    };
    let mut session = match v.get("session") {
        None | Some(Value::Null) => json!({}),
        Some(o @ Value::Object(_)) => o.clone(),
        Some(_) => {
            return Err(err(
                StatusCode::UNPROCESSABLE_ENTITY,
                "`session` must be the object POST /api/session/start takes",
            ));
        }
    };
    let (env, wanted) = (app.ctx.env.clone(), id.to_owned());
    let drill = tokio::task::spawn_blocking(move || labs::find(&env, &wanted))
        .await
        .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(lookup_error)?;
    let notice = labs::started_notice(&drill);
    let _one_at_a_time = app.start_lock.lock().await;
    let (live, started) = match app.slot.current() {
        Some(live) => (live, None),
        None => {
            if session.get("topic").is_none_or(Value::is_null) {
                session["topic"] = json!(id);
            }
            let mut req = start::parse(app, session.to_string().as_bytes())?;
            req.notice = Some(notice.clone());
            let out = start::start_req(app, req).await?;
            let live = app
                .slot
                .current()
                .filter(|l| out["study_session_id"] == l.info.study_session_id.as_str())
                .ok_or_else(|| {
                    err(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the session started for this drill ended at once; see the dashboard",
                    )
                })?;
            (live, Some(out))
        }
    };
    let session_id = live.info.study_session_id.clone();
    let mut out = json!({
        "drill": drill, "commands": drill["commands"], "study_session_id": session_id,
        "started_session": started.is_some(), "session": started,
    });
    if let Some(bound) = live.drill().filter(|b| b.id == id) {
        // The second click of a double click: already bound, already told.
        out["started_session"] = json!(bound.started_session);
        out["already_bound"] = json!(true);
        out["mentor"] = json!("told");
        return Ok((StatusCode::OK, out));
    }
    let replaced = live.bind_drill(DrillBinding {
        id: id.to_owned(),
        commands: drill["commands"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        started_session: started.is_some(),
        at: crate::context::now_rfc3339(),
    });
    // A session started for the drill read the notice in its persona.
    out["mentor"] = json!(match started {
        Some(_) => "told".to_owned(),
        None => match live.tell(&notice) {
            Ok(()) => "told".to_owned(),
            Err(e) => format!("not told: {e}"),
        },
    });
    out["replaced"] = json!(replaced.map(|b| b.id));
    let status = if started.is_some() {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, out))
}

/// `POST /api/labs/drill/cancel`.
pub(crate) async fn cancel(State(app): State<Arc<AppState>>, body: Bytes) -> Response {
    reply("labs.drill.cancel", cancel_drill(&app, &body).await)
}

async fn cancel_drill(app: &AppState, body: &[u8]) -> Result<(StatusCode, Value), ApiError> {
    let v = body_json(body)?;
    let asked = match v.get("drill") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            crate::modules::drill::parse_id(s).map_err(lookup_error)?;
            Some(s.as_str())
        }
        Some(_) => {
            return Err(err(
                StatusCode::UNPROCESSABLE_ENTITY,
                "`drill` must be the id of the active drill",
            ));
        }
    };
    let _one_at_a_time = app.start_lock.lock().await;
    let none_active = || err(StatusCode::NOT_FOUND, "no drill is active in this console");
    let live = app.slot.current().ok_or_else(none_active)?;
    let bound = live.drill().ok_or_else(none_active)?;
    if let Some(asked) = asked.filter(|a| *a != bound.id) {
        return Err(err(
            StatusCode::CONFLICT,
            format!(
                "drill `{}` is not the active one; the active drill is `{}`",
                asked.escape_debug(),
                bound.id
            ),
        ));
    }
    live.unbind_drill();
    let mentor = match live.tell(&labs::cancelled_notice(&bound.id)) {
        Ok(()) => "told".to_owned(),
        Err(e) => format!("not told: {e}"),
    };
    Ok((
        StatusCode::OK,
        json!({"cancelled": bound.id, "study_session_id": live.info.study_session_id,
               "started_session": bound.started_session, "session": "kept", "mentor": mentor}),
    ))
}
