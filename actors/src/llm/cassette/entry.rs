//! One cassette line: the cassette's salt (always its first line), or the redacted
//! canonical request and its key with the answer (text and usage), or a cell's seed;
//! each sealed by a digest over the rest of the line.
//!
//! The canonical request is the wire, model, system, messages and every other body
//! field (`max_tokens`, `response_format`), object keys sorted. The base URL, the key
//! and the headers are not part of it: a replay reaches no server, and a key never
//! enters a cassette. The line stores it redacted; the key is a salted sha256 of it
//! *before* redaction (issue 33 §4), so two requests that differ only inside a redacted
//! span (two home paths, two `token=` values) get two keys and never replay each
//! other's answer, while the random salt (one per cassette) keeps a precomputed table
//! from reading a secret back out of a key. The price: a reader can no longer re-derive
//! a key from the line, so an edited request is caught by the seal alone.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use studyloop_redaction::Redactor;
use studyloop_redaction::pinned::digest;

use crate::budget::MAX_PLAUSIBLE_TOKENS_PER_TURN;
use crate::llm::{ChatResponse, Wire};
use crate::transcript::Usage;

/// The line format this build writes and reads (1: keyed on the redacted request,
/// no salt; refused with the fix, see [`Refused::OldFormat`]).
pub(crate) const FORMAT: u32 = 2;

/// A cassette's salt: 32 random bytes as lowercase hex, drawn by its first recorder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Salt(String);

impl Salt {
    /// A fresh salt from the OS random source.
    pub(crate) fn fresh() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
        Ok(Self(hex(&bytes)))
    }

    /// The salt a line holds, when it is 64 lowercase hex digits.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        is_sha256_hex(text).then(|| Self(text.to_owned()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A request as the cassette knows it: redacted canonical form and its salted key.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) canonical: Value,
    pub(crate) key: String,
}

impl Request {
    /// `body` (the JSON the client sends) on `wire`, keyed under `salt` and redacted.
    /// With an `identity`, the prompt (`system`, `messages`) is replaced by it: a
    /// caller whose prompt carries run-specific text (the council's bundle: run id,
    /// date, timings) names what makes two requests the same question.
    pub(crate) fn new(
        wire: Wire,
        body: &Value,
        identity: Option<&Value>,
        redactor: &Redactor,
        salt: &Salt,
    ) -> Self {
        let mut body = body.clone();
        let mut raw = Map::new();
        if let (Some(identity), Some(fields)) = (identity, body.as_object_mut()) {
            fields.remove("system");
            fields.remove("messages");
            raw.insert("identity".into(), identity.clone());
        }
        raw.insert("wire".into(), Value::from(wire_name(wire)));
        raw.insert("body".into(), body);
        let raw = sorted(Value::Object(raw));
        let key = key_of(salt, &raw);
        Self {
            canonical: redacted(&raw, redactor),
            key,
        }
    }
}

/// The salted hash of a canonical request *before* redaction. A domain tag and the
/// salt's fixed length keep the salt and the request from running into each other.
pub(crate) fn key_of(salt: &Salt, raw: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"studyloop-cassette-key-v2\0");
    hasher.update(salt.as_str().as_bytes());
    hasher.update(raw.to_string().as_bytes());
    hex(&hasher.finalize())
}

fn wire_name(wire: Wire) -> &'static str {
    match wire {
        Wire::OpenAiCompat {
            max_completion_tokens: false,
        } => "openai-chat",
        Wire::OpenAiCompat {
            max_completion_tokens: true,
        } => "openai-chat-max-completion-tokens",
        Wire::AnthropicCompat => "anthropic-messages",
    }
}

/// `value` with every string and object key redacted and keys sorted.
pub(crate) fn redacted(value: &Value, redactor: &Redactor) -> Value {
    match value {
        Value::String(s) => Value::String(redactor.redact(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| redacted(v, redactor)).collect()),
        Value::Object(map) => sorted(Value::Object(
            map.iter()
                .map(|(k, v)| (redactor.redact(k), redacted(v, redactor)))
                .collect(),
        )),
        other => other.clone(),
    }
}

/// `value` with every object's keys in sorted order, whatever serde_json's map keeps.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// A recorded answer: the redacted text and the usage as the server reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    pub(crate) text: String,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
}

impl Answer {
    pub(crate) fn of(response: &ChatResponse, redactor: &Redactor) -> Self {
        Self {
            text: redactor.redact(&response.text),
            input_tokens: response.usage.input_tokens,
            output_tokens: response.usage.output_tokens,
        }
    }

    pub(crate) fn response(&self) -> ChatResponse {
        ChatResponse {
            text: self.text.clone(),
            usage: Usage {
                input_tokens: self.input_tokens,
                output_tokens: self.output_tokens,
            },
        }
    }
}

/// What one line holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) enum Entry {
    /// The cassette's salt (its first line, exactly once).
    Salt { salt: String },
    /// A request and the answer it got.
    Chat {
        scope: String,
        key: String,
        request: Value,
        answer: Answer,
    },
    /// The seed a cell drew (its stub's replies depend on it).
    Seed { scope: String, seed: u64 },
}

/// One line: format, entry, and the digest sealing both.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    v: u32,
    entry: Entry,
    digest: String,
}

fn seal(entry: &Entry) -> String {
    let value = serde_json::to_value(entry).unwrap_or(Value::Null);
    digest(sorted(value).to_string().as_bytes())
}

/// `entry` as one line, newline included.
pub(crate) fn line(entry: Entry) -> Vec<u8> {
    let digest = seal(&entry);
    let mut bytes = serde_json::to_vec(&Line {
        v: FORMAT,
        entry,
        digest,
    })
    .unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Why a complete line was refused: corrupt (not an entry), tampered (a check failed),
/// or written by an older build in a format this one no longer reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    Corrupt(String),
    Tampered(String),
    OldFormat(u32),
}

/// The first string in `value` (keys included) that `redactor` would rewrite.
fn unredacted<'a>(value: &'a Value, redactor: &Redactor) -> Option<&'a str> {
    match value {
        Value::String(s) => (redactor.redact(s) != *s).then_some(s.as_str()),
        Value::Array(items) => items.iter().find_map(|v| unredacted(v, redactor)),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            (redactor.redact(k) != *k)
                .then_some(k.as_str())
                .or_else(|| unredacted(v, redactor))
        }),
        _ => None,
    }
}

/// Parses and checks one complete line: its format, its seal, its key, plausible
/// usage, and that no string in it is one the redaction rules would rewrite. The seal
/// is an unkeyed digest, so it detects corruption, not forgery: a line edited and
/// re-sealed by hand passes it, and this last check is what keeps a key smuggled
/// into a re-sealed answer from being replayed into a bundle.
pub(crate) fn parse(bytes: &[u8], redactor: &Redactor) -> Result<Entry, Refused> {
    #[derive(Deserialize)]
    struct Version {
        v: u32,
    }
    // The version first: a format-1 line (no salt kind, another key) is named as old,
    // with the fix, rather than as a corrupt entry.
    if let Ok(Version { v }) = serde_json::from_slice(bytes)
        && v < FORMAT
    {
        return Err(Refused::OldFormat(v));
    }
    let line: Line = serde_json::from_slice(bytes).map_err(|e| Refused::Corrupt(e.to_string()))?;
    if line.v != FORMAT {
        return Err(Refused::Corrupt(format!(
            "format {} (this build reads format {FORMAT})",
            line.v
        )));
    }
    if seal(&line.entry) != line.digest {
        return Err(Refused::Tampered(
            "the entry does not match its digest".into(),
        ));
    }
    if let Entry::Salt { salt } = &line.entry
        && Salt::parse(salt).is_none()
    {
        return Err(Refused::Tampered(format!(
            "the salt {salt:?} is not 64 lowercase hex digits"
        )));
    }
    if let Entry::Chat {
        key,
        request,
        answer,
        ..
    } = &line.entry
    {
        if !is_sha256_hex(key) {
            return Err(Refused::Tampered(format!(
                "the key {key:?} is not a sha256 (64 lowercase hex digits)"
            )));
        }
        let text = Value::String(answer.text.clone());
        if let Some(s) = unredacted(request, redactor).or_else(|| unredacted(&text, redactor)) {
            let shown = redactor.redact(s);
            return Err(Refused::Tampered(format!(
                "it holds text the redaction rules rewrite (as {shown:?}): a recorder writes every string redacted, so it was written by hand"
            )));
        }
        for (field, n) in [
            ("input_tokens", answer.input_tokens),
            ("output_tokens", answer.output_tokens),
        ] {
            if n.is_some_and(|n| n > MAX_PLAUSIBLE_TOKENS_PER_TURN) {
                return Err(Refused::Tampered(format!(
                    "{field} is over the plausible maximum of {MAX_PLAUSIBLE_TOKENS_PER_TURN}"
                )));
            }
        }
    }
    Ok(line.entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use studyloop_redaction::RedactionRules;

    fn redactor() -> Redactor {
        Redactor::new(&RedactionRules::load_default().unwrap())
    }

    const OA: Wire = Wire::OpenAiCompat {
        max_completion_tokens: false,
    };

    #[test]
    fn keys_ignore_map_order_and_see_every_field() {
        let r = redactor();
        let salt = Salt::fresh().unwrap();
        let a = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5});
        let b = serde_json::json!({"max_tokens": 5, "messages": [{"content": "hi", "role": "user"}], "model": "m"});
        assert_eq!(
            Request::new(OA, &a, None, &r, &salt).key,
            Request::new(OA, &b, None, &r, &salt).key
        );
        let c = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 6});
        assert_ne!(
            Request::new(OA, &a, None, &r, &salt).key,
            Request::new(OA, &c, None, &r, &salt).key
        );
        assert_ne!(
            Request::new(OA, &a, None, &r, &salt).key,
            Request::new(Wire::AnthropicCompat, &a, None, &r, &salt).key
        );
    }

    #[test]
    fn an_identity_replaces_the_prompt() {
        let r = redactor();
        let salt = Salt::fresh().unwrap();
        let id = serde_json::json!({"cell": "x"});
        let a =
            serde_json::json!({"model": "m", "system": "run 1", "messages": [], "max_tokens": 5});
        let b =
            serde_json::json!({"model": "m", "system": "run 2", "messages": [1], "max_tokens": 5});
        assert_eq!(
            Request::new(OA, &a, Some(&id), &r, &salt).key,
            Request::new(OA, &b, Some(&id), &r, &salt).key
        );
        assert_ne!(
            Request::new(OA, &a, None, &r, &salt).key,
            Request::new(OA, &b, None, &r, &salt).key
        );
    }

    #[test]
    fn lines_round_trip_and_every_edit_is_refused() {
        let r = redactor();
        let salt = Salt::fresh().unwrap();
        let request = Request::new(OA, &serde_json::json!({"model": "m"}), None, &r, &salt);
        let entry = Entry::Chat {
            scope: "s".into(),
            key: request.key.clone(),
            request: request.canonical.clone(),
            answer: Answer {
                text: "an answer".into(),
                input_tokens: Some(3),
                output_tokens: None,
            },
        };
        let bytes = line(entry.clone());
        assert_eq!(parse(bytes.trim_ascii_end(), &r), Ok(entry));
        let text = String::from_utf8(bytes).unwrap();
        let edited = text.replace("an answer", "an edited answer");
        assert!(matches!(
            parse(edited.as_bytes(), &r),
            Err(Refused::Tampered(_))
        ));
        let edited = text.replace("\"model\":\"m\"", "\"model\":\"n\"");
        assert!(matches!(
            parse(edited.as_bytes(), &r),
            Err(Refused::Tampered(_))
        ));
        assert!(matches!(
            parse(&text.as_bytes()[..text.len() / 2], &r),
            Err(Refused::Corrupt(_))
        ));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            parse(deep.as_bytes(), &r),
            Err(Refused::Corrupt(_))
        ));
    }

    /// A usage count at the plausible maximum is kept; one over it is refused by
    /// field (issue 33 item 5: the bound `>` mutated to `>=` or `==` survived).
    #[test]
    fn a_usage_count_over_the_plausible_maximum_is_refused_and_one_at_it_kept() {
        let r = redactor();
        let salt = Salt::fresh().unwrap();
        let request = Request::new(OA, &serde_json::json!({"model": "m"}), None, &r, &salt);
        let with = |input: u64, output: u64| Entry::Chat {
            scope: "s".into(),
            key: request.key.clone(),
            request: request.canonical.clone(),
            answer: Answer {
                text: "an answer".into(),
                input_tokens: Some(input),
                output_tokens: Some(output),
            },
        };
        let max = MAX_PLAUSIBLE_TOKENS_PER_TURN;
        for (input, output) in [(max, max), (max, 1), (1, max)] {
            let entry = with(input, output);
            assert_eq!(
                parse(line(entry.clone()).trim_ascii_end(), &r),
                Ok(entry),
                "{input}/{output}"
            );
        }
        for (input, output, field) in [
            (max + 1, 1, "input_tokens"),
            (1, max + 1, "output_tokens"),
            (u64::MAX, 1, "input_tokens"),
        ] {
            let got = parse(line(with(input, output)).trim_ascii_end(), &r);
            assert!(
                matches!(&got, Err(Refused::Tampered(why)) if why.starts_with(field)),
                "{input}/{output}: {got:?}"
            );
        }
    }
}
