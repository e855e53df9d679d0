//! The two request/response shapes: building the JSON body and reading text and
//! usage back, validating every usage count (negative, fractional, non-numeric
//! or implausible counts are errors, never numbers to add).

use serde_json::{Value, json};

use super::{ChatMessage, ChatResponse, ChatRole, Endpoint, LlmError, Wire};
use crate::budget::MAX_PLAUSIBLE_TOKENS_PER_TURN;
use crate::transcript::Usage;

/// The Messages API version every request pins.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Sent as the first user message when a history would otherwise start with the
/// model's own turn (or be empty): the Messages API requires a user-first list,
/// and some OpenAI-compatible servers reject a request with no user message.
/// It is never shown to the mentor.
pub(crate) const CONVERSATION_START: &str = "(conversation start)";

fn role(r: ChatRole) -> &'static str {
    match r {
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
    }
}

pub(crate) fn request_body(
    endpoint: &Endpoint,
    system: &str,
    messages: &[ChatMessage],
    max_tokens: u32,
) -> Value {
    let mut history: Vec<Value> = Vec::with_capacity(messages.len() + 2);
    if messages.first().is_none_or(|m| m.role != ChatRole::User) {
        history.push(json!({"role": "user", "content": CONVERSATION_START}));
    }
    history.extend(
        messages
            .iter()
            .map(|m| json!({"role": role(m.role), "content": m.content})),
    );
    match endpoint.wire {
        Wire::OpenAiCompat {
            max_completion_tokens,
        } => {
            let mut all = Vec::with_capacity(history.len() + 1);
            if !system.is_empty() {
                all.push(json!({"role": "system", "content": system}));
            }
            all.extend(history);
            let cap = if max_completion_tokens {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            json!({"model": endpoint.model, "messages": all, cap: max_tokens})
        }
        Wire::AnthropicCompat => {
            let mut body =
                json!({"model": endpoint.model, "messages": history, "max_tokens": max_tokens});
            if !system.is_empty() {
                body["system"] = json!(system);
            }
            body
        }
    }
}

/// One usage count: absent or null is unknown; anything but a non-negative
/// integer up to the plausible maximum is an error.
fn count(url: &str, usage: Option<&Value>, field: &'static str) -> Result<Option<u64>, LlmError> {
    let Some(value) = usage.and_then(|u| u.get(field)).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let invalid = |why| LlmError::Usage {
        url: url.to_owned(),
        field,
        value: value.to_string(),
        why,
    };
    match value.as_u64() {
        Some(n) if n <= MAX_PLAUSIBLE_TOKENS_PER_TURN => Ok(Some(n)),
        Some(_) => Err(invalid(
            "more than the plausible maximum of 10000000 per turn",
        )),
        None if value.as_i64().is_some_and(|n| n < 0) => Err(invalid("negative")),
        None if value.is_number() => Err(invalid("not a whole number")),
        None => Err(invalid("not a number")),
    }
}

pub(crate) fn parse_response(wire: Wire, url: &str, text: &str) -> Result<ChatResponse, LlmError> {
    let malformed = |detail: String| LlmError::Malformed {
        url: url.to_owned(),
        detail,
    };
    let body: Value =
        serde_json::from_str(text).map_err(|e| malformed(format!("not JSON ({e})")))?;
    let usage = body.get("usage");
    let (text, input, output) = match wire {
        Wire::OpenAiCompat { .. } => {
            let message = body
                .pointer("/choices/0/message")
                .ok_or_else(|| malformed("no choices[0].message".to_owned()))?;
            let text = match message.get("content") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => {
                    return Err(malformed(format!("choices[0].message.content is {other}")));
                }
            };
            (text, "prompt_tokens", "completion_tokens")
        }
        Wire::AnthropicCompat => {
            let blocks = body
                .get("content")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed("no content array".to_owned()))?;
            let text = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<String>();
            (text, "input_tokens", "output_tokens")
        }
    };
    let usage = Usage {
        input_tokens: count(url, usage, input)?,
        output_tokens: count(url, usage, output)?,
    };
    Ok(ChatResponse { text, usage })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ApiKey;

    fn endpoint(wire: Wire) -> Endpoint {
        Endpoint {
            wire,
            base_url: "http://x".into(),
            api_key: ApiKey::new("k"),
            model: "m".into(),
        }
    }

    #[test]
    fn anthropic_history_always_starts_with_a_user_message() {
        let history = [
            ChatMessage::assistant("learner 1"),
            ChatMessage::user("mentor 1"),
        ];
        let body = request_body(&endpoint(Wire::AnthropicCompat), "sys", &history, 10);
        assert_eq!(
            body["messages"][0],
            json!({"role": "user", "content": CONVERSATION_START})
        );
        assert_eq!(body["messages"][1]["role"], "assistant");
        assert_eq!(body["system"], "sys");
        let empty = request_body(&endpoint(Wire::AnthropicCompat), "", &[], 10);
        assert_eq!(empty["messages"].as_array().unwrap().len(), 1);
        assert!(empty.get("system").is_none());
        let user_first = request_body(
            &endpoint(Wire::AnthropicCompat),
            "",
            &[ChatMessage::user("hi")],
            10,
        );
        assert_eq!(
            user_first["messages"],
            json!([{"role": "user", "content": "hi"}])
        );
    }

    #[test]
    fn openai_puts_system_first_and_names_the_cap() {
        let body = request_body(
            &endpoint(Wire::OpenAiCompat {
                max_completion_tokens: true,
            }),
            "sys",
            &[],
            7,
        );
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(body["messages"][1]["content"], CONVERSATION_START);
        assert_eq!(body["max_completion_tokens"], 7);
        let body = request_body(
            &endpoint(Wire::OpenAiCompat {
                max_completion_tokens: false,
            }),
            "s",
            &[],
            7,
        );
        assert_eq!(body["max_tokens"], 7);
    }

    #[test]
    fn parses_text_and_usage_and_treats_missing_usage_as_unknown() {
        let oa = Wire::OpenAiCompat {
            max_completion_tokens: false,
        };
        let r = parse_response(oa, "u", r#"{"choices":[{"message":{"content":null}}]}"#).unwrap();
        assert_eq!((r.text.as_str(), r.usage), ("", Usage::UNKNOWN));
        let r = parse_response(
            Wire::AnthropicCompat,
            "u",
            r#"{"content":[{"type":"text","text":"a"},{"type":"tool_use"},{"type":"text","text":"b"}],"usage":{"input_tokens":3,"output_tokens":2}}"#,
        )
        .unwrap();
        assert_eq!(
            (r.text.as_str(), r.usage.input_tokens, r.usage.output_tokens),
            ("ab", Some(3), Some(2))
        );
    }

    #[test]
    fn rejects_bad_usage_counts() {
        let oa = Wire::OpenAiCompat {
            max_completion_tokens: false,
        };
        for (usage, why) in [
            (r#"{"completion_tokens":-1}"#, "negative"),
            (r#"{"completion_tokens":1.5}"#, "not a whole number"),
            (r#"{"completion_tokens":"7"}"#, "not a number"),
            (r#"{"prompt_tokens":10000001}"#, "plausible maximum"),
        ] {
            let text =
                format!(r#"{{"choices":[{{"message":{{"content":"x"}}}}],"usage":{usage}}}"#);
            let err = parse_response(oa, "u", &text).unwrap_err().to_string();
            assert!(err.contains(why), "{usage}: {err}");
        }
        let err = parse_response(oa, "u", "not json").unwrap_err().to_string();
        assert!(err.contains("malformed"), "{err}");
    }
}
