//! The `STUB_ACP_*` environment knobs that script `studyloop-stub-acp`, parsed
//! once into a [`Knobs`] value.
//!
//! This is the whole configuration surface of the stub agent; the agent loop in
//! `agent.rs` never reads the environment itself. Malformed JSON in a knob is an
//! error naming the variable, what it expected and how to fix it, so a test
//! that sets a knob wrongly fails loudly instead of running a different script.

use serde_json::{Map, Value, json};

/// Frames written to stdout before anything is read (JSON array of objects).
pub const STUB_ACP_PRE_INIT_NOTIFS: &str = "STUB_ACP_PRE_INIT_NOTIFS";
/// The `initialize` result (JSON object).
pub const STUB_ACP_INIT_RESULT: &str = "STUB_ACP_INIT_RESULT";
/// The `session/new` result (JSON object with a string `sessionId`).
pub(crate) const STUB_ACP_NEW_SESSION_RESULT: &str = "STUB_ACP_NEW_SESSION_RESULT";
/// `session/update` payloads sent right after the `session/new` reply (JSON array).
pub(crate) const STUB_ACP_POST_NEW_SESSION_UPDATES: &str = "STUB_ACP_POST_NEW_SESSION_UPDATES";
/// `session/update` payloads sent before every prompt result (JSON array).
pub const STUB_ACP_PROMPT_UPDATES: &str = "STUB_ACP_PROMPT_UPDATES";
/// One update list per prompt (JSON array of arrays); the last repeats.
pub const STUB_ACP_PROMPT_UPDATES_SEQ: &str = "STUB_ACP_PROMPT_UPDATES_SEQ";
/// The prompt's `stopReason` (plain string, default `end_turn`), or a comma-separated list
/// of them, one per prompt, the last repeating (`end_turn,max_tokens,refusal`).
pub const STUB_ACP_PROMPT_STOP_REASON: &str = "STUB_ACP_PROMPT_STOP_REASON";
/// Answer every prompt with a JSON-RPC error instead of a result.
pub const STUB_ACP_PROMPT_ERROR: &str = "STUB_ACP_PROMPT_ERROR";
/// The `stopReason` of a prompt that a `session/cancel` interrupted (default `cancelled`).
pub(crate) const STUB_ACP_CANCEL_STOP_REASON: &str = "STUB_ACP_CANCEL_STOP_REASON";
/// `1`: reply to `initialize`, then exit with status 17.
pub const STUB_ACP_CRASH_AFTER_INIT: &str = "STUB_ACP_CRASH_AFTER_INIT";
/// `1`: exit (status 0) once a `session/cancel` has been handled.
pub const STUB_ACP_EXIT_ON_CANCEL: &str = "STUB_ACP_EXIT_ON_CANCEL";
/// A whole number N: exit (status 0) right after answering the N-th prompt.
pub const STUB_ACP_EXIT_AFTER_PROMPTS: &str = "STUB_ACP_EXIT_AFTER_PROMPTS";
/// `1`: every prompt asks `session/request_permission` and waits for the answer.
pub const STUB_ACP_EMIT_PERMISSION_REQUEST: &str = "STUB_ACP_EMIT_PERMISSION_REQUEST";
/// Milliseconds to sleep before each frame the stub writes.
pub const STUB_ACP_DELAY_MS: &str = "STUB_ACP_DELAY_MS";
/// `1`: a prompt does not finish until a `session/cancel` arrives.
pub const STUB_ACP_PROMPT_WAIT_FOR_CANCEL: &str = "STUB_ACP_PROMPT_WAIT_FOR_CANCEL";
/// Lines written verbatim during every prompt (JSON array of strings), e.g. a malformed frame.
pub const STUB_ACP_PROMPT_RAW_LINES: &str = "STUB_ACP_PROMPT_RAW_LINES";
/// A path (ACP paths are absolute; a relative one tests the client's refusal): every prompt
/// writes it with `fs/write_text_file`, reads it back with `fs/read_text_file` and reports
/// the outcome as an `agent_message_chunk`.
pub const STUB_ACP_FS_PATH: &str = "STUB_ACP_FS_PATH";
/// A file the stub appends every frame it receives to (JSON lines).
pub const STUB_ACP_LOG: &str = "STUB_ACP_LOG";

/// Every knob with a one-line meaning, for `--help`.
pub const KNOBS: &[(&str, &str)] = &[
    (
        STUB_ACP_PRE_INIT_NOTIFS,
        "JSON array of frames written before anything is read",
    ),
    (STUB_ACP_INIT_RESULT, "JSON object: the initialize result"),
    (
        STUB_ACP_NEW_SESSION_RESULT,
        "JSON object: the session/new result (string sessionId)",
    ),
    (
        STUB_ACP_POST_NEW_SESSION_UPDATES,
        "JSON array of updates sent after session/new",
    ),
    (
        STUB_ACP_PROMPT_UPDATES,
        "JSON array of updates sent before every prompt result",
    ),
    (
        STUB_ACP_PROMPT_UPDATES_SEQ,
        "JSON array of arrays, one per prompt, last repeats",
    ),
    (
        STUB_ACP_PROMPT_STOP_REASON,
        "prompt stopReason, or a comma list, one per prompt, last repeats (default end_turn)",
    ),
    (
        STUB_ACP_PROMPT_ERROR,
        "answer prompts with this error: {\"code\":N,\"message\":S} or text",
    ),
    (
        STUB_ACP_CANCEL_STOP_REASON,
        "stopReason of a cancelled prompt (default cancelled)",
    ),
    (
        STUB_ACP_CRASH_AFTER_INIT,
        "1: exit 17 right after the initialize reply",
    ),
    (
        STUB_ACP_EXIT_ON_CANCEL,
        "1: exit 0 after handling session/cancel",
    ),
    (
        STUB_ACP_EXIT_AFTER_PROMPTS,
        "N: exit 0 right after answering the N-th prompt",
    ),
    (
        STUB_ACP_EMIT_PERMISSION_REQUEST,
        "1: each prompt requests permission and waits",
    ),
    (
        STUB_ACP_DELAY_MS,
        "milliseconds slept before each written frame",
    ),
    (
        STUB_ACP_PROMPT_WAIT_FOR_CANCEL,
        "1: a prompt only ends when session/cancel arrives",
    ),
    (
        STUB_ACP_PROMPT_RAW_LINES,
        "JSON array of strings written verbatim during each prompt",
    ),
    (
        STUB_ACP_FS_PATH,
        "path written then read back through the client's fs methods",
    ),
    (
        STUB_ACP_LOG,
        "file that receives every inbound frame as a JSON line",
    ),
];

/// What went wrong reading a knob.
#[derive(Debug, thiserror::Error)]
pub enum KnobError {
    /// The value is not JSON of the expected shape.
    #[error("{name}={value:?} is not {expected}: {detail}; fix the variable or unset it")]
    Malformed {
        /// The variable.
        name: &'static str,
        /// Its value, as given.
        value: String,
        /// The shape the knob needs.
        expected: &'static str,
        /// What the parser said.
        detail: String,
    },
}

/// The parsed script of one stub agent run.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Frames written before anything is read.
    pub pre_init_notifs: Vec<Value>,
    /// The `initialize` result.
    pub init_result: Value,
    /// The `session/new` result.
    pub new_session_result: Value,
    /// Updates sent after the `session/new` reply.
    pub post_new_session_updates: Vec<Value>,
    /// Update lists per prompt; `None` means echo the prompt text back.
    pub prompt_updates_seq: Option<Vec<Vec<Value>>>,
    /// The prompts' stop reasons, one per prompt; the last repeats (never empty).
    pub stop_reasons: Vec<String>,
    /// The error every prompt answers with, when set.
    pub prompt_error: Option<Value>,
    /// The stop reason of a cancelled prompt.
    pub cancel_stop_reason: String,
    /// Exit 17 after the initialize reply.
    pub crash_after_init: bool,
    /// Exit after a handled `session/cancel`.
    pub exit_on_cancel: bool,
    /// Exit right after answering this many prompts.
    pub exit_after_prompts: Option<usize>,
    /// Ask for permission during every prompt.
    pub emit_permission_request: bool,
    /// Sleep before each written frame.
    pub delay_ms: u64,
    /// Hold every prompt open until cancelled.
    pub prompt_wait_for_cancel: bool,
    /// Verbatim lines written during every prompt.
    pub prompt_raw_lines: Vec<String>,
    /// Path for the fs round trip.
    pub fs_path: Option<String>,
    /// Inbound frame log.
    pub log: Option<String>,
}

impl Knobs {
    /// Reads every knob through `lookup` (normally `std::env::var`), so tests can
    /// feed a map instead of the process environment.
    ///
    /// # Errors
    /// [`KnobError::Malformed`] for the first knob whose value has the wrong shape.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, KnobError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let flag = |name: &str| get(name).is_some_and(|v| v.trim() == "1");
        let prompt_updates_seq = match (
            get(STUB_ACP_PROMPT_UPDATES_SEQ),
            get(STUB_ACP_PROMPT_UPDATES),
        ) {
            (Some(seq), _) => Some(parse_seq(&seq)?),
            (None, Some(list)) => Some(vec![parse_array(STUB_ACP_PROMPT_UPDATES, &list)?]),
            (None, None) => None,
        };
        let exit_after_prompts = match get(STUB_ACP_EXIT_AFTER_PROMPTS) {
            None => None,
            Some(v) => Some(v.trim().parse().map_err(|e: std::num::ParseIntError| {
                malformed(
                    STUB_ACP_EXIT_AFTER_PROMPTS,
                    &v,
                    "a whole number of prompts",
                    e,
                )
            })?),
        };
        let delay_ms = match get(STUB_ACP_DELAY_MS) {
            None => 0,
            Some(v) => v.trim().parse().map_err(|e: std::num::ParseIntError| {
                malformed(STUB_ACP_DELAY_MS, &v, "a whole number of milliseconds", e)
            })?,
        };
        Ok(Self {
            pre_init_notifs: opt_array(get(STUB_ACP_PRE_INIT_NOTIFS), STUB_ACP_PRE_INIT_NOTIFS)?,
            init_result: match get(STUB_ACP_INIT_RESULT) {
                Some(v) => parse_object(STUB_ACP_INIT_RESULT, &v)?,
                None => default_init_result(),
            },
            new_session_result: match get(STUB_ACP_NEW_SESSION_RESULT) {
                Some(v) => parse_new_session(&v)?,
                None => json!({"sessionId": "stub-session-1"}),
            },
            post_new_session_updates: opt_array(
                get(STUB_ACP_POST_NEW_SESSION_UPDATES),
                STUB_ACP_POST_NEW_SESSION_UPDATES,
            )?,
            prompt_updates_seq,
            stop_reasons: get(STUB_ACP_PROMPT_STOP_REASON)
                .map(|v| {
                    v.split(',')
                        .map(|r| r.trim().to_owned())
                        .filter(|r| !r.is_empty())
                        .collect::<Vec<_>>()
                })
                .filter(|list| !list.is_empty())
                .unwrap_or_else(|| vec!["end_turn".into()]),
            prompt_error: get(STUB_ACP_PROMPT_ERROR)
                .map(|v| parse_error(&v))
                .transpose()?,
            cancel_stop_reason: get(STUB_ACP_CANCEL_STOP_REASON)
                .unwrap_or_else(|| "cancelled".into()),
            crash_after_init: flag(STUB_ACP_CRASH_AFTER_INIT),
            exit_on_cancel: flag(STUB_ACP_EXIT_ON_CANCEL),
            exit_after_prompts,
            emit_permission_request: flag(STUB_ACP_EMIT_PERMISSION_REQUEST),
            delay_ms,
            prompt_wait_for_cancel: flag(STUB_ACP_PROMPT_WAIT_FOR_CANCEL),
            prompt_raw_lines: match get(STUB_ACP_PROMPT_RAW_LINES) {
                None => Vec::new(),
                Some(v) => serde_json::from_str(&v).map_err(|e| {
                    malformed(STUB_ACP_PROMPT_RAW_LINES, &v, "a JSON array of strings", e)
                })?,
            },
            fs_path: get(STUB_ACP_FS_PATH),
            log: get(STUB_ACP_LOG),
        })
    }

    /// The `stopReason` of the prompt numbered `n` (1-based): the n-th of the
    /// list, the last one once it runs out.
    #[must_use]
    pub(crate) fn stop_reason_for_prompt(&self, n: usize) -> &str {
        let idx = n
            .saturating_sub(1)
            .min(self.stop_reasons.len().saturating_sub(1));
        self.stop_reasons
            .get(idx)
            .map_or("end_turn", String::as_str)
    }

    /// The updates for the prompt numbered `n` (1-based): the n-th list, the last
    /// one once the sequence runs out; `None` when no script was given (echo mode).
    #[must_use]
    pub(crate) fn updates_for_prompt(&self, n: usize) -> Option<&[Value]> {
        let seq = self.prompt_updates_seq.as_ref()?;
        let idx = n.saturating_sub(1).min(seq.len().saturating_sub(1));
        Some(seq.get(idx).map_or(&[][..], Vec::as_slice))
    }
}

/// The `initialize` result when no knob overrides it; names the stub as a test double.
fn default_init_result() -> Value {
    json!({
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": false,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false}
        },
        "authMethods": [],
        "agentInfo": {"name": "studyloop-stub-acp (test double)", "version": env!("CARGO_PKG_VERSION")}
    })
}

fn malformed(
    name: &'static str,
    value: &str,
    expected: &'static str,
    detail: impl std::fmt::Display,
) -> KnobError {
    KnobError::Malformed {
        name,
        value: value.to_owned(),
        expected,
        detail: detail.to_string(),
    }
}

fn parse_object(name: &'static str, v: &str) -> Result<Value, KnobError> {
    match serde_json::from_str::<Value>(v) {
        Ok(obj @ Value::Object(_)) => Ok(obj),
        Ok(other) => Err(malformed(name, v, "a JSON object", format!("got {other}"))),
        Err(e) => Err(malformed(name, v, "a JSON object", e)),
    }
}

fn parse_new_session(v: &str) -> Result<Value, KnobError> {
    let obj = parse_object(STUB_ACP_NEW_SESSION_RESULT, v)?;
    if obj.get("sessionId").is_some_and(Value::is_string) {
        Ok(obj)
    } else {
        Err(malformed(
            STUB_ACP_NEW_SESSION_RESULT,
            v,
            "a JSON object with a string sessionId",
            "sessionId missing or not a string",
        ))
    }
}

fn parse_array(name: &'static str, v: &str) -> Result<Vec<Value>, KnobError> {
    match serde_json::from_str::<Value>(v) {
        Ok(Value::Array(items)) if items.iter().all(Value::is_object) => Ok(items),
        Ok(other) => Err(malformed(
            name,
            v,
            "a JSON array of objects",
            format!("got {other}"),
        )),
        Err(e) => Err(malformed(name, v, "a JSON array of objects", e)),
    }
}

fn opt_array(v: Option<String>, name: &'static str) -> Result<Vec<Value>, KnobError> {
    v.map_or_else(|| Ok(Vec::new()), |v| parse_array(name, &v))
}

fn parse_seq(v: &str) -> Result<Vec<Vec<Value>>, KnobError> {
    const EXPECTED: &str = "a JSON array of arrays of objects";
    let outer: Vec<Value> = serde_json::from_str(v)
        .map_err(|e| malformed(STUB_ACP_PROMPT_UPDATES_SEQ, v, EXPECTED, e))?;
    outer
        .into_iter()
        .map(|inner| match inner {
            Value::Array(items) if items.iter().all(Value::is_object) => Ok(items),
            other => Err(malformed(
                STUB_ACP_PROMPT_UPDATES_SEQ,
                v,
                EXPECTED,
                format!("item {other} is not an array of objects"),
            )),
        })
        .collect()
}

/// `{"code": N, "message": S}` when the value looks like JSON, else the text is
/// the message of an internal error (-32603).
fn parse_error(v: &str) -> Result<Value, KnobError> {
    const EXPECTED: &str = "{\"code\": integer, \"message\": string} or plain text";
    if !v.trim_start().starts_with('{') {
        return Ok(json!({"code": -32603, "message": v}));
    }
    let obj = parse_object(STUB_ACP_PROMPT_ERROR, v)?;
    let ok = obj.get("code").is_some_and(Value::is_i64)
        && obj.get("message").is_some_and(Value::is_string);
    if ok {
        Ok(obj)
    } else {
        Err(malformed(
            STUB_ACP_PROMPT_ERROR,
            v,
            EXPECTED,
            "code or message missing",
        ))
    }
}

/// Wraps one update payload in the `session/update` notification for `session_id`.
#[must_use]
pub(crate) fn session_update(session_id: &str, update: &Value) -> Value {
    let mut params = Map::new();
    params.insert("sessionId".into(), Value::String(session_id.into()));
    params.insert("update".into(), update.clone());
    json!({"jsonrpc": "2.0", "method": "session/update", "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn knobs(pairs: &[(&str, &str)]) -> Result<Knobs, KnobError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        Knobs::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_name_the_test_double_and_echo() {
        let k = knobs(&[]).expect("empty env is valid");
        assert_eq!(k.stop_reason_for_prompt(1), "end_turn");
        assert!(k.updates_for_prompt(1).is_none());
        let name = k.init_result["agentInfo"]["name"]
            .as_str()
            .unwrap_or_default();
        assert!(name.contains("test double"), "{name}");
    }

    #[test]
    fn stop_reasons_go_one_per_prompt_and_the_last_repeats() {
        let k = knobs(&[(STUB_ACP_PROMPT_STOP_REASON, "max_tokens")]).expect("one");
        assert_eq!(k.stop_reason_for_prompt(3), "max_tokens");
        let k =
            knobs(&[(STUB_ACP_PROMPT_STOP_REASON, "end_turn, refusal,cancelled")]).expect("list");
        let got: Vec<&str> = (1..=4).map(|n| k.stop_reason_for_prompt(n)).collect();
        assert_eq!(got, ["end_turn", "refusal", "cancelled", "cancelled"]);
    }

    #[test]
    fn seq_last_list_repeats_and_wins_over_plain_list() {
        let k = knobs(&[
            (STUB_ACP_PROMPT_UPDATES, r#"[{"x":0}]"#),
            (STUB_ACP_PROMPT_UPDATES_SEQ, r#"[[{"x":1}],[{"x":2}]]"#),
        ])
        .expect("valid");
        let x = |n| k.updates_for_prompt(n).expect("scripted")[0]["x"].clone();
        assert_eq!((x(1), x(2), x(3)), (json!(1), json!(2), json!(2)));
    }

    #[test]
    fn malformed_knob_names_variable_and_value() {
        let err = knobs(&[(STUB_ACP_PROMPT_UPDATES_SEQ, "[[{]")]).expect_err("malformed");
        let msg = err.to_string();
        assert!(
            msg.contains(STUB_ACP_PROMPT_UPDATES_SEQ) && msg.contains("[[{]"),
            "{msg}"
        );
        let err =
            knobs(&[(STUB_ACP_NEW_SESSION_RESULT, r#"{"sessionId":3}"#)]).expect_err("bad id");
        assert!(err.to_string().contains("string sessionId"), "{err}");
        assert!(knobs(&[(STUB_ACP_DELAY_MS, "soon")]).is_err());
    }

    #[test]
    fn prompt_error_accepts_object_or_text() {
        let k = knobs(&[(STUB_ACP_PROMPT_ERROR, "boom")]).expect("text");
        assert_eq!(
            k.prompt_error,
            Some(json!({"code": -32603, "message": "boom"}))
        );
        let k = knobs(&[(STUB_ACP_PROMPT_ERROR, r#"{"code":-32000,"message":"m"}"#)]).expect("obj");
        assert_eq!(
            k.prompt_error.map(|e| e["code"].clone()),
            Some(json!(-32000))
        );
        assert!(knobs(&[(STUB_ACP_PROMPT_ERROR, r#"{"code":"x"}"#)]).is_err());
    }
}
