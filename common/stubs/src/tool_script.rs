//! The tool script (`--tool-script tools.json`): scripted tool calls, so a real
//! harness can be made to call an MCP tool (the product's `studyloop.log_topic`)
//! with no model behind it.
//!
//! Format (strict; unknown keys are errors), a JSON array of steps:
//! ```json
//! [ { "trigger": "log the topic now",
//!     "tool": "log_topic",
//!     "arguments": { "topic": "joins", "status": "done", "note": "" } } ]
//! ```
//! - `trigger`: non-empty text; a step fires when the request's last real user
//!   text (`crate::reply::real_user_text`) contains it.
//! - `tool`: the tool-name *suffix*. Harnesses prefix MCP tool names their own
//!   way (`mcp__studyloop__log_topic` in Claude Code, `studyloop_log_topic` in
//!   OpenCode, `mcp__studyloop__log_topic` or a namespace in Codex), so the stub
//!   picks the first name in the request's own `tools` list that equals the
//!   suffix or ends with it right after a non-alphanumeric separator.
//! - `arguments`: a JSON object, sent verbatim as the call's arguments.
//!
//! Pick rule: the steps whose trigger matches, in script order, are the turn's
//! calls. A request whose conversation holds `k` tool results after the last
//! real user text gets call `k` (so one turn may chain several calls); once
//! every matching call has its result, the follow-up is answered with text.
//! A matching step whose tool is not offered in the request is not called: the
//! reply is text and the request log says why (`tool_note`). Every call is in
//! the request log (`tool_call`), and the result it came back with
//! (`tool_result`, first 200 characters).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// One scripted call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolStep {
    /// Text the last real user message must contain.
    pub trigger: String,
    /// The tool-name suffix to call.
    pub tool: String,
    /// The call's arguments (a JSON object).
    pub arguments: Value,
}

/// A parsed tool script.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolScript {
    steps: Vec<ToolStep>,
}

/// Why a tool script could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ToolScriptError {
    /// The file could not be read.
    #[error("cannot read the tool script {path}: {source} (pass a readable --tool-script file)")]
    Read {
        /// The path given.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The text is not a valid script.
    #[error(
        "invalid tool script {path}: {detail}; expected a JSON array of {{\"trigger\": text, \"tool\": name suffix, \"arguments\": object}}"
    )]
    Invalid {
        /// The path given (empty for inline text).
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

/// The call chosen for one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pick<'a> {
    /// Call `name` (the offered tool's full name) with `step`'s arguments.
    Call {
        /// The offered tool's full name.
        name: &'a str,
        /// The step.
        step: &'a ToolStep,
    },
    /// A step matched but its tool is not offered; answer with text.
    NotOffered(String),
}

/// Whether `name` is `suffix` or ends with it right after a separator.
pub fn name_matches(name: &str, suffix: &str) -> bool {
    name == suffix
        || name.strip_suffix(suffix).is_some_and(|head| {
            head.chars()
                .last()
                .is_some_and(|c| !c.is_ascii_alphanumeric())
        })
}

impl ToolScript {
    /// Reads and parses `path`.
    ///
    /// # Errors
    /// [`ToolScriptError`] naming the file and what is wrong.
    pub fn load(path: &Path) -> Result<Self, ToolScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ToolScriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text).map_err(|detail| ToolScriptError::Invalid {
            path: path.to_owned(),
            detail,
        })
    }

    /// Parses the script text.
    ///
    /// # Errors
    /// A one-line reason.
    pub fn parse(text: &str) -> Result<Self, String> {
        let steps: Vec<ToolStep> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (i, s) in steps.iter().enumerate() {
            if s.trigger.trim().is_empty() {
                return Err(format!("step {i}: `trigger` is empty"));
            }
            if s.tool.trim().is_empty() {
                return Err(format!("step {i}: `tool` is empty"));
            }
            if !s.arguments.is_object() {
                return Err(format!("step {i}: `arguments` must be a JSON object"));
            }
        }
        Ok(Self { steps })
    }

    /// Builds a script from steps (drivers writing one).
    #[must_use]
    pub fn new(steps: Vec<ToolStep>) -> Self {
        Self { steps }
    }

    /// The JSON text of the script (what `--tool-script` reads).
    #[must_use]
    pub fn to_json(&self) -> String {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|s| serde_json::json!({"trigger": s.trigger, "tool": s.tool, "arguments": s.arguments}))
            .collect();
        Value::Array(steps).to_string()
    }

    /// The call for a request whose last real user text is `last_user`, that
    /// offers `offered` tools and already holds `results` tool results after
    /// that text; `None` = answer with text as usual.
    pub(crate) fn pick<'a>(
        &'a self,
        last_user: Option<&str>,
        offered: &'a [String],
        results: u64,
    ) -> Option<Pick<'a>> {
        let last_user = last_user?;
        let step = self
            .steps
            .iter()
            .filter(|s| last_user.contains(s.trigger.as_str()))
            .nth(usize::try_from(results).ok()?)?;
        Some(match offered.iter().find(|n| name_matches(n, &step.tool)) {
            Some(name) => Pick::Call { name, step },
            None => {
                let mut names = offered.join(", ");
                if names.len() > 2000 {
                    let cut = names.floor_char_boundary(2000);
                    names.truncate(cut);
                    names.push('…');
                }
                Pick::NotOffered(format!(
                    "no tool ending in `{}` among the {} offered: [{names}]",
                    step.tool,
                    offered.len()
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script() -> ToolScript {
        ToolScript::parse(
            r#"[{"trigger":"log it","tool":"log_topic","arguments":{"topic":"t"}},
                {"trigger":"log it","tool":"end_session","arguments":{}}]"#,
        )
        .unwrap()
    }

    #[test]
    fn suffixes_match_every_harness_prefix_but_not_a_longer_word() {
        for name in [
            "log_topic",
            "mcp__studyloop__log_topic",
            "studyloop_log_topic",
            "studyloop.log_topic",
            "studyloop-log_topic",
        ] {
            assert!(name_matches(name, "log_topic"), "{name}");
        }
        for name in ["xlog_topic", "log_topics", "studyloop_log_topicx", ""] {
            assert!(!name_matches(name, "log_topic"), "{name}");
        }
    }

    #[test]
    fn picks_chain_by_results_then_answer_with_text() {
        let s = script();
        let offered = vec![
            "shell".to_owned(),
            "mcp__studyloop__log_topic".to_owned(),
            "mcp__studyloop__end_session".to_owned(),
        ];
        let Some(Pick::Call { name, step }) = s.pick(Some("please log it now"), &offered, 0) else {
            panic!("first call")
        };
        assert_eq!(
            (name, step.arguments["topic"].as_str()),
            ("mcp__studyloop__log_topic", Some("t"))
        );
        let Some(Pick::Call { name, .. }) = s.pick(Some("please log it now"), &offered, 1) else {
            panic!("second call")
        };
        assert_eq!(name, "mcp__studyloop__end_session");
        assert_eq!(s.pick(Some("please log it now"), &offered, 2), None);
        assert_eq!(s.pick(Some("hello"), &offered, 0), None);
        assert_eq!(s.pick(None, &offered, 0), None);
        let Some(Pick::NotOffered(why)) = s.pick(Some("log it"), &offered[..1], 0) else {
            panic!("not offered")
        };
        assert!(
            why.contains("`log_topic`") && why.contains("1 offered"),
            "{why}"
        );
    }

    #[test]
    fn bad_scripts_are_refused_with_a_reason() {
        for (text, want) in [
            ("{}", "invalid type"),
            (
                r#"[{"trigger":"","tool":"x","arguments":{}}]"#,
                "`trigger` is empty",
            ),
            (
                r#"[{"trigger":"a","tool":" ","arguments":{}}]"#,
                "`tool` is empty",
            ),
            (
                r#"[{"trigger":"a","tool":"x","arguments":[1]}]"#,
                "must be a JSON object",
            ),
            (
                r#"[{"trigger":"a","tool":"x","arguments":{},"extra":1}]"#,
                "unknown field",
            ),
        ] {
            let err = ToolScript::parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
        assert_eq!(ToolScript::parse(&script().to_json()).unwrap(), script());
        let err = ToolScript::load(Path::new("/nonexistent/tools.json"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/nonexistent/tools.json") && err.contains("--tool-script"),
            "{err}"
        );
    }
}
