//! JSON text to a `serde_json::Value`, refusing what `serde_json::from_str`
//! lets through silently: a key repeated in one object (serde_json keeps the
//! last, so `{"expect_contains": ["x"], "expect_contains": []}` would drop a
//! predicate without a word) and a leading byte-order mark (a generic "expected
//! value at line 1 column 1" that names neither the BOM nor the fix).
//!
//! Nesting stays bounded by serde_json's own recursion limit (128), so a deep
//! input is a syntax error, never a stack overflow.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why the text is not strict JSON.
#[derive(Debug, thiserror::Error)]
pub enum StrictJsonError {
    /// The text starts with U+FEFF.
    #[error(
        "starts with a UTF-8 byte-order mark (U+FEFF, bytes EF BB BF); JSON has none: save the file as UTF-8 without BOM"
    )]
    ByteOrderMark,
    /// One object holds the same key twice.
    #[error(
        "duplicate key {key:?} in the object at {path}; JSON readers disagree on which one wins, so keep exactly one"
    )]
    DuplicateKey {
        /// The repeated key.
        key: String,
        /// Where the object is: `$` for the top level, `$.turns[1]` below it.
        path: String,
    },
    /// Not JSON at all (or trailing text after the value).
    #[error("{0}")]
    Syntax(#[source] serde_json::Error),
}

/// Parses `text` as exactly one JSON value with no repeated key at any level.
pub fn parse(text: &str) -> Result<Value, StrictJsonError> {
    if text.starts_with('\u{FEFF}') {
        return Err(StrictJsonError::ByteOrderMark);
    }
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Seed {
        path: "$",
        duplicate: &duplicate,
    }
    .deserialize(&mut de)
    .and_then(|value| de.end().map(|()| value));
    match (parsed, duplicate.into_inner()) {
        (_, Some((key, path))) => Err(StrictJsonError::DuplicateKey { key, path }),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(StrictJsonError::Syntax(e)),
    }
}

/// Builds a `Value` while tracking where it is, so a duplicate is named by path.
#[derive(Clone, Copy)]
struct Seed<'a> {
    path: &'a str,
    duplicate: &'a RefCell<Option<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = format!("{}[{}]", self.path, items.len());
            let seed = Seed {
                path: &path,
                ..self
            };
            match seq.next_element_seed(seed)? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let message = format!("duplicate key {key:?} at {}", self.path);
                *self.duplicate.borrow_mut() = Some((key, self.path.to_owned()));
                return Err(de::Error::custom(message));
            }
            let path = format!("{}.{}", self.path, path_segment(&key));
            let value = map.next_value_seed(Seed {
                path: &path,
                ..self
            })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// A key as a path segment: bare when it is a plain identifier, else quoted
/// (a key may hold dots, brackets or control characters).
fn path_segment(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_named_by_key_and_path_at_every_level() {
        let cases = [
            (r#"{"a": 1, "a": 2}"#, "a", "$"),
            (r#"{"t": [{"x": 1}, {"y": 1, "y": null}]}"#, "y", "$.t[1]"),
            (r#"{"o": {"p": {"q": [], "q": []}}}"#, "q", "$.o.p"),
            (r#"{"k.1": {"z": 0, "z": 0}}"#, "z", "$.\"k.1\""),
            (r#"[[{"\u0061": 1, "a": 2}]]"#, "a", "$[0][0]"),
        ];
        for (text, key, path) in cases {
            match parse(text) {
                Err(StrictJsonError::DuplicateKey { key: k, path: p }) => {
                    assert_eq!((k.as_str(), p.as_str()), (key, path), "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_bom_is_named_and_plain_json_parses_like_serde_json() {
        let err = parse("\u{FEFF}{}").unwrap_err().to_string();
        assert!(
            err.contains("byte-order mark") && err.contains("without BOM"),
            "{err}"
        );
        let text = r#"{"a": [1, -2, 3.5, "s", null, true, {"b": {}}], "c": "\u00e9"}"#;
        assert_eq!(
            parse(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(matches!(parse("{} x"), Err(StrictJsonError::Syntax(_))));
        assert!(matches!(parse("{"), Err(StrictJsonError::Syntax(_))));
    }

    #[test]
    fn deep_nesting_is_an_error_not_an_overflow() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(parse(&deep), Err(StrictJsonError::Syntax(_))));
        let deep = "{\"a\":".repeat(50_000);
        assert!(matches!(parse(&deep), Err(StrictJsonError::Syntax(_))));
    }
}
