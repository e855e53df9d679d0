//! The JSON-RPC answers rmcp 3.11's stdio transport gets wrong or leaves
//! out, decided per line before rmcp sees it (issue 27 items 2-4): a line
//! that is not JSON is `-32700` with `id: null` (rmcp ignores it); a message
//! of the wrong shape is `-32600` echoing a readable `id` (rmcp sends none);
//! malformed `tools/call` params are `-32602` (rmcp falls back to its custom
//! request and says `-32601`); a batch is split under `2025-03-26` and
//! refused after it. Pure functions; `edge` does the I/O.

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ErrorCode, InitializeRequestParams,
    PaginatedRequestParams, ProtocolVersion,
};
use serde_json::{Value, json};

/// The one protocol version whose spec has JSON-RPC batches (added in
/// `2025-03-26`, removed in `2025-06-18`).
pub const BATCH_VERSION: ProtocolVersion = ProtocolVersion::V_2025_03_26;

/// What to do with one message.
#[derive(Debug)]
pub enum Verdict {
    /// Hand it to rmcp. `request_id` is set when rmcp will answer it;
    /// `initialize` marks the handshake whose answer names the version.
    Forward {
        /// The request's id (a JSON number or string).
        request_id: Option<Value>,
        /// The `initialize` request.
        initialize: bool,
    },
    /// Answer it here with this error response; rmcp never sees it.
    Answer(Value),
    /// A malformed notification: JSON-RPC never answers a notification.
    Drop,
}

/// A JSON-RPC error response.
#[must_use]
pub fn error(id: Value, code: ErrorCode, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

/// The id a response may echo: a number or a string; anything else is null.
fn readable_id(o: &serde_json::Map<String, Value>) -> Value {
    match o.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// Parse one line (without its newline); a line that is not JSON is the
/// `-32700` answer. An empty line is `Ok(None)` (skipped, as rmcp does).
///
/// # Errors
/// The Parse error response to write back.
pub fn parse_line(line: &[u8]) -> Result<Option<Value>, Value> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(line).map(Some).map_err(|e| {
        error(
            Value::Null,
            ErrorCode::PARSE_ERROR,
            &format!("Parse error: the line is not JSON ({e}); send one JSON-RPC message per line"),
        )
    })
}

/// The `-32602` text for params a method this server has cannot take, or None.
/// The types are rmcp's own, so this accepts exactly what rmcp would.
fn params_error(method: &str, params: Option<&Value>) -> Option<String> {
    let p = params.cloned().unwrap_or(Value::Null);
    let (e, want) = match method {
        "tools/call" => (
            serde_json::from_value::<CallToolRequestParams>(p).err()?,
            r#"{"name": "<tool>", "arguments": {...}}"#,
        ),
        "initialize" => (
            serde_json::from_value::<InitializeRequestParams>(p).err()?,
            r#"{"protocolVersion": "...", "capabilities": {}, "clientInfo": {"name": "...", "version": "..."}}"#,
        ),
        "tools/list" => (
            serde_json::from_value::<Option<PaginatedRequestParams>>(p).err()?,
            r#"{} or {"cursor": "..."}"#,
        ),
        _ => return None,
    };
    Some(format!(
        "Invalid params for `{method}`: {e}; send params {want}"
    ))
}

/// Check one message (a line's value, or one element of a batch).
#[must_use]
pub fn check(msg: &Value) -> Verdict {
    let Value::Object(o) = msg else {
        return Verdict::Answer(error(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            "Invalid Request: a JSON-RPC message is an object with \"jsonrpc\": \"2.0\"",
        ));
    };
    let id = readable_id(o);
    let method = o.get("method").and_then(Value::as_str);
    if let Some(m) = method
        && !id.is_null()
        && o.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && let Some(e) = params_error(m, o.get("params"))
    {
        return Verdict::Answer(error(id, ErrorCode::INVALID_PARAMS, &e));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(msg.clone()) {
        Ok(ClientJsonRpcMessage::Request(r)) => Verdict::Forward {
            initialize: r.request.method() == "initialize",
            request_id: Some(id),
        },
        Ok(_) => Verdict::Forward {
            request_id: None,
            initialize: false,
        },
        Err(_) if method.is_some() && !o.contains_key("id") => Verdict::Drop,
        Err(e) => Verdict::Answer(error(
            id,
            ErrorCode::INVALID_REQUEST,
            &format!(
                "Invalid Request: {e}; a request is {{\"jsonrpc\": \"2.0\", \"id\": <number or string>, \"method\": \"...\", \"params\": {{...}}}}"
            ),
        )),
    }
}

/// The answer to a batch when `negotiated` is not [`BATCH_VERSION`].
#[must_use]
pub fn refuse_batch(negotiated: Option<&str>) -> Value {
    let why = negotiated.map_or_else(
        || "no protocol version is negotiated yet (initialize must not be batched)".to_owned(),
        |v| format!("protocol version {v} has no JSON-RPC batches"),
    );
    error(
        Value::Null,
        ErrorCode::INVALID_REQUEST,
        &format!(
            "Invalid Request: a batch is refused: {why}; batches exist only in {BATCH_VERSION}; send one message per line"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_with_good_params_goes_to_rmcp() {
        let v = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "x"}});
        assert!(matches!(
            check(&v),
            Verdict::Forward { request_id: Some(id), initialize: false } if id == json!(3)
        ));
    }

    #[test]
    fn a_crlf_or_bom_line_is_json_and_a_blank_line_is_skipped() {
        // rmcp accepts both; the edge must not turn them into -32700.
        let v = parse_line(b"\xEF\xBB\xBF{\"a\": 1}\r");
        assert_eq!(v, Ok(Some(json!({"a": 1}))));
        assert_eq!(parse_line(b" \t\r"), Ok(None));
        let e = parse_line(b"{\"a\"").unwrap_err();
        assert_eq!(
            (e["error"]["code"].clone(), e["id"].clone()),
            (json!(-32700), Value::Null)
        );
    }
}
