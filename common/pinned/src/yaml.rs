//! The workspace's one door to YAML: every pinned data file (redaction rules, rubric
//! frontmatter, council roster, sign-off definition) is parsed here, so the YAML crate
//! (`serde-saphyr`) is named in exactly one module and can be swapped in one place.
//!
//! Parsing only: callers decide what the structure means. Use `#[serde(deny_unknown_fields)]`
//! on the target types so a misspelt key is an error, not a silently ignored line.
//!
//! A key may appear once per mapping. The parser refuses a literal repeat, but a map
//! typed by the caller (say `BTreeMap<u8, String>`) would still take `1:` and `'1':` as
//! the same key and keep the last: one of two lines of a pinned file silently ignored.
//! So every document is first walked untyped and refused when two keys of one mapping
//! spell the same scalar (numbers compared by value), and merge keys (`<<`), which
//! override keys by design, are refused outright.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{DuplicateKeyPolicy, MergeKeyPolicy, Options};

/// A YAML document that did not parse into the requested type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct YamlError {
    /// The parser's own description, including the line and column when it has one.
    pub detail: String,
}

/// Parses one YAML document into `T`, refusing duplicate keys and merge keys.
///
/// # Errors
/// [`YamlError`] with the parser's message when the text is not valid YAML, repeats a
/// key within one mapping, uses a merge key, or does not match `T`.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    check_keys(text)?;
    serde_saphyr::from_str_with_options(text, options()).map_err(yaml_error)
}

/// Proves `text` is YAML in which no mapping repeats a key (in any spelling) and no
/// merge key appears, whatever type it will be parsed into.
///
/// # Errors
/// [`YamlError`] naming the repeated key (or the merge key, or the syntax error).
pub(crate) fn check_keys(text: &str) -> Result<(), YamlError> {
    serde_saphyr::from_str_with_options::<Unique>(text, options()).map_err(yaml_error)?;
    Ok(())
}

fn yaml_error(e: serde_saphyr::Error) -> YamlError {
    YamlError {
        detail: e.to_string(),
    }
}

fn options() -> Options {
    let mut options = Options::default();
    options.duplicate_keys = DuplicateKeyPolicy::Error;
    options.merge_keys = MergeKeyPolicy::Error;
    options
}

/// Any YAML value, walked only to prove that no mapping repeats a key.
struct Unique;

impl<'de> de::Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_none<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Unique, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(KeyText(key)) = map.next_key::<KeyText>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{key}` in one mapping (two spellings of the same key \
                     count as one); every key may appear once: remove one of them"
                )));
            }
            map.next_value::<Unique>()?;
        }
        Ok(Unique)
    }
}

/// A mapping key as comparable text: numbers (and strings that spell an integer) by
/// value, so `1`, `'1'` and `01` collide as they would in a typed map.
struct KeyText(String);

impl<'de> de::Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = KeyText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }
    fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_i128<E>(self, v: i128) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_u128<E>(self, v: u128) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
        Ok(KeyText(match v.trim().parse::<i128>() {
            Ok(number) => number.to_string(),
            Err(_) => v.to_owned(),
        }))
    }
    fn visit_unit<E>(self) -> Result<KeyText, E> {
        Ok(KeyText("null".to_owned()))
    }
    fn visit_none<E>(self) -> Result<KeyText, E> {
        Ok(KeyText("null".to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<KeyText, A::Error> {
        Err(de::Error::custom(
            "a sequence used as a mapping key; write scalar keys only",
        ))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<KeyText, A::Error> {
        Err(de::Error::custom(
            "a mapping used as a mapping key; write scalar keys only",
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only whether parsing succeeds matters")]
    struct Doc {
        version: u32,
        anchors: BTreeMap<u8, String>,
    }

    #[test]
    fn two_spellings_of_one_key_are_refused_by_name() {
        for (text, key) in [
            ("version: 1\nanchors: {1: a, 1: b}\n", "1"),
            ("version: 1\nanchors: {1: a, '1': b}\n", "1"),
            ("version: 1\nanchors: {'01': a, 1: b}\n", "1"),
            ("version: 1\nversion: 2\nanchors: {}\n", "version"),
            ("version: 1\nanchors:\n  1: a\n  \"1\": b\n  2: c\n", "1"),
        ] {
            let err = parse::<Doc>(text).unwrap_err();
            assert!(
                err.detail.contains("duplicate") && err.detail.contains(key),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn merge_keys_are_refused_because_they_override_silently() {
        let text = "version: 1\nanchors:\n  <<: {1: a}\n  1: b\n";
        let err = parse::<Doc>(text).unwrap_err();
        assert!(err.detail.contains("merge"), "{err}");
    }

    #[test]
    fn distinct_keys_and_aliases_still_parse() {
        let text = "version: 1\nanchors: {1: &x one, 2: *x, 10: ten}\n";
        assert!(parse::<Doc>(text).is_ok());
    }
}
