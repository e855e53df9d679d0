//! Caller-supplied secret values ([`crate::Redactor::with_secret`]), found in every
//! spelling the text we redact can hold them in.
//!
//! Transcripts are JSON lines, and judge prompts quote those lines inside JSON again, so
//! a value holding `"`, `\` or `/` appears as `\"`, `\\\"`, `\\\\`, `\/` and so on, once per
//! level of quoting. Each literal is therefore matched as a pattern that accepts any
//! number of backslashes before those characters (any escaping depth, not a fixed list of
//! spellings), plus its percent-encoded form (a URL query).

use std::borrow::Cow;
use std::fmt::Write as _;

use regex::{Captures, Regex};

/// The literal secrets of one redactor, longest value first so an overlapping shorter
/// one never wins.
#[derive(Debug, Clone, Default)]
pub(crate) struct Literals {
    /// (name, value), index `i` is capture group `i + 1` of `regex`.
    secrets: Vec<(String, String)>,
    regex: Option<Regex>,
}

impl Literals {
    /// Adds `value` under `name` (a value added before keeps its first name).
    pub(crate) fn add(&mut self, name: &str, value: &str) -> Result<(), regex::Error> {
        if self.secrets.iter().any(|(_, v)| v == value) {
            return Ok(());
        }
        let mut secrets = self.secrets.clone();
        secrets.push((name.to_owned(), value.to_owned()));
        secrets.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let alternation = secrets
            .iter()
            .map(|(_, v)| {
                format!(
                    "({}|{})",
                    any_escaping(v),
                    regex::escape(&percent_encode(v))
                )
            })
            .collect::<Vec<_>>()
            .join("|");
        self.regex = Some(Regex::new(&alternation)?);
        self.secrets = secrets;
        Ok(())
    }

    /// `text` with every spelling of every secret replaced by `[SECRET:<name>]`; each
    /// hit's name is passed to `found`.
    pub(crate) fn replace<'t>(&self, text: &'t str, mut found: impl FnMut(&str)) -> Cow<'t, str> {
        let Some(regex) = &self.regex else {
            return Cow::Borrowed(text);
        };
        regex.replace_all(text, |caps: &Captures<'_>| {
            let name = caps
                .iter()
                .skip(1)
                .position(|group| group.is_some())
                .and_then(|i| self.secrets.get(i))
                .map_or("unknown", |(n, _)| n.as_str());
            found(name);
            format!("[SECRET:{name}]")
        })
    }
}

/// A pattern for `value` as written raw or JSON-escaped to any depth.
fn any_escaping(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for c in value.chars() {
        match c {
            '"' => out.push_str(r#"\\*""#),
            '\\' => out.push_str(r"\\+"),
            '/' => out.push_str(r"\\*/"),
            '\n' => out.push_str(r"(?:\n|\\+n)"),
            '\r' => out.push_str(r"(?:\r|\\+r)"),
            '\t' => out.push_str(r"(?:\t|\\+t)"),
            c if c.is_control() => {
                let _ = write!(
                    out,
                    r"(?:{}|\\+u{:04x})",
                    regex::escape(&c.to_string()),
                    u32::from(c)
                );
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out
}

/// `value` percent-encoded, RFC 3986 unreserved characters kept.
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escape(text: &str) -> String {
        let quoted = serde_json::Value::String(text.to_owned()).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    }

    #[test]
    fn every_escaping_depth_and_the_url_form_are_found() {
        let value = "q\"a/b\\c\nd'e\u{1}f";
        let mut literals = Literals::default();
        literals.add("S", value).unwrap();
        let mut spelled = value.to_owned();
        for depth in 0..5 {
            let text = format!("x {spelled} y");
            assert_eq!(
                literals.replace(&text, |_| {}),
                "x [SECRET:S] y",
                "depth {depth}"
            );
            spelled = escape(&spelled);
        }
        let url = format!("?k={}&z", percent_encode(value));
        assert_eq!(literals.replace(&url, |_| {}), "?k=[SECRET:S]&z");
    }

    #[test]
    fn the_longest_value_wins_and_names_its_hit() {
        let mut literals = Literals::default();
        literals.add("SHORT", "abcdefgh").unwrap();
        literals.add("LONG", "abcdefgh-ijkl").unwrap();
        let mut names = Vec::new();
        let out = literals.replace("abcdefgh-ijkl abcdefgh", |n| names.push(n.to_owned()));
        assert_eq!(out, "[SECRET:LONG] [SECRET:SHORT]");
        assert_eq!(names, ["LONG", "SHORT"]);
    }
}
