//! `studyloop status --json`, read through a typed view: whether a session is live and
//! how many topics its feed holds. The keys are named here once.

use serde_json::{Value, json};

use super::cli::studyloop;
use crate::case::{Case, StepFailure};

/// What `studyloop status --json` printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    raw: Value,
}

impl Status {
    /// `active`: a session is live.
    #[must_use]
    pub fn active(&self) -> Option<bool> {
        self.raw.get("active").and_then(Value::as_bool)
    }

    /// `topics_logged`: lines in the live topic feed.
    #[must_use]
    pub fn topics_logged(&self) -> Option<u64> {
        self.raw.get("topics_logged").and_then(Value::as_u64)
    }

    /// The three fields a step records (`active`, `topics_logged`, `elapsed_seconds`), as
    /// the product printed them (`null` when absent).
    #[must_use]
    pub fn summary(&self) -> Value {
        let field = |k: &str| self.raw.get(k).cloned().unwrap_or(Value::Null);
        json!({
            "active": field("active"),
            "topics_logged": field("topics_logged"),
            "elapsed_seconds": field("elapsed_seconds"),
        })
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}

/// Runs `studyloop status --json` in `c`'s env (transcript `product/<tag>.txt`).
///
/// # Errors
/// The call failed (see [`studyloop`]) or printed no JSON.
pub fn status(c: &mut Case<'_>, tag: &str) -> Result<Status, StepFailure> {
    let out = studyloop(c, tag, &["status", "--json"])?;
    super::json_result(&out, "status")
        .map(|raw| Status { raw })
        .map_err(StepFailure::errored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_or_mistyped_fields_are_unknown() {
        let s = Status {
            raw: json!({"active": true, "topics_logged": 2}),
        };
        assert_eq!((s.active(), s.topics_logged()), (Some(true), Some(2)));
        assert_eq!(s.summary()["elapsed_seconds"], Value::Null);
        let odd = Status {
            raw: json!({"active": "yes", "topics_logged": -1}),
        };
        assert_eq!((odd.active(), odd.topics_logged()), (None, None));
    }
}
