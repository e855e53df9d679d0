//! The conversation as OpenTelemetry spans in the OTLP/JSON encoding (an
//! `ExportTraceServiceRequest`, what an OTLP/HTTP collector accepts and
//! `otel-cli`/Jaeger import), following the GenAI semantic conventions: one
//! root span for the conversation and one `invoke_agent` child span per turn
//! with `gen_ai.input.messages` / `gen_ai.output.messages`. As OTLP/JSON
//! requires, ids are hex, enums are integers, and 64-bit integers are strings.
//! Times: each turn starts where the one before ended, from the bundle's start
//! and the recorded wall times; a conversation without them has no spans of
//! its own length, so an unrecorded time is an error, never a zero.

use serde_json::{Value, json};

use super::Conversation;

/// `SPAN_KIND_INTERNAL` and `SPAN_KIND_CLIENT` (opentelemetry-proto trace.proto).
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
/// `STATUS_CODE_OK`.
const STATUS_OK: u8 = 1;

/// Why spans could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SpanError {
    /// The bundle's start is not RFC 3339.
    #[error(
        "the bundle's manifest `date` {value:?} is not an RFC 3339 time, so the spans have no start; it was edited or written by another tool"
    )]
    BadStart {
        /// The value.
        value: String,
    },
    /// A turn's wall time is not recorded.
    #[error(
        "turn {turn} has no recorded `elapsed_ms`, so its span has no end; OTLP spans need both (the ATIF export does not)"
    )]
    NoDuration {
        /// 1-based turn.
        turn: usize,
    },
}

/// The `ExportTraceServiceRequest` document.
///
/// # Errors
/// [`SpanError`] when a start or a duration is not recorded.
pub fn spans(c: &Conversation) -> Result<Value, SpanError> {
    let start: jiff::Timestamp = c.started.parse().map_err(|_| SpanError::BadStart {
        value: c.started.clone(),
    })?;
    let start_ns = start.as_nanosecond();
    let trace = hex_id(&format!("trace {} {}", c.run_id, c.cell), 16);
    let root_id = hex_id(&format!("{trace} root"), 8);
    let agent = c.harness.as_deref().unwrap_or("studyloop");
    let mut at = start_ns;
    let mut spans = Vec::new();
    for (i, t) in c.turns.iter().enumerate() {
        let ms = t.elapsed_ms.ok_or(SpanError::NoDuration { turn: i + 1 })?;
        let end = at + i128::from(ms) * 1_000_000;
        let input = json!([{"role": "user", "parts": [{"type": "text", "content": t.learner}]}]);
        let output = json!([{"role": "assistant", "parts": [{"type": "text", "content": t.reply}], "finish_reason": "stop"}]);
        spans.push(json!({
            "traceId": trace,
            "spanId": hex_id(&format!("{trace} turn {i}"), 8),
            "parentSpanId": root_id,
            "name": format!("invoke_agent {agent}"),
            "kind": KIND_CLIENT,
            "startTimeUnixNano": at.to_string(),
            "endTimeUnixNano": end.to_string(),
            "attributes": [
                attr("gen_ai.operation.name", "invoke_agent"),
                attr("gen_ai.agent.name", agent),
                attr("gen_ai.conversation.id", &c.run_id),
                attr("gen_ai.input.messages", &input.to_string()),
                attr("gen_ai.output.messages", &output.to_string()),
                int_attr("studyloop.turn", i + 1),
            ],
            "status": {"code": STATUS_OK},
        }));
        at = end;
    }
    let mut root_attrs = vec![
        attr("gen_ai.conversation.id", &c.run_id),
        attr("gen_ai.agent.name", agent),
        attr("studyloop.cell", &c.cell),
        attr("studyloop.tier", &c.tier),
        attr("studyloop.surface", &c.surface),
        attr("studyloop.manifest_sha256", &c.manifest_sha256),
        int_attr("studyloop.turns", c.turns.len()),
    ];
    if let Some(v) = &c.harness_version {
        root_attrs.push(attr("studyloop.harness_version", v));
    }
    spans.insert(
        0,
        json!({
            "traceId": trace,
            "spanId": root_id,
            "name": format!("conversation {}", c.cell),
            "kind": KIND_INTERNAL,
            "startTimeUnixNano": start_ns.to_string(),
            "endTimeUnixNano": at.to_string(),
            "attributes": root_attrs,
            "status": {"code": STATUS_OK},
        }),
    );
    Ok(json!({
        "resourceSpans": [{
            "resource": {"attributes": [
                attr("service.name", "studyloop-uat"),
                attr("service.version", env!("CARGO_PKG_VERSION")),
            ]},
            "scopeSpans": [{
                "scope": {"name": "studyloop-uat export-trajectory", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }],
    }))
}

fn attr(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

fn int_attr(key: &str, value: usize) -> Value {
    json!({"key": key, "value": {"intValue": value.to_string()}})
}

/// A stable, non-zero id of `bytes` bytes (hex) derived from `seed`: the same
/// bundle exports the same ids, so two exports of it are one trace.
fn hex_id(seed: &str, bytes: usize) -> String {
    let digest = studyloop_acceptance::evidence::hash_bytes(seed.as_bytes());
    let id = &digest[..bytes * 2];
    if id.bytes().all(|b| b == b'0') {
        // An all-zero id is invalid in OTLP; a sha256 prefix of zeros is
        // astronomically unlikely, but a valid id costs one line.
        return format!("{}1", &id[..id.len() - 1]);
    }
    id.to_owned()
}
