//! The envelope's two shapes ([`crate::envelope`]) as JSON Schema values, for a door
//! that publishes a schema per command: `studyloop-mcp` lists each tool's
//! `outputSchema` as [`tool_output`], so its `structuredContent` (the success
//! envelope around the tool's result, or the failure envelope) validates against what
//! `tools/list` shows. A client such as the official TypeScript SDK checks a tool
//! result's `structuredContent` against the `outputSchema` even when `isError` is
//! set, so the failure shape has to be one of the schema's branches.
//!
//! These are the `$defs/success` and `$defs/failure` of
//! `docs/schemas/envelope.schema.json`, with the command fixed to one name; a test
//! keeps the two equal.

use serde_json::{Value, json};

use crate::envelope::{Code, SCHEMA_VERSION};

/// The failure shape `{"error": {"code", "message", "details"}}` (`$defs/failure`,
/// with the closed code set written out).
#[must_use]
pub fn failure() -> Value {
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    json!({
        "type": "object",
        "required": ["error"],
        "additionalProperties": false,
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "details"],
                "additionalProperties": false,
                "properties": {
                    "code": {"enum": codes},
                    "message": {"type": "string", "minLength": 1},
                    "details": {"type": ["object", "null"]}
                }
            }
        }
    })
}

/// The success shape of `command` whose `result` is described by `result`
/// (`$defs/success` with `command` fixed to this one name).
#[must_use]
pub fn success(command: &str, result: Value) -> Value {
    json!({
        "type": "object",
        "required": ["schema_version", "command", "result"],
        "additionalProperties": false,
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "command": {"const": command},
            "result": result
        }
    })
}

/// What a tool answering as `command` lists as its `outputSchema`: an object that is
/// its success envelope or the failure envelope (the MCP spec wants an object schema
/// at the root, so `type` is there as well as on each branch).
#[must_use]
pub fn tool_output(command: &str, result: Value) -> Value {
    json!({"type": "object", "oneOf": [success(command, result), failure()]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{self, Failure, published};

    /// `$defs/NAME` of the published schema, its `code` reference replaced by the
    /// code list and its `command` reference by one name.
    fn published_def(name: &str, command: &str) -> Value {
        let s = published();
        let mut def = s["$defs"][name].clone();
        if name == "failure" {
            def["properties"]["error"]["properties"]["code"] =
                json!({"enum": s["$defs"]["code"]["enum"]});
        } else {
            def["properties"]["command"] = json!({"const": command});
        }
        def
    }

    #[test]
    fn the_shapes_are_the_published_defs() {
        assert_eq!(failure(), published_def("failure", ""));
        assert_eq!(
            success("plan.list", json!(true)),
            published_def("success", "plan.list")
        );
    }

    #[test]
    fn a_tool_output_accepts_its_envelopes_and_nothing_else() {
        let mut c = boon::Compiler::new();
        c.set_default_draft(boon::Draft::V2020_12);
        let result =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        c.add_resource("urn:test:tool", tool_output("plan.list", result))
            .expect("resource");
        let mut schemas = boon::Schemas::new();
        let idx = c.compile("urn:test:tool", &mut schemas).expect("compiles");
        let good = [
            envelope::success("plan.list", json!({"n": 1})),
            Failure::new(Code::NotFound, "no plan `x`").to_json(),
            Failure::new(Code::Conflict, "stale")
                .with_details(json!({"current_revision": "r1"}))
                .to_json(),
        ];
        for v in &good {
            assert!(schemas.validate(v, idx).is_ok(), "{v}");
        }
        let bad = [
            envelope::success("plan.show", json!({"n": 1})),
            envelope::success("plan.list", json!({"n": "one"})),
            json!({"n": 1}),
            json!({"error": {"code": "nope", "message": "x", "details": null}}),
            json!({"error": {"code": "internal", "message": "", "details": null}}),
        ];
        for v in &bad {
            assert!(schemas.validate(v, idx).is_err(), "accepted {v}");
        }
    }
}
