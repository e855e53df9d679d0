//! The one JSON envelope of every machine-readable answer (issue 30 item 1, seed 001
//! "CLI and JSON boundary"): a success is `{"schema_version": 1, "command": NAME,
//! "result": ...}`, a failure `{"error": {"code", "message", "details"}}` with a
//! non-zero exit (CLI) or the HTTP status (web). The codes are the closed set
//! [`Code`]; `docs/schemas/envelope.schema.json` publishes both shapes and a test
//! keeps its code list equal to this enum.
//!
//! Only this module builds the two shapes, so a script reads every door the same
//! way. The web's error type [`ApiError`] lives here too (a route returns it and
//! axum renders the failure shape with its status).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The version of the success shape; bumped only on an incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Why a request failed: the closed set a script may match on. The serde name
/// (snake case) is the wire `code`; the README lists what each means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// A field, argument or body is malformed or out of range.
    InvalidInput,
    /// The named thing (plan, drill, session, file) does not exist.
    NotFound,
    /// The request contradicts current state (a duplicate, a stale edit).
    Conflict,
    /// A plan cannot be activated yet (blockers in `details`).
    NotReady,
    /// A password is required or was wrong.
    Unauthorized,
    /// The console token, Origin or CSRF rule refused the request.
    Forbidden,
    /// The Host header is not one this console answers to.
    MisdirectedRequest,
    /// The body is not `application/json`.
    UnsupportedMediaType,
    /// The body is over the size bound.
    PayloadTooLarge,
    /// The request body did not arrive in time.
    RequestTimeout,
    /// Too many failures; `details.retry_after_secs` says when to retry.
    RateLimited,
    /// No study session is live.
    NoActiveSession,
    /// A session is already live (end it or reattach first).
    SessionActive,
    /// The request names another session than the live one.
    SessionMismatch,
    /// No memory scope is configured (`details` says how to set one).
    ScopeUnconfigured,
    /// A needed program or service is not available (an agent not on PATH).
    Unavailable,
    /// The agent behind the session answered with an error.
    UpstreamFailed,
    /// Anything else: a bug or an I/O failure, the message says which.
    Internal,
}

impl Code {
    /// Every code, in the order the schema lists them.
    pub const ALL: [Self; 18] = [
        Self::InvalidInput,
        Self::NotFound,
        Self::Conflict,
        Self::NotReady,
        Self::Unauthorized,
        Self::Forbidden,
        Self::MisdirectedRequest,
        Self::UnsupportedMediaType,
        Self::PayloadTooLarge,
        Self::RequestTimeout,
        Self::RateLimited,
        Self::NoActiveSession,
        Self::SessionActive,
        Self::SessionMismatch,
        Self::ScopeUnconfigured,
        Self::Unavailable,
        Self::UpstreamFailed,
        Self::Internal,
    ];

    /// The code a bare HTTP status stands for, when the route has no more precise one.
    #[must_use]
    pub fn for_status(status: StatusCode) -> Self {
        match status.as_u16() {
            400 | 422 => Self::InvalidInput,
            401 => Self::Unauthorized,
            403 => Self::Forbidden,
            404 => Self::NotFound,
            408 => Self::RequestTimeout,
            409 => Self::Conflict,
            413 => Self::PayloadTooLarge,
            415 => Self::UnsupportedMediaType,
            421 => Self::MisdirectedRequest,
            429 => Self::RateLimited,
            502 => Self::UpstreamFailed,
            503 => Self::Unavailable,
            _ => Self::Internal,
        }
    }

    /// The wire name (`"not_found"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid_input",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::NotReady => "not_ready",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::MisdirectedRequest => "misdirected_request",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::PayloadTooLarge => "payload_too_large",
            Self::RequestTimeout => "request_timeout",
            Self::RateLimited => "rate_limited",
            Self::NoActiveSession => "no_active_session",
            Self::SessionActive => "session_active",
            Self::SessionMismatch => "session_mismatch",
            Self::ScopeUnconfigured => "scope_unconfigured",
            Self::Unavailable => "unavailable",
            Self::UpstreamFailed => "upstream_failed",
            Self::Internal => "internal",
        }
    }
}

/// A failure: what the `error` object holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The closed-set reason.
    pub code: Code,
    /// One line for a person: what was wrong and how to fix it.
    pub message: String,
    /// Structured extras (accepted values, the live session, blockers) or null.
    pub details: Option<Value>,
}

impl Failure {
    /// A failure without details.
    #[must_use]
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// The same failure with `details` (an empty object is kept as null).
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = match details {
            Value::Object(m) if m.is_empty() => None,
            Value::Null => None,
            v => Some(v),
        };
        self
    }

    /// The failure shape: `{"error": {"code", "message", "details"}}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({ "error": {
            "code": self.code,
            "message": self.message,
            "details": self.details,
        }})
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

/// The success shape: `{"schema_version": 1, "command": NAME, "result": RESULT}`.
#[must_use]
pub fn success(command: &str, result: Value) -> Value {
    json!({ "schema_version": SCHEMA_VERSION, "command": command, "result": result })
}

/// What a CLI `--json` prints for a success: the envelope around `result`, one
/// pretty object and a newline (docs/using-studyloop.md "The JSON envelope"). Here,
/// not in `cli`, so the command modules that print it (plans, modules) need no
/// import of the CLI that dispatches to them.
#[must_use]
pub fn success_text(command: &str, result: &impl Serialize) -> String {
    let v = match serde_json::to_value(result) {
        Ok(r) => success(command, r),
        Err(e) => Failure::new(
            Code::Internal,
            format!("cannot serialise the `{command}` result: {e}"),
        )
        .to_json(),
    };
    format!("{v:#}\n")
}

/// A web success: `status` with the success shape around `result`, the one way a
/// `/api/*` route answers JSON (the names are listed in docs/using-studyloop.md
/// "The JSON envelope" and in the schema's `command` enum).
#[must_use]
pub fn respond(status: StatusCode, command: &str, result: Value) -> Response {
    (status, Json(success(command, result))).into_response()
}

/// A web failure: the HTTP status and the [`Failure`] it carries.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status of the answer.
    pub status: StatusCode,
    /// The body.
    pub failure: Failure,
}

impl ApiError {
    /// A failure with `status`, `code` and `message`, no details.
    #[must_use]
    pub fn new(status: StatusCode, code: Code, message: impl Into<String>) -> Self {
        Self {
            status,
            failure: Failure::new(code, message),
        }
    }

    /// The same failure with `details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.failure = self.failure.with_details(details);
        self
    }

    /// The message alone (for logs and rollback reasons).
    #[must_use]
    pub fn message(&self) -> &str {
        &self.failure.message
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.failure.to_json())).into_response()
    }
}

/// The published schema (docs/schemas/envelope.schema.json), for the tests.
#[cfg(test)]
pub(crate) fn published() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schemas/envelope.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the schema")).expect("JSON")
}

/// The published schema compiled with `boon` (JSON Schema 2020-12), for the tests
/// that check every door's answers against it.
#[cfg(test)]
pub(crate) fn validator() -> (boon::Schemas, boon::SchemaIndex) {
    let mut c = boon::Compiler::new();
    c.set_default_draft(boon::Draft::V2020_12);
    c.add_resource("urn:test:envelope", published())
        .expect("resource");
    let mut schemas = boon::Schemas::new();
    let idx = c
        .compile("urn:test:envelope", &mut schemas)
        .expect("compiles");
    (schemas, idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> (boon::Schemas, boon::SchemaIndex, Value) {
        let (schemas, idx) = validator();
        (schemas, idx, published())
    }

    #[test]
    fn the_schema_lists_exactly_the_closed_code_set() {
        let (_, _, s) = schema();
        let listed: Vec<String> = s["$defs"]["code"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        let ours: Vec<String> = Code::ALL.iter().map(|c| c.as_str().to_owned()).collect();
        assert_eq!(listed, ours);
        for c in Code::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), json!(c.as_str()));
        }
    }

    #[test]
    fn both_shapes_validate_and_near_misses_do_not() {
        let (schemas, idx, _) = schema();
        let good = [
            success("plan.list", json!({"plans": []})),
            success("session.end", json!(null)),
            Failure::new(Code::NotFound, "no plan `x`").to_json(),
            Failure::new(Code::Conflict, "busy")
                .with_details(json!({"active": true}))
                .to_json(),
        ];
        for v in &good {
            assert!(schemas.validate(v, idx).is_ok(), "{v}");
        }
        let bad = [
            json!({"error": "No active session"}),
            json!({"error": "not_found", "message": "x"}),
            json!({"error": {"code": "nope", "message": "x", "details": null}}),
            json!({"error": {"code": "internal", "message": "x"}}),
            json!({"schema_version": 2, "command": "x", "result": 1}),
            json!({"schema_version": 1, "result": 1}),
            success("plans.list", json!({"plans": []})),
            json!({"schema_version": 1, "command": "now", "result": 1, "error": null}),
            json!({"plans": []}),
        ];
        for v in &bad {
            assert!(schemas.validate(v, idx).is_err(), "accepted {v}");
        }
    }

    #[test]
    fn empty_details_are_null_not_an_empty_object() {
        let f = Failure::new(Code::Internal, "x").with_details(json!({}));
        assert_eq!(f.to_json()["error"]["details"], Value::Null);
    }
}
