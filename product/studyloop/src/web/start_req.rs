//! What `POST /api/session/start` is given and answers with, apart from the route: the
//! validated request ([`StartReq`]), the JSON error ([`ApiError`], the envelope's) and the persona mode
//! a purpose gets. A leaf both the route (`start`) and its preparation (`start_prep`)
//! import, so neither imports the other for a type.

use axum::http::StatusCode;

use crate::adapters::Harness;
use crate::persona::Mode;
use crate::session::Energy;

pub use crate::envelope::{ApiError, Code};

/// A failure whose code follows from its status (the routes' common case).
pub(crate) fn err(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError::new(status, Code::for_status(status), message)
}

/// A validated start request.
#[derive(Debug, Clone)]
pub struct StartReq {
    /// Trimmed topic.
    pub topic: String,
    /// 1..10.
    pub energy: Energy,
    /// The harness.
    pub harness: Harness,
    /// `pty` or `acp`.
    pub transport: &'static str,
    /// `study`, `focus` or `planning`.
    pub purpose: &'static str,
    /// `study` or `body-double`.
    pub origin: &'static str,
    /// Carry the last ended session on this topic into the persona.
    pub resume: bool,
    /// A labelled data block appended to the persona (Labs: the drill this
    /// session is started for, `web::labs`); never set from the start body.
    pub notice: Option<String>,
}

/// The purposes a web start accepts (`/api/session/options` lists them).
pub const PURPOSES: [&str; 3] = ["study", "focus", "planning"];

/// The session's mode: a study session (the Dashboard's "Start a study session")
/// gets the study persona, the one `studyloop study` gives on the command line;
/// planning sessions the plan-architect persona; `focus` (the API's default, kept
/// for scripts that send no purpose) the focus persona.
#[must_use]
pub fn mode_for(purpose: &str) -> Mode {
    match purpose {
        "planning" => Mode::PlanArchitect,
        "study" => Mode::Study,
        _ => Mode::Focus,
    }
}
