//! The plan and "now" routes: `/api/plans…` and `GET /api/now`, thin
//! adapters over [`crate::plans::PlanApp`] (the same layer as the CLI and
//! `studyloop-mcp`). Refusals are the envelope's failure: 400 `invalid_input`
//! (`details.plan_code` `invalid`, `invalid_id`, `invalid_milestone`), 404, 409 and
//! 422 `not_ready` (`details` `{ready, blockers, nudges}`); a success is the
//! envelope's success named by its route (`plan.list`, …, docs/using-studyloop.md),
//! except the markdown route, which returns the document as `text/markdown`.
//! Bodies arrive through the guard (JSON only, bounded).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::app_state::AppState;
use crate::envelope::{self, ApiError};
use crate::plans::now::{self, NowInput};
use crate::plans::{
    CreateRequest, IfRevision, PlanApp, PlanError, PlanPatch, PlanStatus, evaluation_revision,
    required_request_id, required_revision,
};

type Params = Query<HashMap<String, String>>;

fn refusal(e: &PlanError) -> Response {
    let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    ApiError {
        status,
        failure: e.failure(),
    }
    .into_response()
}

/// Run a blocking plan operation off the async workers.
async fn blocking<T: Send + 'static>(
    state: &Arc<AppState>,
    f: impl FnOnce(&PlanApp) -> Result<T, PlanError> + Send + 'static,
) -> Result<T, Response> {
    let ctx = state.ctx.clone();
    let joined =
        tokio::task::spawn_blocking(move || PlanApp::from_ctx(&ctx).and_then(|app| f(&app))).await;
    match joined {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(refusal(&e)),
        Err(e) => Err(refusal(&PlanError::Storage(format!(
            "the plan task failed: {e}"
        )))),
    }
}

fn reply(status: StatusCode, command: &str, r: Result<Value, Response>) -> Response {
    match r {
        Ok(v) => envelope::respond(status, command, v),
        Err(resp) => resp,
    }
}

/// A string field of a body: absent or null is `None`.
fn body_str<'a>(v: &'a Value, k: &str) -> Result<Option<&'a str>, PlanError> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(PlanError::Invalid(format!("`{k}` must be a string"))),
    }
}

/// The body's required `if_revision` for a change to plan `id`.
fn body_revision<'a>(v: &'a Value, id: &str) -> Result<IfRevision<'a>, PlanError> {
    required_revision(body_str(v, "if_revision")?, id)
}

fn body_json(body: &[u8]) -> Result<Value, PlanError> {
    if body.is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err(PlanError::Invalid("the body must be a JSON object".into())),
        Err(e) => Err(PlanError::Invalid(format!("the body is not JSON: {e}"))),
    }
}

/// `GET /api/plans?status=`.
pub async fn list(State(s): State<Arc<AppState>>, Query(q): Params) -> Response {
    let status = q.get("status").filter(|v| !v.is_empty()).cloned();
    reply(
        StatusCode::OK,
        "plan.list",
        blocking(&s, move |app| {
            let status = status.as_deref().map(PlanStatus::parse).transpose()?;
            let (plans, problems) = app.list(status)?;
            let list: Vec<Value> = plans.iter().map(crate::plans::summary).collect();
            let statuses: Vec<&str> = PlanStatus::ALL.iter().map(|s| s.as_str()).collect();
            Ok(json!({"plans": list, "count": list.len(), "statuses": statuses, "problems": problems}))
        })
        .await,
    )
}

/// `GET /api/plans/interview`.
pub async fn interview(State(s): State<Arc<AppState>>) -> Response {
    reply(
        StatusCode::OK,
        "plan.interview",
        blocking(&s, PlanApp::interview).await,
    )
}

/// `GET /api/plans/{id}`: detail plus markdown.
pub async fn detail(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    reply(
        StatusCode::OK,
        "plan.show",
        blocking(&s, move |app| app.detail(&id, true, None)).await,
    )
}

/// `GET /api/plans/{id}/markdown`.
pub async fn markdown(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> Response {
    match blocking(&s, move |app| app.markdown(&id)).await {
        Ok(text) => (
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            text,
        )
            .into_response(),
        Err(r) => r,
    }
}

/// `GET /api/plans/{id}/history?limit=`.
pub async fn history(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Params,
) -> Response {
    let limit = q.get("limit").cloned();
    reply(
        StatusCode::OK,
        "plan.history",
        blocking(&s, move |app| {
            let limit = match limit.as_deref() {
                None | Some("") => 20,
                Some(l) => l.parse::<i64>().map_err(|_| {
                    PlanError::Invalid(format!(
                        "limit `{}` is not a number; use 1..200",
                        l.chars().take(20).collect::<String>()
                    ))
                })?,
            };
            let rows = app.history(&id, limit)?;
            Ok(json!({"plan_id": id, "checkpoints": rows, "count": rows.len()}))
        })
        .await,
    )
}

/// `GET /api/plans/{id}/evaluate?phase=&study_id=`: a preview.
pub async fn evaluate_preview(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Params,
) -> Response {
    let phase = q.get("phase").cloned().unwrap_or_else(|| "mid".into());
    let study = q.get("study_id").cloned().unwrap_or_default();
    reply(
        StatusCode::OK,
        "plan.evaluate",
        blocking(&s, move |app| {
            app.evaluate(&id, &phase, &study, false, IfRevision::Unchecked)
        })
        .await,
    )
}

/// `POST /api/plans/{id}/evaluate {phase, study_id?, record?}`.
pub async fn evaluate(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    reply(
        StatusCode::OK,
        "plan.evaluate",
        blocking(&s, move |app| {
            let v = body_json(&body)?;
            let phase = v
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or("mid")
                .to_owned();
            let study = v
                .get("study_id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let record = match v.get("record") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(PlanError::Invalid("`record` must be true or false".into())),
            };
            let expect = evaluation_revision(record, body_str(&v, "if_revision")?, &id)?;
            app.evaluate(&id, &phase, &study, record, expect)
        })
        .await,
    )
}

/// `POST /api/plans` (`{title, answers, plan_id?, status?}` or `{markdown}`) → 201.
pub async fn create(State(s): State<Arc<AppState>>, body: Bytes) -> Response {
    reply(
        StatusCode::CREATED,
        "plan.new",
        blocking(&s, move |app| {
            let v = body_json(&body)?;
            let request_id = required_request_id(body_str(&v, "request_id")?)?;
            let plan = if let Some(md) = v.get("markdown") {
                let md = md
                    .as_str()
                    .ok_or_else(|| PlanError::Invalid("`markdown` must be a string".into()))?;
                app.create_from_markdown(md, Some(request_id))?
            } else {
                let str_of = |k: &str| body_str(&v, k).map(|s| s.map(str::to_owned));
                app.create(&CreateRequest {
                    title: str_of("title")?.unwrap_or_default(),
                    answers: v.get("answers").cloned().unwrap_or(Value::Null),
                    plan_id: str_of("plan_id")?,
                    status: str_of("status")?,
                    request_id: Some(request_id.to_owned()),
                })?
            };
            app.detail(plan.id.as_str(), true, None)
        })
        .await,
    )
}

/// `PATCH /api/plans/{id}`: every given field, saved once.
pub async fn patch(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    reply(
        StatusCode::OK,
        "plan.update",
        blocking(&s, move |app| {
            let mut v = body_json(&body)?;
            let given = body_str(&v, "if_revision")?.map(str::to_owned);
            let expect = required_revision(given.as_deref(), &id)?;
            if let Some(o) = v.as_object_mut() {
                o.remove("if_revision");
            }
            let plan = app.update(&id, expect, &PlanPatch(v))?;
            app.detail(plan.id.as_str(), true, None)
        })
        .await,
    )
}

/// `POST /api/plans/{id}/milestones/{i}/toggle` (`{done}` sets instead of flipping).
pub async fn toggle(
    State(s): State<Arc<AppState>>,
    Path((id, index)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    reply(
        StatusCode::OK,
        "plan.milestone",
        blocking(&s, move |app| {
            let v = body_json(&body)?;
            let total = app.get(&id)?.milestones.len();
            let index: i64 = index
                .parse()
                .map_err(|_| PlanError::InvalidMilestone { index: -1, total })?;
            let expect = body_revision(&v, &id)?;
            let plan = match v.get("done") {
                None | Some(Value::Null) => app.toggle_milestone(&id, expect, index)?,
                Some(Value::Bool(b)) => app.set_milestone(&id, expect, index, *b)?,
                Some(_) => return Err(PlanError::Invalid("`done` must be true or false".into())),
            };
            app.detail(plan.id.as_str(), false, None)
        })
        .await,
    )
}

/// `DELETE /api/plans/{id}?if_revision=` (the request is the confirmation; a DELETE
/// has no body, so the revision is a query parameter).
pub async fn delete(
    State(s): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Params,
) -> Response {
    let given = q.get("if_revision").cloned();
    reply(
        StatusCode::OK,
        "plan.delete",
        blocking(&s, move |app| {
            let expect = required_revision(given.as_deref(), &id)?;
            app.delete(&id, expect, true)
        })
        .await,
    )
}

/// `GET /api/now?energy=&time=&modality=&interleave=`.
pub async fn now(State(s): State<Arc<AppState>>, Query(q): Params) -> Response {
    reply(
        StatusCode::OK,
        "now",
        blocking(&s, move |app| {
            let g = |k: &str| q.get(k).map(String::as_str);
            let input = NowInput::parse(g("energy"), g("time"), g("modality"), g("interleave"))?;
            now::now(app, &input)
        })
        .await,
    )
}
