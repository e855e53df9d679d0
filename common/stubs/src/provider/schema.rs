//! Schema-shaped answers for structured-output side requests (session titles
//! from codex and Claude Code, any `json_schema` response format): a JSON value
//! that fits the schema, so the client's parser accepts it.
//!
//! Covers the subset clients send (object/properties, enum, const, the scalar
//! types, arrays, `anyOf`/`oneOf`, nullable type lists); not a validator.

use serde_json::{Map, Value, json};

/// The text every schema string gets (codex shows it as the session title).
pub(crate) const STUB_STRING: &str = "Stub session title";

/// Deeper schemas are cut off with `null` so a self-referencing schema cannot
/// recurse forever.
const MAX_DEPTH: usize = 8;

/// A JSON value shaped like `schema`.
pub(crate) fn sample(schema: &Value) -> Value {
    sample_at(schema, 0)
}

fn sample_at(schema: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(fields) = schema.as_object() else {
        return json!(STUB_STRING);
    };
    if let Some(value) = fields.get("const") {
        return value.clone();
    }
    if let Some(first) = fields
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = fields
            .get(key)
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return sample_at(first, depth + 1);
        }
    }
    let ty = match fields.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // A type list such as ["string", "null"]: the first non-null type.
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if fields.contains_key("properties") => "object",
        _ => "string",
    };
    match ty {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = fields.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    out.insert(name.clone(), sample_at(prop, depth + 1));
                }
            }
            Value::Object(out)
        }
        "array" => Value::Array(Vec::new()),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!(STUB_STRING),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_a_title_schema() {
        let schema =
            json!({"type":"object","properties":{"title":{"type":"string"}},"required":["title"]});
        assert_eq!(sample(&schema), json!({"title": STUB_STRING}));
    }

    #[test]
    fn covers_the_common_keywords() {
        let schema = json!({"type":"object","properties":{
            "n":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
            "mode":{"enum":["fast","slow"]},"fixed":{"const":7},"maybe":{"type":["null","number"]},
            "either":{"anyOf":[{"type":"boolean"},{"type":"string"}]},"nested":{"properties":{"x":{"type":"null"}}}}});
        assert_eq!(
            sample(&schema),
            json!({"n":0,"ok":false,"tags":[],"mode":"fast","fixed":7,"maybe":0,"either":false,"nested":{"x":null}})
        );
        assert_eq!(sample(&Value::Null), json!(STUB_STRING));
    }
}
