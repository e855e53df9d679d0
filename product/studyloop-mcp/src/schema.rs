//! The tools' JSON Schemas, compiled once and checked with one validator
//! (`boon`, JSON Schema 2020-12, the MCP default): every `tools/call`'s
//! arguments against the `inputSchema` the server lists, and every
//! result's `structuredContent` against the tool's `outputSchema`. A
//! violation is described for a person: the argument, what it must be, what
//! it was, and how to fix the call.

use boon::{Compiler, Draft, ErrorKind, InstanceToken, SchemaIndex, Schemas, ValidationError};
use serde_json::{Value, json};

use crate::tools::ToolSpec;

/// A schema of ours that the validator refuses to compile (a bug here, not the caller's).
#[derive(Debug, thiserror::Error)]
#[error(
    "the {which} of tool `{tool}` is not a valid JSON Schema: {reason}; fix the schema in tools.rs"
)]
pub struct CompileError {
    /// The tool.
    tool: &'static str,
    /// `inputSchema` or `outputSchema`.
    which: &'static str,
    /// The validator's reason.
    reason: String,
}

/// One way a value breaks its schema, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where: `topics`, `milestones[1].title`, or `(arguments)` for the whole object.
    pub argument: String,
    /// What it must be (`an array`, `one of: draft, active`, `present`).
    pub expected: String,
    /// What it was (`a string "sql"`, `null`, `missing`).
    pub got: String,
    /// How to fix the call.
    pub fix: String,
}

/// The compiled schemas of every tool, in the order of `specs`.
pub struct Checker {
    schemas: Schemas,
    input: Vec<Compiled>,
    output: Vec<Compiled>,
}

/// One tool's schema: its name, the compiled form, and the JSON it was compiled from.
struct Compiled {
    tool: &'static str,
    index: SchemaIndex,
    source: Value,
}

fn compile(
    c: &mut Compiler,
    schemas: &mut Schemas,
    tool: &'static str,
    which: &'static str,
    schema: &Value,
) -> Result<SchemaIndex, CompileError> {
    let err = |e: &dyn std::fmt::Display| CompileError {
        tool,
        which,
        reason: format!("{e:#}"),
    };
    // A private URL per schema: nothing is fetched, every schema is self-contained.
    let url = format!("urn:studyloop-mcp:{tool}:{which}");
    c.add_resource(&url, schema.clone()).map_err(|e| err(&e))?;
    c.compile(&url, schemas).map_err(|e| err(&e))
}

impl Checker {
    /// Compile every tool's input and output schema.
    ///
    /// # Errors
    /// The first schema the validator cannot compile.
    pub fn new(specs: &[ToolSpec]) -> Result<Self, CompileError> {
        let mut c = Compiler::new();
        // Pinned, not the crate's moving default: MCP schemas without `$schema` are 2020-12.
        c.set_default_draft(Draft::V2020_12);
        let mut schemas = Schemas::new();
        let (mut input, mut output) = (Vec::new(), Vec::new());
        for t in specs {
            input.push(Compiled {
                tool: t.name,
                index: compile(&mut c, &mut schemas, t.name, "inputSchema", &t.schema)?,
                source: t.schema.clone(),
            });
            output.push(Compiled {
                tool: t.name,
                index: compile(&mut c, &mut schemas, t.name, "outputSchema", &t.output)?,
                source: t.output.clone(),
            });
        }
        Ok(Self {
            schemas,
            input,
            output,
        })
    }

    /// Check `args` against `tool`'s `inputSchema`; an unknown tool has nothing to check.
    ///
    /// # Errors
    /// Every violation found, in the validator's order.
    pub fn check_input(&self, tool: &str, args: &Value) -> Result<(), Vec<Violation>> {
        self.check(&self.input, tool, args)
    }

    /// Check a result's `structuredContent` (its success or failure envelope)
    /// against `tool`'s `outputSchema`.
    ///
    /// # Errors
    /// Every violation found.
    pub fn check_output(&self, tool: &str, content: &Value) -> Result<(), Vec<Violation>> {
        self.check(&self.output, tool, content)
    }

    fn check(&self, list: &[Compiled], tool: &str, v: &Value) -> Result<(), Vec<Violation>> {
        let Some(c) = list.iter().find(|c| c.tool == tool) else {
            return Ok(());
        };
        match self.schemas.validate(v, c.index) {
            Ok(()) => Ok(()),
            Err(e) => {
                let mut out = Vec::new();
                leaves(&e, v, &c.source, &mut out);
                Err(out)
            }
        }
    }
}

/// What a result that breaks its `outputSchema` got wrong (no fix: the caller did nothing wrong).
#[must_use]
pub fn mismatches(violations: &[Violation]) -> String {
    let said: Vec<String> = violations
        .iter()
        .take(5)
        .map(|v| format!("`{}` must be {}, got {}", v.argument, v.expected, v.got))
        .collect();
    said.join("; ")
}

/// `-32602`'s message and `data` for a call whose arguments break the schema.
#[must_use]
pub fn invalid_arguments(tool: &str, violations: &[Violation]) -> (String, Value) {
    let said: Vec<String> = violations
        .iter()
        .take(5)
        .map(|v| {
            format!(
                "argument `{}` must be {}, got {}; fix: {}",
                v.argument, v.expected, v.got, v.fix
            )
        })
        .collect();
    let more = violations.len().saturating_sub(5);
    let tail = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    let data: Vec<Value> = violations
        .iter()
        .map(
            |v| json!({"argument": v.argument, "expected": v.expected, "got": v.got, "fix": v.fix}),
        )
        .collect();
    (
        format!(
            "invalid arguments for `{tool}` (its inputSchema in tools/list): {}{tail}",
            said.join("; ")
        ),
        json!({"tool": tool, "violations": data}),
    )
}

/// The failures a person can act on: the tree's leaves, and an `anyOf` as one.
fn leaves(e: &ValidationError<'_, '_>, root: &Value, schema: &Value, out: &mut Vec<Violation>) {
    if e.causes.is_empty() || matches!(e.kind, ErrorKind::AnyOf | ErrorKind::OneOf(_)) {
        out.push(describe(e, root, schema));
    } else {
        for c in &e.causes {
            leaves(c, root, schema, out);
        }
    }
}

fn located<'v>(tokens: &[InstanceToken<'_>], root: &'v Value) -> Option<&'v Value> {
    tokens.iter().try_fold(root, |v, t| match t {
        InstanceToken::Prop(p) => v.get(p.as_ref()),
        InstanceToken::Item(i) => v.get(*i),
    })
}

fn name_of(tokens: &[InstanceToken<'_>]) -> String {
    tokens
        .iter()
        .enumerate()
        .map(|(n, t)| match t {
            InstanceToken::Prop(p) if n == 0 => p.to_string(),
            InstanceToken::Prop(p) => format!(".{p}"),
            InstanceToken::Item(i) => format!("[{i}]"),
        })
        .collect()
}

fn article(t: &str) -> String {
    match t {
        "null" => "null".to_owned(),
        "array" | "integer" | "object" => format!("an {t}"),
        _ => format!("a {t}"),
    }
}

/// `null`, `a string "sql"`, `a number 3.5`, cut to 40 characters.
fn got(v: Option<&Value>) -> String {
    let Some(v) = v else {
        return "nothing".to_owned();
    };
    let cut = |s: String| {
        if s.chars().count() > 40 {
            format!("{}…", s.chars().take(40).collect::<String>())
        } else {
            s
        }
    };
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => cut(format!("the string {}", Value::String(s.clone()))),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn fix_for_type(want: &str, name: &str, v: Option<&Value>) -> String {
    let omit = if matches!(v, Some(Value::Null)) {
        " (to leave it unset, omit it: null is not accepted)"
    } else {
        ""
    };
    let base = match (want, v) {
        ("array", Some(Value::String(s))) => format!(
            "pass a JSON array, e.g. \"{name}\": [{}]",
            Value::String(s.chars().take(30).collect())
        ),
        ("array", _) => format!("pass a JSON array, e.g. \"{name}\": [\"…\"]"),
        ("boolean", _) => format!("pass true or false, e.g. \"{name}\": true"),
        ("integer", _) => format!("pass a whole number without quotes, e.g. \"{name}\": 1"),
        ("string", _) => format!("pass a JSON string in quotes, e.g. \"{name}\": \"…\""),
        ("object", _) => format!("pass a JSON object, e.g. \"{name}\": {{}}"),
        (other, _) => format!("pass {}", article(other)),
    };
    format!("{base}{omit}")
}

/// The property names the schema accepts at `tokens` (through `properties` and `items`).
fn accepted_at(schema: &Value, tokens: &[InstanceToken<'_>]) -> Vec<String> {
    let here = tokens.iter().try_fold(schema, |s, t| match t {
        InstanceToken::Prop(p) => s.get("properties")?.get(p.as_ref()),
        InstanceToken::Item(_) => s.get("items"),
    });
    here.and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn describe(e: &ValidationError<'_, '_>, root: &Value, schema: &Value) -> Violation {
    let tokens = &e.instance_location.tokens;
    let here = located(tokens, root);
    let name = name_of(tokens);
    let at = |n: &str| {
        if name.is_empty() {
            n.to_owned()
        } else {
            format!("{name}.{n}")
        }
    };
    let whole = || {
        if name.is_empty() {
            "(arguments)".to_owned()
        } else {
            name.clone()
        }
    };
    let v = |argument: String, expected: String, got: String, fix: String| Violation {
        argument,
        expected,
        got,
        fix,
    };
    match &e.kind {
        ErrorKind::Type { want, .. } => {
            let wants: Vec<String> = want.iter().map(|t| t.to_string()).collect();
            let expected = wants
                .iter()
                .map(|w| article(w))
                .collect::<Vec<_>>()
                .join(" or ");
            let first = wants.first().map_or("value", String::as_str);
            let leaf = tokens.last().map_or("arguments".to_owned(), |t| match t {
                InstanceToken::Prop(p) => p.to_string(),
                InstanceToken::Item(i) => format!("[{i}]"),
            });
            v(
                whole(),
                expected,
                got(here),
                fix_for_type(first, &leaf, here),
            )
        }
        ErrorKind::Required { want } => {
            let missing: Vec<String> = want.iter().map(|w| at(w)).collect();
            v(
                missing.join("`, `"),
                "present (it is required)".to_owned(),
                "nothing".to_owned(),
                format!(
                    "add {}",
                    want.iter()
                        .map(|w| format!("\"{w}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        }
        ErrorKind::AdditionalProperties { got: extra } => {
            let accepted = accepted_at(schema, tokens);
            v(
                extra
                    .iter()
                    .map(|k| at(&k.chars().take(40).collect::<String>()))
                    .collect::<Vec<_>>()
                    .join("`, `"),
                "absent (not an accepted argument)".to_owned(),
                "an argument the tool does not have".to_owned(),
                if accepted.is_empty() {
                    "remove it; this takes no arguments".to_owned()
                } else {
                    format!("remove it; accepted: {}", accepted.join(", "))
                },
            )
        }
        ErrorKind::Enum { want } => {
            let words: Vec<String> = want
                .iter()
                .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_owned))
                .collect();
            v(
                whole(),
                format!("one of: {}", words.join(", ")),
                got(here),
                format!("use one of: {}", words.join(", ")),
            )
        }
        ErrorKind::Minimum { want, .. } => v(
            whole(),
            format!("at least {want}"),
            got(here),
            format!("use a value of {want} or more"),
        ),
        ErrorKind::Maximum { want, .. } => v(
            whole(),
            format!("at most {want}"),
            got(here),
            format!("use a value of {want} or less"),
        ),
        ErrorKind::AnyOf | ErrorKind::OneOf(_) => {
            let mut alts = Vec::new();
            for c in &e.causes {
                let mut inner = Vec::new();
                leaves(c, root, schema, &mut inner);
                // Said of this same value, an alternative needs no name; of a part, it does.
                alts.extend(inner.into_iter().map(|i| {
                    if i.argument == whole() {
                        i.expected
                    } else {
                        format!("`{}` {}", i.argument, i.expected)
                    }
                }));
            }
            v(
                whole(),
                format!("one of the accepted forms ({})", alts.join(", or ")),
                got(here),
                "match one of those forms".to_owned(),
            )
        }
        other => v(
            whole(),
            format!("valid: {other}"),
            got(here),
            "see the tool's schema in tools/list".to_owned(),
        ),
    }
}
