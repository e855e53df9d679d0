//! Reading what a real client sent: the three request shapes (Chat Completions,
//! Responses, Anthropic Messages) reduced to the facts the reply needs.
//!
//! Tolerant by design (real CLIs send tools, `role: system`/`developer` messages,
//! system blocks, tool results, xAI's `search_parameters`…), strict only where the
//! real vendor API is strict and a client bug would otherwise hide: Chat needs
//! `messages`, Messages needs `messages` and `max_tokens` and must start with a
//! user message (after any `system` entries).

use serde_json::Value;

use crate::reply::{count_tokens, persona, real_user_text};

/// The facts of one model request.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Exchange {
    pub model: Option<String>,
    pub stream: bool,
    pub message_count: u64,
    pub user_turns: u64,
    pub last_user_text: Option<String>,
    /// The last user text block holding a drill's `[practice_check]` block,
    /// wrapped or not (a harness may wrap a paste as `<pasted_content …>`,
    /// which is not real user text).
    pub practice_text: Option<String>,
    pub assistant_messages: u64,
    /// Words across every text the model reads: system/instructions and every
    /// message's text blocks, any role (see `reply::count_tokens`).
    pub input_tokens: u64,
    pub persona: Option<String>,
    /// The JSON schema of a structured-output side request, if one was asked for.
    pub schema: Option<Value>,
    /// The output cap the client asked for, under any of the three names.
    pub max_tokens: Option<u64>,
    /// The first struggle of the product's resume section, when a text the
    /// model reads carries one (`crate::recall`).
    pub recall: Option<String>,
    /// An assistant message already holds the review (`crate::recall::is_review`).
    pub reviewed: bool,
    /// The names of the tools the request offers (`tools[].name`,
    /// `tools[].function.name`, and a namespace entry's tools as
    /// `<namespace>__<name>`, the name codex routes MCP tools by).
    pub tools: Vec<String>,
    /// Those of [`Self::tools`] that came from a namespace entry.
    pub namespaced: Vec<String>,
    /// Tool results in the conversation after the last real user text.
    pub tool_results: u64,
    /// The text of the last of those results.
    pub last_tool_result: Option<String>,
}

/// The text blocks of an OpenAI or Anthropic `content` field: a plain string, or
/// the `text` of `text`/`input_text`/`output_text` parts (tool calls, tool
/// results and images carry no learner text).
fn texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => {
                    let kind = o.get("type").and_then(Value::as_str);
                    matches!(kind, Some("text" | "input_text" | "output_text"))
                        .then(|| o.get("text").and_then(Value::as_str))
                        .flatten()
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[derive(Default)]
struct Tally {
    recall: Option<String>,
    reviewed: bool,
    words: u64,
    users: u64,
    last_user: Option<String>,
    practice: Option<String>,
    assistants: u64,
    count: u64,
    results: u64,
    last_result: Option<String>,
}

impl Tally {
    fn system(&mut self, content: &Value) {
        let blocks = texts(content);
        self.recalls(&blocks);
        self.words += blocks.iter().map(|t| count_tokens(t)).sum::<u64>();
    }

    fn recalls(&mut self, blocks: &[&str]) {
        if self.recall.is_none() {
            self.recall = blocks.iter().find_map(|t| crate::recall::struggle(t));
        }
    }

    /// A tool result (chat `role: tool`, Responses `function_call_output`,
    /// an Anthropic `tool_result` block) answering an earlier call.
    fn tool_result(&mut self, output: &Value) {
        self.results += 1;
        self.last_result = Some(texts(output).concat());
    }

    fn message(&mut self, role: Option<&str>, content: &Value) {
        self.count += 1;
        let blocks = texts(content);
        self.recalls(&blocks);
        self.words += blocks.iter().map(|t| count_tokens(t)).sum::<u64>();
        match role {
            Some("user") => {
                let results = content
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
                for block in results {
                    self.tool_result(block.get("content").unwrap_or(&Value::Null));
                }
                if let Some(block) = blocks.iter().rev().find(|b| b.contains("[practice_check]")) {
                    self.practice = Some((*block).to_owned());
                }
                if let Some(text) = real_user_text(blocks) {
                    self.users += 1;
                    self.last_user = Some(text.to_owned());
                    // A new turn: earlier results answered earlier calls.
                    self.results = 0;
                    self.last_result = None;
                }
            }
            Some("tool") => self.tool_result(content),
            Some("assistant") => {
                self.assistants += 1;
                self.reviewed |= blocks.iter().any(|t| crate::recall::is_review(t));
            }
            _ => {}
        }
    }

    fn finish(self, body: &Value, raw: &str) -> Exchange {
        let (tools, namespaced) = tool_names(body);
        Exchange {
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
            message_count: self.count,
            user_turns: self.users,
            last_user_text: self.last_user,
            practice_text: self.practice,
            assistant_messages: self.assistants,
            input_tokens: self.words,
            persona: persona(raw).map(str::to_owned),
            schema: schema_of(body).cloned(),
            max_tokens: ["max_tokens", "max_completion_tokens", "max_output_tokens"]
                .iter()
                .find_map(|k| body.get(*k).and_then(Value::as_u64)),
            recall: self.recall,
            reviewed: self.reviewed,
            tools,
            namespaced,
            tool_results: self.results,
            last_tool_result: self.last_result,
        }
    }
}

/// Joins a Responses `namespace` tool entry's name and a nested tool's name
/// (`mcp__studyloop` + `log_topic`); a call splits it back (`render_tool`).
pub(crate) const NAMESPACE_SEPARATOR: &str = "__";

/// The names of the tools a request offers, in order: `name` (Responses,
/// Anthropic), `function.name` (Chat), and the `tools` of a namespace entry.
fn tool_names(body: &Value) -> (Vec<String>, Vec<String>) {
    fn walk(tools: &Value, namespace: Option<&str>, out: &mut Vec<String>) {
        for t in tools.as_array().into_iter().flatten() {
            let name = t
                .get("name")
                .or_else(|| t.pointer("/function/name"))
                .and_then(Value::as_str);
            if let Some(nested) = t.get("tools") {
                walk(nested, name, out);
                continue;
            }
            out.extend(name.map(|n| match namespace {
                Some(ns) => format!("{ns}{NAMESPACE_SEPARATOR}{n}"),
                None => n.to_owned(),
            }));
        }
    }
    let mut out = Vec::new();
    walk(body.get("tools").unwrap_or(&Value::Null), None, &mut out);
    let namespaced = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t.get("name")?.as_str()?, t.get("tools")?.as_array()?)))
        .flat_map(|(ns, nested)| {
            nested.iter().filter_map(move |n| {
                Some(format!(
                    "{ns}{NAMESPACE_SEPARATOR}{}",
                    n.get("name")?.as_str()?
                ))
            })
        })
        .collect();
    (out, namespaced)
}

/// Why a request body was refused (answered 400 `invalid_request_error` with
/// this message, as the real APIs do).
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestError {
    /// The body is JSON but not an object.
    #[error("the request body must be a JSON object")]
    NotObject,
    /// A required field is absent or of the wrong type.
    #[error("{field}: field required ({expected})")]
    Missing {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The first user/assistant message is not a user message.
    #[error("messages: first message must use the \"user\" role, got {0:?}")]
    FirstRole(String),
}

fn object(body: &Value) -> Result<&serde_json::Map<String, Value>, RequestError> {
    body.as_object().ok_or(RequestError::NotObject)
}

const MESSAGES_REQUIRED: RequestError = RequestError::Missing {
    field: "messages",
    expected: "a JSON array",
};

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// Chat Completions: `messages` (required, array); system/developer messages
/// count as system text.
pub(crate) fn chat(body: &Value, raw: &str) -> Result<Exchange, RequestError> {
    let messages = object(body)?
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(MESSAGES_REQUIRED)?;
    let mut tally = Tally::default();
    for m in messages {
        let content = m.get("content").unwrap_or(&Value::Null);
        match role(m) {
            Some("system" | "developer") => {
                tally.count += 1;
                tally.system(content);
            }
            r => tally.message(r, content),
        }
    }
    Ok(tally.finish(body, raw))
}

/// Responses: `input` (a string = one user message, or an array of items;
/// items without a role, such as function-call outputs, count but carry no
/// turn) plus `instructions`.
pub(crate) fn responses(body: &Value, raw: &str) -> Result<Exchange, RequestError> {
    let fields = object(body)?;
    let mut tally = Tally::default();
    if let Some(instructions) = fields.get("instructions") {
        tally.system(instructions);
    }
    match fields.get("input") {
        Some(text @ Value::String(_)) => tally.message(Some("user"), text),
        Some(Value::Array(items)) => {
            for item in items {
                let content = item.get("content").unwrap_or(&Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call_output") {
                    tally.count += 1;
                    tally.tool_result(item.get("output").unwrap_or(&Value::Null));
                    continue;
                }
                match role(item) {
                    Some("system" | "developer") => {
                        tally.count += 1;
                        tally.system(content);
                    }
                    r => tally.message(r, content),
                }
            }
        }
        _ => {
            return Err(RequestError::Missing {
                field: "input",
                expected: "a string or an array of items",
            });
        }
    }
    Ok(tally.finish(body, raw))
}

/// Anthropic Messages: `system` (string or blocks), `messages` (required),
/// `max_tokens` (required, as the real API, except when counting tokens).
/// `role: system` entries inside `messages` (Claude Code's environment block)
/// are tolerated; the first user/assistant message must be a user message, as
/// the real API requires.
pub(crate) fn messages(body: &Value, raw: &str, counting: bool) -> Result<Exchange, RequestError> {
    let fields = object(body)?;
    let messages = fields
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(MESSAGES_REQUIRED)?;
    if !counting && !fields.get("max_tokens").is_some_and(Value::is_u64) {
        return Err(RequestError::Missing {
            field: "max_tokens",
            expected: "a non-negative integer",
        });
    }
    let first = messages.iter().filter_map(role).find(|r| *r != "system");
    if let Some(first) = first.filter(|r| *r != "user") {
        return Err(RequestError::FirstRole(first.to_owned()));
    }
    let mut tally = Tally::default();
    if let Some(system) = fields.get("system") {
        tally.system(system);
    }
    for m in messages {
        let content = m.get("content").unwrap_or(&Value::Null);
        match role(m) {
            Some("system") => {
                tally.count += 1;
                tally.system(content);
            }
            r => tally.message(r, content),
        }
    }
    Ok(tally.finish(body, raw))
}

/// The JSON schema of a structured-output request in any of the three shapes:
/// Anthropic `output_config.format`, Responses `text.format`, Chat
/// `response_format.json_schema`; only `type: json_schema` counts.
fn schema_of(body: &Value) -> Option<&Value> {
    let anthropic = body.pointer("/output_config/format");
    let responses = body.pointer("/text/format");
    for format in [anthropic, responses].into_iter().flatten() {
        if format.get("type").and_then(Value::as_str) == Some("json_schema") {
            return Some(format.get("schema").unwrap_or(&Value::Null));
        }
    }
    let chat = body.get("response_format")?;
    (chat.get("type").and_then(Value::as_str) == Some("json_schema"))
        .then(|| chat.pointer("/json_schema/schema").unwrap_or(&Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(body: &Value, raw: &str) -> Result<Exchange, RequestError> {
        super::messages(body, raw, false)
    }

    /// Runs `f` on `body`; a refusal becomes its message (what the 400 says).
    fn run(
        f: fn(&Value, &str) -> Result<Exchange, RequestError>,
        body: Value,
    ) -> Result<Exchange, String> {
        let raw = body.to_string();
        f(&body, &raw).map_err(|e| e.to_string())
    }

    #[test]
    fn chat_counts_real_user_turns_and_system_words() {
        let ex = run(chat, json!({"model":"m","stream":true,"messages":[
            {"role":"system","content":"PERSONA=owl be kind"},
            {"role":"user","content":[{"type":"text","text":"<environment_context>x</environment_context>"},{"type":"text","text":"hello there"}]},
            {"role":"assistant","content":"hi"},
            {"role":"tool","content":"tool output"},
            {"role":"user","content":"<system-reminder>only</system-reminder>"},
            {"role":"user","content":"second question"}]}))
        .unwrap();
        assert_eq!(ex.user_turns, 2);
        assert_eq!(ex.last_user_text.as_deref(), Some("second question"));
        assert_eq!(ex.assistant_messages, 1);
        assert_eq!(ex.message_count, 6);
        assert_eq!(ex.persona.as_deref(), Some("owl"));
        assert!(ex.stream);
        // 3 system + 1 + 2 + 1 + 2 + 1 + 2 words.
        assert_eq!(ex.input_tokens, 12);
    }

    #[test]
    fn responses_accepts_string_input_and_developer_items() {
        let ex = run(responses, json!({"input":"just one"})).unwrap();
        assert_eq!((ex.user_turns, ex.message_count), (1, 1));
        let ex = run(
            responses,
            json!({"instructions":"be brief","input":[
            {"role":"developer","content":[{"type":"input_text","text":"base prompt"}]},
            {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
            {"type":"function_call_output","call_id":"c","output":"x"}]}),
        )
        .unwrap();
        assert_eq!(
            (ex.user_turns, ex.message_count, ex.input_tokens),
            (1, 3, 5)
        );
        assert!(run(responses, json!({"model":"m"})).is_err());
    }

    #[test]
    fn messages_requires_max_tokens_and_user_first() {
        let ok = run(
            messages,
            json!({"max_tokens":5,"system":[{"type":"text","text":"sys"}],"messages":[
            {"role":"system","content":"env block"},
            {"role":"user","content":"a b"}]}),
        )
        .unwrap();
        assert_eq!((ok.user_turns, ok.input_tokens), (1, 5));
        let err = run(
            messages,
            json!({"max_tokens":5,"messages":[{"role":"assistant","content":"x"}]}),
        )
        .unwrap_err();
        assert!(
            err.contains("first message must use the \"user\" role"),
            "{err}"
        );
        let err = run(messages, json!({"messages":[]})).unwrap_err();
        assert!(err.contains("max_tokens"), "{err}");
    }

    #[test]
    fn finds_schema_in_every_shape() {
        let schema = json!({"type":"object"});
        for body in [
            json!({"output_config":{"format":{"type":"json_schema","schema":schema}}}),
            json!({"text":{"format":{"type":"json_schema","name":"t","schema":schema}}}),
            json!({"response_format":{"type":"json_schema","json_schema":{"name":"t","schema":schema}}}),
        ] {
            assert_eq!(schema_of(&body), Some(&schema));
        }
        assert_eq!(
            schema_of(&json!({"response_format":{"type":"json_object"}})),
            None
        );
        assert_eq!(schema_of(&json!({"text":{"format":{"type":"text"}}})), None);
    }
}
