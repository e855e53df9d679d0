//! The roles script (`--script roles.json`): canned replies per role, so one stub
//! binary can play the mentor's model, a learner model for the gateway and direct
//! actors, or a judge seat for UAT grading.
//!
//! Format (version 1, strict; unknown keys are errors):
//! ```json
//! { "version": 1,
//!   "mentor":  ["…"], "learner": ["…"], "judge": ["{\"score\": 3}"],
//!   "by_model": { "seat-b": { "judge": ["…"] } } }
//! ```
//! Every list is optional but, when present, non-empty. `by_model` overrides a
//! role's list for requests whose `model` field equals the key, so one stub can
//! serve several council seats that disagree.
//!
//! Pick rule: the reply to a request holding `k` assistant messages (the model's
//! own earlier replies) is entry `k mod len`. A fresh conversation gets entry 0,
//! its second turn entry 1, and so on, cycling; one-shot requests (judges) always
//! get entry 0 unless a per-model list says otherwise. Replies are sent verbatim.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Which side the stub plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The mentor's model (default): `MENTOR-REPLY` lines unless scripted.
    Mentor,
    /// A learner model behind the gateway or direct actors.
    Learner,
    /// A UAT judge seat returning canned JSON verdicts.
    Judge,
}

impl Role {
    /// Every role, as the CLI accepts them.
    pub const ALL: [Role; 3] = [Role::Mentor, Role::Learner, Role::Judge];

    /// The role's word in `--role` and the script.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Mentor => "mentor",
            Role::Learner => "learner",
            Role::Judge => "judge",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown role {s:?}: expected one of mentor, learner, judge"))
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Lists {
    mentor: Option<Vec<String>>,
    learner: Option<Vec<String>>,
    judge: Option<Vec<String>>,
}

impl Lists {
    fn get(&self, role: Role) -> Option<&[String]> {
        match role {
            Role::Mentor => self.mentor.as_deref(),
            Role::Learner => self.learner.as_deref(),
            Role::Judge => self.judge.as_deref(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    version: u32,
    mentor: Option<Vec<String>>,
    learner: Option<Vec<String>>,
    judge: Option<Vec<String>>,
    #[serde(default)]
    by_model: BTreeMap<String, Lists>,
}

/// A bad roles script.
#[derive(Debug, thiserror::Error)]
pub enum RolesError {
    /// The file could not be read.
    #[error("cannot read the roles script {path}: {source}")]
    Read {
        /// The path given to `--script`.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The JSON does not match the version-1 shape.
    #[error(
        "roles script {path} is not a valid version-1 roles file: {detail} \
         (expected {{\"version\":1,\"mentor\":[..],\"learner\":[..],\"judge\":[..],\"by_model\":{{..}}}})"
    )]
    Invalid {
        /// The path given to `--script`.
        path: PathBuf,
        /// What the parser rejected.
        detail: RolesParseError,
    },
}

/// What [`RolesScript::parse`] rejected (the file-level error adds the path
/// and the expected shape).
#[derive(Debug, thiserror::Error)]
pub enum RolesParseError {
    /// Not JSON, or JSON of the wrong shape (a wrong type, an unknown key).
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The top level is not an object.
    #[error("the top level must be a JSON object")]
    NotObject,
    /// A version other than 1.
    #[error("unsupported version {0} (only version 1 exists)")]
    Version(u32),
    /// A role's list is present but empty.
    #[error("the {role} list in {scope} is empty; remove it or add a reply")]
    EmptyList {
        /// The role.
        role: Role,
        /// `(top level)` or the model name.
        scope: String,
    },
}

/// A parsed, validated roles script.
#[derive(Debug, Clone)]
pub struct RolesScript {
    lists: Lists,
    by_model: BTreeMap<String, Lists>,
}

impl RolesScript {
    /// Reads and validates a roles file.
    pub fn load(path: &Path) -> Result<Self, RolesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RolesError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text).map_err(|detail| RolesError::Invalid {
            path: path.to_owned(),
            detail,
        })
    }

    /// Parses roles JSON; the error says what is wrong.
    ///
    /// # Errors
    /// [`RolesParseError`] naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, RolesParseError> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        if !value.is_object() {
            return Err(RolesParseError::NotObject);
        }
        let raw: RawScript = serde_json::from_value(value)?;
        if raw.version != 1 {
            return Err(RolesParseError::Version(raw.version));
        }
        let lists = Lists {
            mentor: raw.mentor,
            learner: raw.learner,
            judge: raw.judge,
        };
        let all = std::iter::once(("(top level)", &lists))
            .chain(raw.by_model.iter().map(|(k, v)| (k.as_str(), v)));
        for (scope, lists) in all {
            for role in Role::ALL {
                if lists.get(role).is_some_and(<[String]>::is_empty) {
                    return Err(RolesParseError::EmptyList {
                        role,
                        scope: scope.to_owned(),
                    });
                }
            }
        }
        Ok(Self {
            lists,
            by_model: raw.by_model,
        })
    }

    /// Whether the script has any list for `role` (top level or per model).
    pub fn has_role(&self, role: Role) -> bool {
        self.lists.get(role).is_some() || self.by_model.values().any(|l| l.get(role).is_some())
    }

    /// The canned reply for `role`, a request for `model` holding
    /// `assistant_messages` earlier replies (see the module doc's pick rule).
    pub fn pick(&self, role: Role, model: Option<&str>, assistant_messages: u64) -> Option<&str> {
        let list = model
            .and_then(|m| self.by_model.get(m))
            .and_then(|l| l.get(role))
            .or_else(|| self.lists.get(role))?;
        let len = list.len() as u64;
        let index = usize::try_from(assistant_messages % len).ok()?;
        list.get(index).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_cycle_by_assistant_messages_and_models_override() {
        let script = RolesScript::parse(
            r#"{"version":1,"learner":["a","b"],"judge":["j"],"by_model":{"seat-b":{"judge":["jb"]}}}"#,
        )
        .unwrap();
        assert_eq!(script.pick(Role::Learner, None, 0), Some("a"));
        assert_eq!(script.pick(Role::Learner, None, 1), Some("b"));
        assert_eq!(script.pick(Role::Learner, None, 2), Some("a"));
        assert_eq!(script.pick(Role::Judge, Some("seat-a"), 0), Some("j"));
        assert_eq!(script.pick(Role::Judge, Some("seat-b"), 0), Some("jb"));
        assert_eq!(script.pick(Role::Mentor, None, 0), None);
        assert!(script.has_role(Role::Judge) && !script.has_role(Role::Mentor));
    }

    #[test]
    fn rejects_bad_scripts_with_a_reason() {
        for (text, needle) in [
            (r#"{"version":2}"#, "unsupported version 2"),
            (r#"{"version":1,"mentors":["x"]}"#, "unknown field"),
            (
                r#"{"version":1,"judge":[]}"#,
                "judge list in (top level) is empty",
            ),
            (
                r#"{"version":1,"by_model":{"m":{"judge":[1]}}}"#,
                "invalid type",
            ),
            (
                r#"{"version":1,"by_model":{"m":{"judges":["x"]}}}"#,
                "unknown field",
            ),
            (r#"[]"#, "JSON object"),
            (r#"{"judge":["x"]}"#, "version"),
        ] {
            let err = RolesScript::parse(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
