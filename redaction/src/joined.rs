//! The texts a summary's parts make together, scanned after each part on its own
//! ([`crate::Redactor::summary`]): issue 34 found summaries that passed although a
//! reader sees the secret, because the name that identifies a value sat further up
//! (`{"aws_secret_access_key": {"value": "..."}}`, `{"password": ["..."]}`), in a
//! sibling (`{"name": "API_KEY", "value": "..."}`, the Kubernetes env shape), or the
//! secret was cut across array items (a PEM block as a list of lines, a header split
//! at its spaces). Each such combination is scanned as the text it reads as; a hit that
//! its parts already reported is not new.

use serde_json::{Map, Value};

use crate::redactor::Redactor;
use crate::violation::{Part, Violation};

/// The keys a sibling pair names a value with (`{"name": N, "value": V}`).
const NAME_KEYS: [&str; 3] = ["name", "key", "Name"];
const VALUE_KEYS: [&str; 2] = ["value", "Value"];

impl Redactor {
    /// Every combination hit under `value` (at `path`), with `ancestors` the keys above
    /// it, nearest last.
    pub(crate) fn scan_joined(
        &self,
        path: &str,
        value: &Value,
        ancestors: &mut Vec<String>,
        out: &mut Vec<Violation>,
    ) {
        match value {
            Value::Object(map) => {
                self.scan_sibling_pair(path, map, out);
                for (key, item) in map {
                    let (shown, _) = self.rewrite(key);
                    ancestors.push(key.clone());
                    self.scan_joined(&format!("{path}.{shown}"), item, ancestors, out);
                    ancestors.pop();
                }
            }
            Value::Array(items) => {
                self.scan_lines(path, items, out);
                for (index, item) in items.iter().enumerate() {
                    self.scan_joined(&format!("{path}[{index}]"), item, ancestors, out);
                }
            }
            Value::String(_) | Value::Number(_) => {
                // Every key above the value (the nearest one's hit, when the part scan
                // paired them already, is the same violation and is not repeated).
                let Some(scalar) = scalar(value) else { return };
                for key in ancestors.iter().rev() {
                    self.report_new(
                        path,
                        &[key.as_str(), scalar.as_str()],
                        &pair(key, value),
                        out,
                    );
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// `{"name": N, "value": V}` read as `{N: V}`.
    fn scan_sibling_pair(&self, path: &str, map: &Map<String, Value>, out: &mut Vec<Violation>) {
        let name = NAME_KEYS
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str));
        let value = VALUE_KEYS.iter().find_map(|k| map.get(*k));
        if let (Some(name), Some(value)) = (name, value)
            && let Some(scalar) = scalar(value)
        {
            self.report_new(path, &[name, scalar.as_str()], &pair(name, value), out);
        }
    }

    /// An array's string items read as lines of one text (and as words of one line).
    fn scan_lines(&self, path: &str, items: &[Value], out: &mut Vec<Violation>) {
        let lines: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
        if lines.len() < 2 {
            return;
        }
        for joint in ["\n", " "] {
            self.report_new(path, &lines, &lines.join(joint), out);
        }
    }

    /// Reports the hits in `joined` that `parts` scanned one by one do not account for.
    pub(crate) fn report_new(
        &self,
        path: &str,
        parts: &[&str],
        joined: &str,
        out: &mut Vec<Violation>,
    ) {
        let mut known: Vec<String> = parts
            .iter()
            .flat_map(|part| self.findings(part))
            .map(|f| f.rule)
            .collect();
        for finding in self.findings(joined) {
            if let Some(at) = known.iter().position(|r| *r == finding.rule) {
                known.swap_remove(at);
                continue;
            }
            let new = Violation {
                path: path.to_owned(),
                part: Part::Value,
                rule: finding.rule,
            };
            if !out.contains(&new) {
                out.push(new);
            }
        }
    }
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(_) | Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// `{"key": value}` as compact JSON: how a reader (and the part scan) sees a pair.
fn pair(key: &str, value: &Value) -> String {
    let mut map = Map::new();
    map.insert(key.to_owned(), value.clone());
    Value::Object(map).to_string()
}
