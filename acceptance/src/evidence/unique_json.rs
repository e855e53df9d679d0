//! Evidence JSON read strictly: an object that names one key twice is refused,
//! anywhere in the document (issue 33 §2).
//!
//! `serde_json` keeps the last of two equal keys, so a manifest whose inventory lists
//! a file twice (a wrong hash first, the right one last) read as clean, and a reader
//! showing the first would disagree with the verifier. Every evidence reader (bundle
//! manifests, the run ledger, arbitrations) parses through [`from_slice`] / [`from_str`],
//! the workspace's one strict parser (`studyloop_actors::strict_json`) behind it.

use serde::de::{DeserializeOwned, Error as _};

/// Parses `bytes` as `T`, refusing a duplicate key in any object.
///
/// # Errors
/// Not JSON, a duplicate key (named), or not a `T`.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    // The workspace's one strict parser (actors::strict_json), its error carried in
    // serde_json's so every reader keeps its own error type.
    let text = std::str::from_utf8(bytes).map_err(serde_json::Error::custom)?;
    let value = studyloop_actors::strict_json::parse(text).map_err(|e| match e {
        studyloop_actors::strict_json::StrictJsonError::Syntax(e) => e,
        other => serde_json::Error::custom(other),
    })?;
    serde_json::from_value(value)
}

/// [`from_slice`] for text.
///
/// # Errors
/// As [`from_slice`].
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    from_slice(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_duplicate_key_anywhere_is_refused_by_name() {
        let ok: Value = from_str(r#"{"a": {"b": 1, "c": [1.5, null, true, "x"]}}"#).unwrap();
        assert_eq!(ok["a"]["c"][0], 1.5);
        for text in [
            r#"{"a": 1, "a": 2}"#,
            r#"{"inventory": {"x.txt": "bad", "x.txt": "good"}}"#,
            r#"[{"k": {"deep": 1, "deep": 1}}]"#,
        ] {
            let err = from_str::<Value>(text).unwrap_err().to_string();
            assert!(err.contains("duplicate key"), "{text}: {err}");
        }
        // serde_json alone keeps the last: the reason this module exists.
        let last: Value = serde_json::from_str(r#"{"a": 1, "a": 2}"#).unwrap();
        assert_eq!(last["a"], 2);
    }
}
