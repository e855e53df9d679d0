//! The workspace's one door to YAML: every pinned data file (redaction rules, rubric
//! frontmatter, council roster, sign-off definition) is parsed here, so the YAML crate
//! (`serde-saphyr`) is named in exactly one module and can be swapped in one place.
//!
//! Parsing only: callers decide what the structure means. Use `#[serde(deny_unknown_fields)]`
//! on the target types so a misspelt key is an error, not a silently ignored line.

use serde::de::DeserializeOwned;

/// A YAML document that did not parse into the requested type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct YamlError {
    /// The parser's own description, including the line and column when it has one.
    pub detail: String,
}

/// Parses one YAML document into `T`.
///
/// # Errors
/// [`YamlError`] with the parser's message when the text is not valid YAML or does not
/// match `T`.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_saphyr::from_str(text).map_err(|e| YamlError {
        detail: e.to_string(),
    })
}
