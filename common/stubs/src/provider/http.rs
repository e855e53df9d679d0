//! Request handling: one fallback handler that routes by method and path suffix
//! (so `/v1/chat/completions`, `/chat/completions` and `/api/v1/...` all work),
//! checks the optional key, applies injected faults, logs, and answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::body::send;
use super::render::{self, Answer, Rendered};
use super::render_tool::{self, Call};
use super::{Faults, ProviderConfig, answer, request};
use crate::log::{LogRecord, Protocol, RequestLog, ToolCallRecord, UsageRecord};
use crate::tool_script::Pick;

/// The model names `GET /models` lists.
const MODELS: [&str; 4] = ["stub-model", "stub-mini", "gpt-5", "claude-sonnet-4-5"];

/// What every request handler shares.
pub(super) struct App {
    pub config: ProviderConfig,
    pub log: Option<RequestLog>,
    pub seq: AtomicU64,
    pub model_requests: AtomicU64,
}

#[derive(Clone, Copy)]
enum Flavor {
    OpenAi,
    Anthropic,
}

fn error(flavor: Flavor, status: StatusCode, kind: &str, message: &str) -> Response {
    let body = match flavor {
        Flavor::OpenAi => {
            json!({"error": {"message": message, "type": kind, "param": null, "code": kind}})
        }
        Flavor::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
    };
    json_response(status, &body)
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn authorized(config: &ProviderConfig, flavor: Flavor, headers: &HeaderMap) -> bool {
    let Some(key) = config.api_key.as_deref() else {
        return true;
    };
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let bearer = get("authorization").and_then(|v| v.strip_prefix("Bearer ")) == Some(key);
    bearer || (matches!(flavor, Flavor::Anthropic) && get("x-api-key") == Some(key))
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub(super) async fn handle(
    State(app): State<Arc<App>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let mut record = LogRecord {
        seq: app.seq.fetch_add(1, Ordering::Relaxed) + 1,
        time: jiff::Timestamp::now().to_string(),
        method: method.to_string(),
        path: path.clone(),
        model: None,
        protocol: Protocol::Unknown,
        stream: false,
        message_count: 0,
        user_turns: 0,
        persona: None,
        user_text_sha256: None,
        max_tokens: None,
        recall: None,
        practice_check: None,
        user_agent: headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        reply: None,
        usage: UsageRecord::default(),
        status: 200,
        fault: None,
        tool_call: None,
        tool_result: None,
        tool_note: None,
    };
    let response = route(&app, &method, &path, &headers, &body, &mut record).await;
    record.status = response.status().as_u16();
    if let Some(log) = &app.log {
        log.append(&record);
    }
    response
}

async fn route(
    app: &App,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: &Bytes,
    record: &mut LogRecord,
) -> Response {
    let trimmed = path.trim_end_matches('/');
    let protocol = match (method.as_str(), trimmed) {
        ("HEAD", _) => Protocol::Probe,
        ("GET", p) if p.ends_with("/models") => Protocol::Models,
        ("GET", "" | "/health" | "/healthz" | "/v1") => Protocol::Probe,
        ("POST", p) if p.ends_with("/messages/count_tokens") => Protocol::CountTokens,
        ("POST", p) if p.ends_with("/messages") => Protocol::Messages,
        ("POST", p) if p.ends_with("/chat/completions") => Protocol::ChatCompletions,
        ("POST", p) if p.ends_with("/responses") => Protocol::Responses,
        _ => Protocol::Unknown,
    };
    record.protocol = protocol;
    let flavor = match protocol {
        Protocol::Messages | Protocol::CountTokens => Flavor::Anthropic,
        _ => Flavor::OpenAi,
    };
    match protocol {
        Protocol::Probe => return json_response(StatusCode::OK, &json!({"ok": true})),
        Protocol::Unknown => {
            let message = format!("stub: no route for {method} {path}");
            return error(flavor, StatusCode::NOT_FOUND, "not_found_error", &message);
        }
        _ => {}
    }
    if !authorized(&app.config, flavor, headers) {
        let (kind, message) = match flavor {
            Flavor::OpenAi => (
                "invalid_api_key",
                "Incorrect API key provided (studyloop stub provider).",
            ),
            Flavor::Anthropic => (
                "authentication_error",
                "invalid x-api-key (studyloop stub provider)",
            ),
        };
        return error(flavor, StatusCode::UNAUTHORIZED, kind, message);
    }
    if protocol == Protocol::Models {
        let data: Vec<Value> = MODELS
            .iter()
            .map(|m| json!({"id": m, "object": "model", "created": 0, "owned_by": "stub", "type": "model", "display_name": m}))
            .collect();
        return json_response(
            StatusCode::OK,
            &json!({"object": "list", "data": data, "models": [], "has_more": false}),
        );
    }
    if matches!(flavor, Flavor::Anthropic) && !headers.contains_key("anthropic-version") {
        let message = "anthropic-version: header is required";
        return error(
            flavor,
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            message,
        );
    }
    let raw = String::from_utf8_lossy(body);
    let parsed: Value = match serde_json::from_str(&raw) {
        Ok(v) => v,
        Err(e) => {
            let message = format!("the request body is not JSON: {e}");
            return error(
                flavor,
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &message,
            );
        }
    };
    let exchange = match protocol {
        Protocol::ChatCompletions => request::chat(&parsed, &raw),
        Protocol::Responses => request::responses(&parsed, &raw),
        _ => request::messages(&parsed, &raw, protocol == Protocol::CountTokens),
    };
    let exchange = match exchange {
        Ok(ex) => ex,
        Err(refused) => {
            return error(
                flavor,
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &refused.to_string(),
            );
        }
    };
    record.model.clone_from(&exchange.model);
    record.stream = exchange.stream;
    record.message_count = exchange.message_count;
    record.user_turns = exchange.user_turns;
    record.persona.clone_from(&exchange.persona);
    record.max_tokens = exchange.max_tokens;
    record.recall.clone_from(&exchange.recall);
    record.user_text_sha256 = exchange
        .last_user_text
        .as_deref()
        .map(crate::reply::text_sha256);
    record.practice_check = exchange
        .practice_text
        .as_deref()
        .and_then(crate::practice::practice_check);
    if protocol == Protocol::CountTokens {
        record.usage.input_tokens = Some(exchange.input_tokens);
        return json_response(
            StatusCode::OK,
            &json!({"input_tokens": exchange.input_tokens}),
        );
    }
    model_answer(app, protocol, flavor, &exchange, record).await
}

async fn model_answer(
    app: &App,
    protocol: Protocol,
    flavor: Flavor,
    exchange: &request::Exchange,
    record: &mut LogRecord,
) -> Response {
    let config = &app.config;
    let nth = app.model_requests.fetch_add(1, Ordering::Relaxed) + 1;
    let mut applied = Vec::new();
    // A fault file, while it exists, decides this request's fault on its own.
    let switched = config
        .faults
        .fault_file
        .as_deref()
        .and_then(read_fault_file);
    let (faults, faulty) = match switched {
        Some(Ok(f)) => (f, true),
        Some(Err(e)) => {
            applied.push(e);
            (Faults::default(), false)
        }
        None => (config.faults.clone(), nth > config.faults.fail_after),
    };
    let faults = &faults;
    if let (true, Some(stall)) = (faulty, faults.stall) {
        applied.push(format!("stall {}ms", stall.as_millis()));
        tokio::time::sleep(stall).await;
    }
    if let (true, Some(status)) = (faulty, faults.fail_status) {
        applied.push(format!("fail-status {}", status.code()));
        record.fault = Some(applied.join(", "));
        let code = StatusCode::from_u16(status.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let (kind, message) = match (flavor, status.code()) {
            // The same bodies a wrong key meets (`authorized`): a harness reads both alike.
            (Flavor::OpenAi, 401) => (
                "invalid_api_key",
                "Incorrect API key provided (studyloop stub: injected fault).",
            ),
            (Flavor::Anthropic, 401) => (
                "authentication_error",
                "invalid x-api-key (studyloop stub: injected fault).",
            ),
            (Flavor::OpenAi, 429) => (
                "rate_limit_exceeded",
                "Rate limit reached (studyloop stub: injected fault).",
            ),
            (Flavor::Anthropic, 429) => (
                "rate_limit_error",
                "Rate limited (studyloop stub: injected fault).",
            ),
            (Flavor::OpenAi, _) => (
                "server_error",
                "The server had an error (studyloop stub: injected fault).",
            ),
            (Flavor::Anthropic, _) => (
                "api_error",
                "Internal server error (studyloop stub: injected fault).",
            ),
        };
        return error(flavor, code, kind, message);
    }
    record.tool_result = exchange
        .last_tool_result
        .as_deref()
        .map(|r| r.chars().take(200).collect());
    let pick = config.tools.as_ref().and_then(|t| {
        t.pick(
            exchange.last_user_text.as_deref(),
            &exchange.tools,
            exchange.tool_results,
        )
    });
    let call = match pick {
        Some(Pick::Call { name, step }) => Some(Call {
            name,
            arguments: &step.arguments,
            namespaced: exchange.namespaced.iter().any(|n| n == name),
        }),
        Some(Pick::NotOffered(why)) => {
            record.tool_note = Some(why);
            None
        }
        None => None,
    };
    let text = match &call {
        Some(_) => String::new(),
        None => answer::text(
            config.seed,
            config.replies,
            config.role,
            config.script.as_ref(),
            exchange,
        ),
    };
    let output_tokens = match &call {
        Some(c) => crate::reply::count_tokens(&c.arguments_text()),
        None => crate::reply::count_tokens(&text),
    };
    let model = exchange.model.as_deref().unwrap_or("stub-model");
    let a = Answer {
        seq: record.seq,
        created: now_unix(),
        model,
        text: &text,
        input_tokens: exchange.input_tokens,
        output_tokens,
        omit_usage: config.omit_usage,
        realistic: config.replies == super::ReplyMode::Realistic,
    };
    let rendered = render_answer(protocol, &a, call.as_ref(), exchange.stream);
    if let Some(c) = &call {
        record.tool_call = Some(ToolCallRecord {
            name: c.name.to_owned(),
            id: Call::id(record.seq, protocol == Protocol::Messages),
            arguments: c.arguments_text(),
        });
    }
    if !config.omit_usage {
        record.usage = UsageRecord {
            input_tokens: Some(exchange.input_tokens),
            output_tokens: Some(output_tokens),
        };
    }
    let truncate = faults.truncate_after.filter(|_| faulty);
    if let Some(n) = truncate {
        let unit = if exchange.stream { "events" } else { "bytes" };
        applied.push(format!("truncate after {n} {unit}"));
    }
    record.reply = call.is_none().then_some(text);
    record.fault = (!applied.is_empty()).then(|| applied.join(", "));
    send(rendered, config.delay, truncate)
}

/// The fault file's fault: `None` while it does not exist (or holds only blanks).
fn read_fault_file(path: &std::path::Path) -> Option<Result<Faults, String>> {
    // Never block the request on a FIFO or follow a link: a regular file or nothing.
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return Some(Err(format!(
            "fault file {} is not a regular file; write one line to a plain file",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    Some(Faults::from_line(line.trim()))
}

/// The answer in the protocol's shape: a scripted tool call, else the text.
fn render_answer(
    protocol: Protocol,
    a: &Answer<'_>,
    call: Option<&Call<'_>>,
    stream: bool,
) -> Rendered {
    match (protocol, call) {
        (Protocol::ChatCompletions, Some(c)) => render_tool::chat(a, c, stream),
        (Protocol::Responses, Some(c)) => render_tool::responses(a, c, stream),
        (_, Some(c)) => render_tool::messages(a, c, stream),
        (Protocol::ChatCompletions, None) => render::chat(a, stream),
        (Protocol::Responses, None) => render::responses(a, stream),
        (_, None) => render::messages(a, stream),
    }
}
