//! A typed, read-only view of the product's session state: `session-state.json` in the
//! scratch config dir (the CLI lanes) or the same object from `GET /api/session/state`
//! (the web lanes and journeys). Every key the framework reads is named here once, so a
//! renamed product field breaks this file, not twenty call sites.
//!
//! The view keeps the whole object as the product wrote it ([`SessionState::raw`]) for
//! the evidence; a field that is absent, `null` or of another type reads as `None`
//! (unknown), never as a default.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::validate::CheckError;

/// The state file's name in the product's config dir (`STUDYLOOP_CONFIG_DIR`).
pub const STATE_FILE: &str = "session-state.json";

/// The topic feed `studyloop topic` (and the MCP `log_topic` tool) append to, beside
/// the state file.
pub const TOPIC_FEED: &str = "session-topics.md";

/// The `mode` of a finished session.
const MODE_ENDED: &str = "ended";

/// A string field a step needs, for [`SessionState::require`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateField {
    /// `study_session_id`: the session's row id in the product DB.
    StudySessionId,
    /// `persona_hash`: the hash the product stored for the persona it built.
    PersonaHash,
    /// `mux_session`: the tmux session the CLI started.
    MuxSession,
    /// `mux_main_pane`: the pane the harness runs in.
    MuxMainPane,
}

impl StateField {
    /// The product's key for the field.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Self::StudySessionId => "study_session_id",
            Self::PersonaHash => "persona_hash",
            Self::MuxSession => "mux_session",
            Self::MuxMainPane => "mux_main_pane",
        }
    }
}

/// The product's session state, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionState {
    raw: Value,
}

impl SessionState {
    /// Where the state file lives under the product's config dir.
    #[must_use]
    pub(crate) fn path_in(config_dir: &Path) -> PathBuf {
        config_dir.join(STATE_FILE)
    }

    /// Reads the state file at `path`.
    ///
    /// # Errors
    /// [`CheckError::State`] when it cannot be read or is not JSON.
    pub fn read(path: &Path) -> Result<Self, CheckError> {
        let state = |detail: String| CheckError::State {
            path: path.to_owned(),
            detail,
        };
        let text = std::fs::read_to_string(path).map_err(|e| state(e.to_string()))?;
        let raw = serde_json::from_str(&text).map_err(|e| state(format!("not JSON: {e}")))?;
        Ok(Self { raw })
    }

    /// The state object as the product wrote it (the evidence keeps it whole).
    #[must_use]
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    fn text(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
    }

    /// A string field a step cannot do without, or an error naming it.
    ///
    /// # Errors
    /// [`CheckError::StateField`] when it is absent, not a string or empty.
    pub(crate) fn require(&self, field: StateField) -> Result<&str, CheckError> {
        self.text(field.key())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| CheckError::StateField {
                field: field.key().to_owned(),
                state: self.raw.to_string(),
            })
    }

    /// `mode` (`starting`, `active`, `ended`, ...).
    #[must_use]
    pub fn mode(&self) -> Option<&str> {
        self.text("mode")
    }

    /// Whether `mode` says the session ended.
    #[must_use]
    pub fn is_ended(&self) -> bool {
        self.mode() == Some(MODE_ENDED)
    }

    /// `study_session_id`.
    #[must_use]
    pub fn study_session_id(&self) -> Option<&str> {
        self.text(StateField::StudySessionId.key())
    }

    /// `persona_hash`.
    #[must_use]
    pub fn persona_hash(&self) -> Option<&str> {
        self.text(StateField::PersonaHash.key())
    }

    /// `transport` of a web session (`pty`, `acp`).
    #[must_use]
    pub fn transport(&self) -> Option<&str> {
        self.text("transport")
    }

    /// `mux_main_pane`.
    #[must_use]
    pub(crate) fn mux_main_pane(&self) -> Option<&str> {
        self.text(StateField::MuxMainPane.key())
    }

    /// `started_at` (RFC 3339).
    #[must_use]
    pub fn started_at(&self) -> Option<&str> {
        self.text("started_at")
    }

    /// `ended_at` (RFC 3339), once the session ended.
    #[must_use]
    pub fn ended_at(&self) -> Option<&str> {
        self.text("ended_at")
    }

    /// `purpose` of a web session (`study`, `focus`, `planning`).
    #[must_use]
    pub fn purpose(&self) -> Option<&str> {
        self.text("purpose")
    }

    /// `topic`, as the learner typed it.
    #[must_use]
    pub fn topic(&self) -> Option<&str> {
        self.text("topic")
    }

    /// Whether the state names a study plan (`plan_id` present and not `null`).
    #[must_use]
    pub fn has_plan(&self) -> bool {
        self.raw.get("plan_id").is_some_and(|p| !p.is_null())
    }

    /// `child_pid`: the agent process the web server started.
    #[must_use]
    pub fn child_pid(&self) -> Option<i32> {
        self.raw
            .get("child_pid")
            .and_then(Value::as_i64)
            .and_then(|p| i32::try_from(p).ok())
    }
}

impl From<Value> for SessionState {
    fn from(raw: Value) -> Self {
        Self { raw }
    }
}

impl fmt::Display for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_read_as_typed_values_and_unknown_stays_none() {
        let s = SessionState::from(json!({
            "mode": "ended", "study_session_id": "s1", "mux_main_pane": "%1",
            "child_pid": 42, "plan_id": null, "ended_at": "2026-01-01T00:00:00Z"
        }));
        assert!(s.is_ended());
        assert_eq!(s.study_session_id(), Some("s1"));
        assert_eq!(s.child_pid(), Some(42));
        assert!(!s.has_plan());
        assert_eq!(s.purpose(), None);
        assert_eq!(s.require(StateField::MuxMainPane).unwrap(), "%1");
        let e = s.require(StateField::PersonaHash).unwrap_err().to_string();
        assert!(e.contains("`persona_hash`") && e.contains("\"s1\""), "{e}");
        let active =
            SessionState::from(json!({"mode": "active", "child_pid": "7", "plan_id": "p"}));
        assert!(!active.is_ended());
        assert_eq!(
            active.child_pid(),
            None,
            "a pid of the wrong type is unknown"
        );
        assert!(active.has_plan());
    }

    #[test]
    fn an_empty_field_is_missing_and_a_bad_file_names_its_path() {
        let s = SessionState::from(json!({"study_session_id": ""}));
        assert!(s.require(StateField::StudySessionId).is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = SessionState::path_in(dir.path());
        let e = SessionState::read(&path).unwrap_err().to_string();
        assert!(e.contains(STATE_FILE), "{e}");
        std::fs::write(&path, "{not json").unwrap();
        let e = SessionState::read(&path).unwrap_err().to_string();
        assert!(e.contains("not JSON"), "{e}");
        std::fs::write(&path, r#"{"mode":"active"}"#).unwrap();
        assert_eq!(SessionState::read(&path).unwrap().mode(), Some("active"));
    }
}
