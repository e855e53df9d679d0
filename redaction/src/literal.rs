//! Caller-supplied secret values ([`crate::Redactor::with_secret`]), found in every
//! spelling the text we redact can hold them in.
//!
//! Transcripts are JSON lines, and judge prompts quote those lines inside JSON again, so
//! a value holding `"`, `\` or `/` appears as `\"`, `\\\"`, `\\\\`, `\/` and so on, once per
//! level of quoting. Each literal is therefore matched as a pattern that accepts any
//! number of backslashes before those characters (any escaping depth, not a fixed list of
//! spellings), any character as a `\uXXXX` escape (Python's `json.dumps`, JavaScript's
//! `JSON.stringify` of a lone surrogate, hand-escaped HTML-safe JSON), the HTML entities
//! of an attribute value, and a URL form in which every byte may be raw or
//! percent-encoded in either hex case (`encodeURIComponent`, `quote`, form encoding with
//! `+` for a space, a fully `%`-encoded value).

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
            .map(|(_, v)| format!("({}|{})", any_escaping(v), url_encoded(v)))
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

/// A pattern for `value` as written raw, JSON-escaped to any depth (each character also
/// as a `\uXXXX` escape) or as an HTML attribute value (entities).
fn any_escaping(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 16);
    for c in value.chars() {
        let raw = match c {
            '"' => r#"\\*"|&quot;|&#0*34;|&#[xX]0*22;"#.to_owned(),
            '\'' => r"'|&#0*39;|&#[xX]0*27;|&apos;".to_owned(),
            '&' => r"&|&amp;".to_owned(),
            '<' => r"<|&lt;".to_owned(),
            '>' => r">|&gt;".to_owned(),
            '\\' => r"\\+".to_owned(),
            '/' => r"\\*/".to_owned(),
            '\n' => r"\n|\\+n".to_owned(),
            '\r' => r"\r|\\+r".to_owned(),
            '\t' => r"\t|\\+t".to_owned(),
            c => regex::escape(c.encode_utf8(&mut [0; 4])),
        };
        let _ = write!(out, "(?:{raw}|{})", unicode_escape(c));
    }
    out
}

/// `c` as JSON `\uXXXX` escapes (a surrogate pair beyond the BMP), behind any number of
/// backslashes, hex digits in either case.
fn unicode_escape(c: char) -> String {
    let mut units = [0u16; 2];
    c.encode_utf16(&mut units)
        .iter()
        .map(|unit| format!(r"\\+u{}", hex_any_case(&format!("{unit:04x}"))))
        .collect()
}

/// `value` in a URL or form body: each byte raw or `%XX` in either hex case, a space
/// also `+`. Raw is allowed for every character but `%` and `+` (whose raw form means
/// something else there), so `quote`'s kept `/`, `encodeURIComponent`'s kept `!'()*`
/// and an IRI's raw non-ASCII letters (`café%20…`, as a browser shows a URL) match as
/// well as a value encoded whole.
fn url_encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 16);
    for c in value.chars() {
        let mut bytes = [0u8; 4];
        let encoded: String = c
            .encode_utf8(&mut bytes)
            .bytes()
            .map(|b| format!("%{}", hex_any_case(&format!("{b:02x}"))))
            .collect();
        let raw = match c {
            ' ' => Some(r"\+".to_owned()),
            '%' | '+' => None,
            c => Some(regex::escape(c.encode_utf8(&mut [0; 4]))),
        };
        match raw {
            Some(raw) => {
                let _ = write!(out, "(?:{raw}|{encoded})");
            }
            None => {
                let _ = write!(out, "(?:{encoded})");
            }
        }
    }
    out
}

/// A hex string as a pattern accepting each letter digit in either case.
fn hex_any_case(hex: &str) -> String {
    hex.chars()
        .map(|d| {
            if d.is_ascii_alphabetic() {
                format!("[{}{}]", d.to_ascii_lowercase(), d.to_ascii_uppercase())
            } else {
                d.to_string()
            }
        })
        .collect()
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
        let url = format!("?k={}&z", percent_encode(value, false));
        assert_eq!(literals.replace(&url, |_| {}), "?k=[SECRET:S]&z");
    }

    /// Every byte `%XX`-encoded, hex in the given case.
    fn percent_all(value: &str, lower: bool) -> String {
        value
            .bytes()
            .map(|b| {
                if lower {
                    format!("%{b:02x}")
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    /// RFC 3986 unreserved bytes kept, the rest `%XX` (`form`: a space as `+`).
    fn percent_encode(value: &str, form: bool) -> String {
        value
            .bytes()
            .map(|b| match b {
                b' ' if form => "+".to_owned(),
                b if b.is_ascii_alphanumeric() || b"-._~".contains(&b) => char::from(b).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect()
    }

    #[test]
    fn every_url_encoding_and_unicode_escape_is_found() {
        let value = "q\"ab (c)/d\\e'f*g!h é+";
        let mut literals = Literals::default();
        literals.add("S", value).unwrap();
        // encodeURIComponent keeps A-Z a-z 0-9 - _ . ! ~ * ' ( ) raw.
        let uri_component: String = value
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.!~*'()".contains(c) {
                    c.to_string()
                } else {
                    percent_all(c.encode_utf8(&mut [0; 4]), false)
                }
            })
            .collect();
        let unicode: String = value
            .chars()
            .map(|c| format!("\\u{:04x}", u32::from(c)))
            .collect();
        let html = value.replace('"', "&quot;").replace('\'', "&#39;");
        for spelled in [
            percent_all(value, false),
            percent_all(value, true),
            uri_component,
            percent_encode(value, true),
            unicode.clone(),
            unicode.to_uppercase().replace("\\U", "\\u"),
            escape(&unicode),
            html,
        ] {
            let text = format!("x={spelled}&y");
            assert_eq!(
                literals.replace(&text, |_| {}),
                "x=[SECRET:S]&y",
                "{spelled}"
            );
        }
    }

    #[test]
    fn a_url_spelling_is_found_with_raw_letters_and_a_raw_plus_or_percent_is_not_the_secret() {
        // Issue 33 item 5 (a surviving mutant): an IRI keeps non-ASCII letters raw and
        // encodes the space; before, only a value with every non-ASCII byte encoded
        // matched.
        let mut literals = Literals::default();
        literals.add("S", "café secret-42").unwrap();
        for spelled in [
            "café%20secret-42",
            "café+secret%2D42",
            "caf%C3%A9%20secret-42",
        ] {
            assert_eq!(
                literals.replace(&format!("?q={spelled}&z"), |_| {}),
                "?q=[SECRET:S]&z",
                "{spelled}"
            );
        }
        // In a URL a raw `+` is a space and a raw `%` starts an escape: `pa+ss%2Dword`
        // reads `pa ss-word`, not the secret `pa+ss-word`, and `50%off%2Dcode` is no
        // spelling of `50%off-code`; `%2B` and `%25` are.
        let mut literals = Literals::default();
        literals.add("P", "pa+ss-word").unwrap();
        literals.add("C", "50%off-code").unwrap();
        for kept in ["pa+ss%2Dword", "50%off%2Dcode"] {
            assert_eq!(literals.replace(kept, |_| {}), kept);
        }
        assert_eq!(
            literals.replace("pa%2Bss%2Dword 50%25off%2Dcode", |_| {}),
            "[SECRET:P] [SECRET:C]"
        );
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
