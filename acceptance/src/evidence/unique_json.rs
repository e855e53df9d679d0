//! Evidence JSON read strictly: an object that names one key twice is refused,
//! anywhere in the document (issue 33 §2).
//!
//! `serde_json` keeps the last of two equal keys, so a manifest whose inventory lists
//! a file twice (a wrong hash first, the right one last) read as clean, and a reader
//! showing the first would disagree with the verifier. Every evidence reader (bundle
//! manifests, the run ledger, arbitrations) parses through [`from_slice`] / [`from_str`].

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A JSON value whose objects had no duplicate key.
struct Unique(Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
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
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
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
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut seen = BTreeSet::new();
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key `{key}` in one object: evidence JSON names each key once (the file was edited by hand)"
                )));
            }
            let Unique(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses `bytes` as `T`, refusing a duplicate key in any object.
///
/// # Errors
/// Not JSON, a duplicate key (named), or not a `T`.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    let Unique(value) = serde_json::from_slice(bytes)?;
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
