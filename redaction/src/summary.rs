//! The redacted summary: the only artefact allowed to leave a private evidence bundle.
//!
//! [`redact_summary`] keeps the rules' allow-listed top-level keys only, then scans every
//! kept key and value, recursively through nested maps and arrays, and fails with every
//! violation at once. Each map entry is also scanned as the pair it is (`{"key":value}`),
//! because a secret is often recognisable only by the name it is stored under
//! (`{"aws_secret_access_key": "..."}`): keys and values scanned apart would both pass.
//! Then the combinations a reader sees (`crate::joined`: a value under a name further
//! up, a name/value sibling pair, a secret cut across array items), and last the
//! summary as written, compact and pretty. It never rewrites a value into a "clean"
//! one: a summary that needed rewriting was built wrong, and the fix belongs where it
//! was built.

use serde_json::{Map, Value};

use crate::error::RedactionError;
use crate::redactor::Redactor;
use crate::rules::RedactionRules;
pub use crate::violation::{Part, Violation};

/// Keeps `rules`' allow-listed keys of `summary` and proves nothing in them leaks.
///
/// # Errors
/// [`RedactionError::NotAnObject`] when `summary` is not an object;
/// [`RedactionError::Leak`] listing every violation in the kept keys and values.
pub fn redact_summary(
    summary: &Value,
    rules: &RedactionRules,
) -> Result<Map<String, Value>, RedactionError> {
    Redactor::new(rules).summary(summary)
}

impl Redactor {
    /// [`redact_summary`] with this redactor, so caller-supplied secret values are
    /// caught too.
    ///
    /// # Errors
    /// As [`redact_summary`].
    pub fn summary(&self, summary: &Value) -> Result<Map<String, Value>, RedactionError> {
        let Value::Object(map) = summary else {
            return Err(RedactionError::NotAnObject {
                found: kind(summary),
            });
        };
        // Collected through a BTreeMap so the summary's top-level keys come out sorted
        // whatever `serde_json/preserve_order` says (the ACP crate turns it on for every
        // crate in a workspace build): the summary is a shareable artefact and must be
        // byte-stable.
        let kept: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| self.allowed_fields().contains(k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let mut violations = Vec::new();
        for (key, value) in &kept {
            // Allow-listed keys are fixed words, but scanning them keeps the rule simple:
            // every key that leaves is scanned.
            self.scan_entry("$", key, value, &mut violations);
        }
        let whole = Value::Object(kept.clone());
        self.scan_joined("$", &whole, &mut Vec::new(), &mut violations);
        if violations.is_empty() {
            // Last, the files as written: compact and pretty JSON are what leave.
            for text in [whole.to_string(), pretty(&whole)] {
                self.report_new("$", &[], &text, &mut violations);
            }
        }
        if violations.is_empty() {
            Ok(kept)
        } else {
            Err(RedactionError::Leak { violations })
        }
    }

    fn scan_entry(&self, parent: &str, key: &str, value: &Value, out: &mut Vec<Violation>) {
        let (shown, findings) = self.rewrite(key);
        let path = format!("{parent}.{shown}");
        out.extend(findings.into_iter().map(|f| Violation {
            path: path.clone(),
            part: Part::Key,
            rule: f.rule,
        }));
        self.scan_value(&path, value, out);
        self.scan_pair(&path, key, value, out);
    }

    /// The hits only the key and a scalar value together produce, reported on the value.
    fn scan_pair(&self, path: &str, key: &str, value: &Value, out: &mut Vec<Violation>) {
        let scalar = match value {
            Value::String(text) => text.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(_) | Value::Null | Value::Array(_) | Value::Object(_) => return,
        };
        let mut single: Vec<String> = self
            .findings(key)
            .into_iter()
            .chain(self.findings(&scalar))
            .map(|f| f.rule)
            .collect();
        let mut pair = Map::new();
        pair.insert(key.to_owned(), value.clone());
        for finding in self.findings(&Value::Object(pair).to_string()) {
            // A hit the key or the value already reported on its own is not new.
            if let Some(at) = single.iter().position(|r| *r == finding.rule) {
                single.swap_remove(at);
                continue;
            }
            out.push(Violation {
                path: path.to_owned(),
                part: Part::Value,
                rule: finding.rule,
            });
        }
    }

    fn scan_value(&self, path: &str, value: &Value, out: &mut Vec<Violation>) {
        match value {
            Value::String(text) => out.extend(self.findings(text).into_iter().map(|f| Violation {
                path: path.to_owned(),
                part: Part::Value,
                rule: f.rule,
            })),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.scan_value(&format!("{path}[{index}]"), item, out);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    self.scan_entry(path, key, item, out);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

fn pretty(value: &Value) -> String {
    // Serialising a `Value` cannot fail; an empty text would scan clean, so say so.
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
