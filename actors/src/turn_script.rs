//! Turn scripts: the versioned JSON a scripted learner replays.
//!
//! Version 1:
//! ```json
//! { "version": 1,
//!   "turns": [ { "prompt": "In one sentence, what is a Python decorator?" },
//!              { "prompt": "And a closure?" } ] }
//! ```
//! The loader is strict: an unknown field at the top level or on a turn is an
//! error naming it; so is a key repeated in any object (by key and path: the
//! last one would win silently, and could drop a reserved predicate) and a
//! leading byte-order mark; `version` must be the integer 1 (a future version is
//! rejected by number, not misread); `turns` must be a non-empty list; each
//! `prompt` a string that [`crate::turn_text::check`] accepts: visible text
//! with no control character but newline and tab (a control character would
//! reach the harness as a key or an escape sequence). `expect_contains` and `expect_not_contains` are
//! reserved: accepted only absent, `null` or `[]`, because no executor checks them
//! yet and a predicate nothing checks must not look like a passing check. This
//! module parses; the scripted actor replays.

use std::path::Path;

use serde_json::{Map, Value};

use crate::strict_json::{self, StrictJsonError};
use crate::turn_text::{self, TextFault};

/// The only version this build reads.
pub(crate) const SUPPORTED_VERSION: u64 = 1;

const TOP_LEVEL_FIELDS: [&str; 2] = ["version", "turns"];
const TURN_FIELDS: [&str; 3] = ["prompt", "expect_contains", "expect_not_contains"];
const RESERVED_FIELDS: [&str; 2] = ["expect_contains", "expect_not_contains"];

/// A loaded, valid turn script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnScript {
    /// Always [`SUPPORTED_VERSION`].
    pub version: u64,
    /// The turns, in order; never empty.
    pub turns: Vec<ScriptTurn>,
}

/// One learner turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptTurn {
    /// What the learner sends, verbatim.
    pub prompt: String,
}

/// Why a turn script was rejected. Every message names the field or turn.
#[derive(Debug, thiserror::Error)]
pub enum TurnScriptError {
    /// The file could not be read.
    #[error("failed to read turn script {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error(
        "turn script is not valid JSON: {0} (fix the syntax; see the format in the turn_script module doc)"
    )]
    NotJson(#[source] serde_json::Error),
    /// The text starts with a byte-order mark.
    #[error("turn script {0}")]
    ByteOrderMark(#[source] StrictJsonError),
    /// An object repeats a key.
    #[error("turn script has a {0}")]
    DuplicateKey(#[source] StrictJsonError),
    /// The top level is not an object.
    #[error("turn script must be a JSON object with `version` and `turns`")]
    NotAnObject,
    /// Top-level fields other than `version` and `turns`.
    #[error("unknown top-level field(s) in turn script: {0} (allowed: version, turns)")]
    UnknownTopLevel(String),
    /// No `version`.
    #[error("turn script has no `version` (add \"version\": 1)")]
    MissingVersion,
    /// `version` is not a supported integer.
    #[error(
        "unsupported turn script version {0}; this build reads version 1 (convert the script or use a newer build)"
    )]
    UnsupportedVersion(String),
    /// `turns` is missing, not a list, or empty.
    #[error("turn script must have a non-empty `turns` list")]
    NoTurns,
    /// A turn is not an object.
    #[error("turns[{index}] must be an object with a `prompt`")]
    TurnNotAnObject {
        /// 0-based turn index.
        index: usize,
    },
    /// Unknown fields on a turn.
    #[error(
        "unknown field(s) on turns[{index}]: {fields} (allowed: prompt, expect_contains, expect_not_contains)"
    )]
    UnknownTurnField {
        /// 0-based turn index.
        index: usize,
        /// The unknown names, sorted.
        fields: String,
    },
    /// `prompt` missing or not a string.
    #[error("turns[{index}].prompt must be a non-empty string")]
    BadPrompt {
        /// 0-based turn index.
        index: usize,
    },
    /// `prompt` holds a control character or nothing visible.
    #[error("turns[{index}].prompt {fault}")]
    PromptText {
        /// 0-based turn index.
        index: usize,
        /// What is wrong with the text.
        fault: TextFault,
    },
    /// A reserved field carries a value.
    #[error(
        "turns[{index}].{field} is reserved and not checked by anything yet; leave it unset or empty until an executor honours it (see the turn_script module doc)"
    )]
    Reserved {
        /// 0-based turn index.
        index: usize,
        /// The reserved field.
        field: &'static str,
    },
}

/// The largest turn script [`TurnScript::load`] reads (a few KiB is typical).
pub(crate) const MAX_SCRIPT_BYTES: u64 = 1 << 20;

impl TurnScript {
    /// Parses and validates a turn script from JSON text.
    pub fn from_json_str(text: &str) -> Result<Self, TurnScriptError> {
        let value = strict_json::parse(text).map_err(|e| match e {
            StrictJsonError::Syntax(e) => TurnScriptError::NotJson(e),
            e @ StrictJsonError::ByteOrderMark => TurnScriptError::ByteOrderMark(e),
            e @ StrictJsonError::DuplicateKey { .. } => TurnScriptError::DuplicateKey(e),
        })?;
        Self::from_value(&value)
    }

    /// Reads and validates the turn script at `path`: a regular file of at most
    /// [`MAX_SCRIPT_BYTES`] (a FIFO or device is refused at once instead of
    /// hanging the run, a final symlink is refused), in UTF-8.
    pub fn load(path: &Path) -> Result<Self, TurnScriptError> {
        let read = |source| TurnScriptError::Read {
            path: path.display().to_string(),
            source,
        };
        let bytes = studyloop_regular_file::read_regular(path, MAX_SCRIPT_BYTES).map_err(read)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            read(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "not UTF-8 text (invalid byte at offset {}); save the turn script as UTF-8",
                    e.utf8_error().valid_up_to()
                ),
            ))
        })?;
        Self::from_json_str(&text)
    }

    /// Validates an already-parsed JSON value, checks in a fixed order.
    pub fn from_value(value: &Value) -> Result<Self, TurnScriptError> {
        let top = value.as_object().ok_or(TurnScriptError::NotAnObject)?;
        if let Some(unknown) = unknown_fields(top, &TOP_LEVEL_FIELDS) {
            return Err(TurnScriptError::UnknownTopLevel(unknown));
        }
        let version = top.get("version").ok_or(TurnScriptError::MissingVersion)?;
        if version.as_u64() != Some(SUPPORTED_VERSION) {
            return Err(TurnScriptError::UnsupportedVersion(version.to_string()));
        }
        let turns = match top.get("turns") {
            Some(Value::Array(turns)) if !turns.is_empty() => turns,
            _ => return Err(TurnScriptError::NoTurns),
        };
        let turns = turns
            .iter()
            .enumerate()
            .map(|(index, turn)| parse_turn(index, turn))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            version: SUPPORTED_VERSION,
            turns,
        })
    }

    /// The prompts in order, as the scripted actor takes them.
    pub fn prompts(&self) -> Vec<String> {
        self.turns.iter().map(|t| t.prompt.clone()).collect()
    }
}

fn parse_turn(index: usize, turn: &Value) -> Result<ScriptTurn, TurnScriptError> {
    let turn = turn
        .as_object()
        .ok_or(TurnScriptError::TurnNotAnObject { index })?;
    if let Some(fields) = unknown_fields(turn, &TURN_FIELDS) {
        return Err(TurnScriptError::UnknownTurnField { index, fields });
    }
    let prompt = match turn.get("prompt") {
        Some(Value::String(p)) => p.clone(),
        _ => return Err(TurnScriptError::BadPrompt { index }),
    };
    turn_text::check(&prompt).map_err(|fault| TurnScriptError::PromptText { index, fault })?;
    for field in RESERVED_FIELDS {
        match turn.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.is_empty() => {}
            Some(_) => return Err(TurnScriptError::Reserved { index, field }),
        }
    }
    Ok(ScriptTurn { prompt })
}

fn unknown_fields(object: &Map<String, Value>, allowed: &[&str]) -> Option<String> {
    let mut unknown: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect();
    unknown.sort_unstable();
    (!unknown.is_empty()).then(|| unknown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        TurnScript::from_json_str(text).unwrap_err().to_string()
    }

    /// Loads `path` on another thread: a reader that blocks (the old
    /// `read_to_string` on a FIFO) fails the test instead of hanging it.
    fn load_within_a_second(path: &Path) -> Result<TurnScript, TurnScriptError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let path = path.to_owned();
        std::thread::spawn(move || tx.send(TurnScript::load(&path)));
        rx.recv_timeout(std::time::Duration::from_secs(1))
            .expect("TurnScript::load blocked on a non-regular file")
    }

    #[test]
    fn a_fifo_a_symlink_or_a_huge_file_is_refused_at_once_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("turns.json");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let err = load_within_a_second(&fifo).unwrap_err().to_string();
        assert!(
            err.contains("turns.json") && err.contains("a FIFO"),
            "{err}"
        );

        let real = tmp.path().join("real.json");
        std::fs::write(&real, r#"{"version": 1, "turns": [{"prompt": "a"}]}"#).unwrap();
        assert_eq!(load_within_a_second(&real).unwrap().prompts(), ["a"]);
        let link = tmp.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = load_within_a_second(&link).unwrap_err().to_string();
        assert!(err.contains("a symlink"), "{err}");

        let huge = tmp.path().join("huge.json");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(MAX_SCRIPT_BYTES + 1)
            .unwrap();
        let err = load_within_a_second(&huge).unwrap_err().to_string();
        assert!(err.contains("more than"), "{err}");

        let latin1 = tmp.path().join("latin1.json");
        std::fs::write(
            &latin1,
            b"{\"version\": 1, \"turns\": [{\"prompt\": \"caf\xe9\"}]}",
        )
        .unwrap();
        let err = load_within_a_second(&latin1).unwrap_err().to_string();
        assert!(
            err.contains("not UTF-8") && err.contains("offset 40"),
            "{err}"
        );
    }

    #[test]
    fn loads_a_valid_script() {
        let s = TurnScript::from_json_str(
            r#"{"version": 1, "turns": [{"prompt": "a"}, {"prompt": "b", "expect_contains": [], "expect_not_contains": null}]}"#,
        )
        .unwrap();
        assert_eq!(s.prompts(), ["a", "b"]);
    }

    #[test]
    fn unknown_fields_are_named_at_both_levels() {
        let top = err(r#"{"version": 1, "turns": [{"prompt": "a"}], "zeta": 1, "alpha": 2}"#);
        assert!(top.contains("alpha, zeta"), "{top}");
        let turn =
            err(r#"{"version": 1, "turns": [{"prompt": "a"}, {"prompt": "b", "promt": "c"}]}"#);
        assert!(
            turn.contains("turns[1]") && turn.contains("promt"),
            "{turn}"
        );
    }

    #[test]
    fn version_rules() {
        assert!(err(r#"{"turns": [{"prompt": "a"}]}"#).contains("no `version`"));
        let future = err(r#"{"version": 2, "turns": [{"prompt": "a"}]}"#);
        assert!(
            future.contains("version 2") && future.contains("reads version 1"),
            "{future}"
        );
        assert!(err(r#"{"version": "1", "turns": [{"prompt": "a"}]}"#).contains("version \"1\""));
        assert!(err(r#"{"version": 1.5, "turns": [{"prompt": "a"}]}"#).contains("1.5"));
    }

    #[test]
    fn turns_and_prompts_must_be_present_and_non_empty() {
        assert!(err(r#"{"version": 1}"#).contains("non-empty `turns`"));
        assert!(err(r#"{"version": 1, "turns": []}"#).contains("non-empty `turns`"));
        assert!(err(r#"{"version": 1, "turns": {}}"#).contains("non-empty `turns`"));
        assert!(err(r#"{"version": 1, "turns": ["a"]}"#).contains("turns[0] must be an object"));
        assert!(err(r#"{"version": 1, "turns": [{}]}"#).contains("turns[0].prompt"));
        assert!(err(r#"{"version": 1, "turns": [{"prompt": 3}]}"#).contains("turns[0].prompt"));
        assert!(err(r#"{"version": 1, "turns": [{"prompt": "  "}]}"#).contains("turns[0].prompt"));
        assert!(err(r#"{"version": 1, "turns": [{"prompt": ""}]}"#).contains("turns[0].prompt"));
        assert!(err("[1]").contains("JSON object"));
        assert!(err("{").contains("not valid JSON"));
    }

    #[test]
    fn reserved_fields_with_values_are_refused_by_name() {
        for field in RESERVED_FIELDS {
            for value in [r#"["x"]"#, r#""x""#, "true"] {
                let text = format!(
                    r#"{{"version": 1, "turns": [{{"prompt": "a", "{field}": {value}}}]}}"#
                );
                let msg = err(&text);
                assert!(
                    msg.contains(&format!("turns[0].{field} is reserved")),
                    "{msg}"
                );
            }
        }
    }

    #[test]
    fn a_repeated_key_is_refused_by_key_and_path_at_any_level() {
        // serde_json keeps the last value: here the second `expect_contains`
        // would silently drop the reserved predicate the first one carries.
        let cases = [
            (
                r#"{"version": 1, "turns": [{"prompt": "a", "expect_contains": ["x"], "expect_contains": []}]}"#,
                "\"expect_contains\" in the object at $.turns[0]",
            ),
            (
                r#"{"version": 1, "version": 1, "turns": [{"prompt": "a"}]}"#,
                "\"version\" in the object at $;",
            ),
            (
                r#"{"version": 1, "turns": [{"prompt": "a"}, {"prompt": "b", "prompt": "c"}]}"#,
                "\"prompt\" in the object at $.turns[1]",
            ),
            (
                r#"{"version": 1, "turns": [{"prompt": "a"}], "turns": []}"#,
                "\"turns\" in the object at $;",
            ),
        ];
        for (text, named) in cases {
            let msg = err(text);
            assert!(
                msg.contains("duplicate key") && msg.contains(named),
                "{msg}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_is_named_with_the_fix() {
        let msg = err("\u{FEFF}{\"version\": 1, \"turns\": [{\"prompt\": \"a\"}]}");
        assert!(msg.contains("byte-order mark"), "{msg}");
        assert!(msg.contains("UTF-8 without BOM"), "{msg}");
    }

    #[test]
    fn control_characters_and_invisible_prompts_are_refused_by_turn_and_character() {
        let script = |prompt: &str| {
            let prompt = serde_json::to_string(prompt).unwrap();
            format!(r#"{{"version": 1, "turns": [{{"prompt": "ok"}}, {{"prompt": {prompt}}}]}}"#)
        };
        for (prompt, named) in [
            ("a\u{1b}[31mred", "U+001B (ESC)"),
            ("osc \u{1b}]52;c;eA==\u{7}", "U+001B (ESC)"),
            ("nul\0byte", "U+0000 (NUL)"),
            ("cr\r\nline", "U+000D (CR)"),
            ("c1 \u{9b}2J", "U+009B (CSI)"),
            ("del\u{7f}", "U+007F (DEL)"),
        ] {
            let msg = err(&script(prompt));
            assert!(
                msg.starts_with("turns[1].prompt holds control character"),
                "{msg}"
            );
            assert!(msg.contains(named), "{msg}");
        }
        for prompt in ["\u{200B}\u{200D}", " \u{FEFF}\n\t", "\u{3000}"] {
            let msg = err(&script(prompt));
            assert!(
                msg.contains("turns[1].prompt is empty, whitespace-only or zero-width-only"),
                "{msg}"
            );
        }
        let multi = TurnScript::from_json_str(&script("line one\n\nrun-shell touch /x\tend"));
        assert_eq!(
            multi.unwrap().turns[1].prompt,
            "line one\n\nrun-shell touch /x\tend"
        );
    }
}
