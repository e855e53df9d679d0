//! The chat client: wire formats, endpoint, key, messages, the request under one timeout and the output-token cap.

use super::cassette::{CassetteError, Tap};
use super::wire;

use std::fmt;
use std::time::Duration;

use crate::budget::{Budget, BudgetError, Exhausted};
use crate::transcript::Usage;

/// Which wire protocol an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `POST {base}/chat/completions`, bearer key.
    OpenAiCompat {
        /// Send the cap as `max_completion_tokens` (OpenAI's current name, which
        /// its reasoning models require) instead of `max_tokens`.
        max_completion_tokens: bool,
    },
    /// `POST {base}/v1/messages`, `x-api-key` + `anthropic-version: 2023-06-01`.
    AnthropicCompat,
}

/// An API key that never appears in `Debug` output or error messages.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Where and how to reach one model.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The protocol.
    pub wire: Wire,
    /// Base URL (`http://` or `https://`); a trailing `/` is ignored.
    pub base_url: String,
    /// The key to send.
    pub api_key: ApiKey,
    /// The model id to request.
    pub model: String,
}

/// Who said a message, from the calling model's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRole {
    /// The other party (for a learner model: the mentor).
    User,
    /// The model itself (for a learner model: its own earlier turns).
    Assistant,
}

/// One message of history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// Who said it.
    pub role: ChatRole,
    /// What was said.
    pub content: String,
}

impl ChatMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::Assistant,
            content: content.into(),
        }
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatResponse {
    /// The text (concatenated text blocks; `""` when the model sent none).
    pub text: String,
    /// Reported usage; `None` fields when the response carried none.
    pub usage: Usage,
}

/// Why a chat request failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The base URL is not an absolute http(s) URL.
    #[error(
        "invalid base URL {value:?}: expected an absolute http:// or https:// URL such as http://127.0.0.1:4000"
    )]
    BaseUrl {
        /// The rejected value.
        value: String,
    },
    /// The server answered with a non-2xx status.
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        /// The request URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the response body (vendor error message).
        body: String,
    },
    /// No complete answer within the timeout.
    #[error("{url} gave no complete answer within {timeout:?} (a stalled or overloaded server)")]
    Timeout {
        /// The request URL.
        url: String,
        /// The timeout that expired.
        timeout: Duration,
    },
    /// Connecting, sending or reading failed (refused, reset, truncated body).
    #[error("request to {url} failed: {detail}")]
    Transport {
        /// The request URL.
        url: String,
        /// What the transport reported.
        detail: String,
    },
    /// The body is not the protocol's response shape.
    #[error("{url} sent a malformed response: {detail}")]
    Malformed {
        /// The request URL.
        url: String,
        /// What was wrong.
        detail: String,
    },
    /// A usage count is negative, fractional, non-numeric or implausible.
    #[error("{url} reported an invalid usage count {field} = {value}: {why}; it was not recorded")]
    Usage {
        /// The request URL.
        url: String,
        /// The usage field.
        field: &'static str,
        /// The value as sent.
        value: String,
        /// Why it was rejected.
        why: &'static str,
    },
    /// The cassette could not answer (a replay miss) or record.
    #[error(transparent)]
    Cassette(#[from] CassetteError),
}

/// Why a budgeted chat did not produce an answer.
#[derive(Debug, thiserror::Error)]
pub enum GuardedChatError {
    /// The budget had no room for another turn; nothing was sent.
    #[error("not sent: {0}")]
    Exhausted(Exhausted),
    /// The request failed.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The answer's usage could not be recorded.
    #[error(transparent)]
    Budget(#[from] BudgetError),
}

/// A reusable client for one [`Endpoint`].
#[derive(Debug)]
pub struct ChatClient {
    endpoint: Endpoint,
    url: String,
    timeout: Duration,
    agent: ureq::Agent,
    response_format: Option<serde_json::Value>,
    cassette: Option<Tap>,
    replay_identity: Option<serde_json::Value>,
}

impl ChatClient {
    /// Builds a client; `timeout` bounds each whole request (connect to last byte).
    pub fn new(endpoint: Endpoint, timeout: Duration) -> Result<Self, LlmError> {
        let base = endpoint.base_url.trim().trim_end_matches('/');
        let has_host = base
            .split_once("://")
            .is_some_and(|(scheme, rest)| matches!(scheme, "http" | "https") && !rest.is_empty());
        if !has_host {
            return Err(LlmError::BaseUrl {
                value: endpoint.base_url.clone(),
            });
        }
        let path = match endpoint.wire {
            Wire::OpenAiCompat { .. } => "/chat/completions",
            Wire::AnthropicCompat => "/v1/messages",
        };
        let url = format!("{base}{path}");
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            // Loopback gateways and stubs must not be routed through a proxy
            // picked up from the process environment.
            .proxy(None)
            .user_agent(concat!("studyloop-actors/", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(Self {
            endpoint,
            url,
            timeout,
            agent: config.into(),
            response_format: None,
            cassette: None,
            replay_identity: None,
        })
    }

    /// Every request carries `format` as its Chat Completions `response_format` (the
    /// caller picks the dialect its server understands: OpenAI's `json_schema`, or
    /// llama.cpp's `json_object` + `schema`, which it enforces with a grammar; LiteLLM
    /// passes either through). The Messages API has no such field, so an
    /// Anthropic-compatible request is sent without it and its reply is checked
    /// afterwards as always.
    #[must_use]
    pub fn with_response_format(mut self, format: serde_json::Value) -> Self {
        self.response_format = Some(format);
        self
    }

    /// Records every answer into `tap`'s cassette, or (replay) answers from it and
    /// never sends anything.
    #[must_use]
    pub fn with_cassette(mut self, tap: Tap) -> Self {
        self.cassette = Some(tap.with_key(&self.endpoint.api_key));
        self
    }

    /// Keys cassette entries by `identity` instead of the prompt (`system` and
    /// `messages`), for a caller whose prompt carries run-specific text: the council's
    /// prompt holds the bundle's run id, date and timings, its identity the cell and
    /// the conversation graded. Everything else in the request stays in the key.
    #[must_use]
    pub fn with_replay_identity(mut self, identity: serde_json::Value) -> Self {
        self.replay_identity = Some(identity);
        self
    }

    /// The model this client asks for.
    pub fn model(&self) -> &str {
        &self.endpoint.model
    }

    /// The full request URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One request: `system` + `messages` (an Anthropic-compatible history is
    /// made to start with a user message) capped at `max_tokens` output tokens.
    pub fn chat(
        &self,
        system: &str,
        messages: &[ChatMessage],
        max_tokens: u32,
    ) -> Result<ChatResponse, LlmError> {
        let mut body = wire::request_body(&self.endpoint, system, messages, max_tokens);
        if let (Some(format), Wire::OpenAiCompat { .. }) =
            (&self.response_format, self.endpoint.wire)
        {
            body["response_format"] = format.clone();
        }
        let Some(tap) = &self.cassette else {
            return self.send(&body);
        };
        let request = tap.request(self.endpoint.wire, &body, self.replay_identity.as_ref())?;
        if tap.replaying() {
            // Never falls through to the network: a miss is the answer.
            return Ok(tap.serve(&request)?);
        }
        let response = self.send(&body)?;
        tap.record(request, &response)?;
        Ok(response)
    }

    /// One request over HTTP.
    fn send(&self, body: &serde_json::Value) -> Result<ChatResponse, LlmError> {
        let request = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        let request = match self.endpoint.wire {
            Wire::OpenAiCompat { .. } => request.header(
                "authorization",
                format!("Bearer {}", self.endpoint.api_key.expose()),
            ),
            Wire::AnthropicCompat => request
                .header("x-api-key", self.endpoint.api_key.expose())
                .header("anthropic-version", wire::ANTHROPIC_VERSION),
        };
        let mut response = request
            .send(body.to_string().as_bytes())
            .map_err(|e| self.transport(e))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| self.transport(e))?;
        if !(200..300).contains(&status) {
            return Err(LlmError::Status {
                url: self.url.clone(),
                status,
                body: excerpt(&text),
            });
        }
        wire::parse_response(self.endpoint.wire, &self.url, &text)
    }

    /// [`chat`](Self::chat) under a budget: checks it before sending (capping
    /// `max_tokens` to what is left) and records the answer's output tokens.
    pub fn chat_within(
        &self,
        budget: &mut Budget,
        system: &str,
        messages: &[ChatMessage],
        max_tokens: u32,
    ) -> Result<ChatResponse, GuardedChatError> {
        budget.check().map_err(GuardedChatError::Exhausted)?;
        let response = self.chat(system, messages, capped(max_tokens, budget))?;
        budget.record(response.usage.output_tokens)?;
        Ok(response)
    }

    fn transport(&self, err: ureq::Error) -> LlmError {
        match err {
            ureq::Error::Timeout(_) => LlmError::Timeout {
                url: self.url.clone(),
                timeout: self.timeout,
            },
            other => LlmError::Transport {
                url: self.url.clone(),
                detail: other.to_string(),
            },
        }
    }
}

/// `max_tokens` shrunk to the budget's remaining output tokens (at least 1).
pub(crate) fn capped(max_tokens: u32, budget: &Budget) -> u32 {
    match budget.remaining_output_tokens() {
        Some(left) => u32::try_from(left).map_or(max_tokens, |left| max_tokens.min(left).max(1)),
        None => max_tokens,
    }
}

/// The first 300 characters of a body, on one line.
fn excerpt(body: &str) -> String {
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(base: &str) -> Endpoint {
        Endpoint {
            wire: Wire::AnthropicCompat,
            base_url: base.into(),
            api_key: ApiKey::new("sk-secret"),
            model: "m".into(),
        }
    }

    #[test]
    fn base_urls_must_be_absolute_http() {
        for bad in ["", "127.0.0.1:4000", "ftp://x", "http://", "  "] {
            let err = ChatClient::new(endpoint(bad), Duration::from_secs(1)).unwrap_err();
            assert!(err.to_string().contains("invalid base URL"), "{bad}: {err}");
        }
        let ok = ChatClient::new(
            endpoint("https://api.anthropic.com/"),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(ok.url(), "https://api.anthropic.com/v1/messages");
    }

    #[test]
    fn keys_never_show_in_debug() {
        let client =
            ChatClient::new(endpoint("http://127.0.0.1:1"), Duration::from_secs(1)).unwrap();
        assert!(!format!("{client:?}").contains("sk-secret"));
    }

    #[test]
    fn max_tokens_is_capped_by_the_budget() {
        let mut budget = Budget::new(5, Some(50)).unwrap();
        assert_eq!(capped(200, &budget), 50);
        budget.record(Some(45)).unwrap();
        assert_eq!(capped(200, &budget), 5);
        assert_eq!(capped(200, &Budget::new(5, None).unwrap()), 200);
    }

    /// A one-shot HTTP server on loopback: answers one request with an OpenAI-shaped
    /// reply and hands back the request body it received.
    fn capture_one() -> (String, std::thread::JoinHandle<serde_json::Value>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let reply = r#"{"choices":[{"message":{"content":"{}"}}]}"#;
            let mut out = stream;
            write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            )
            .unwrap();
            serde_json::from_slice(&body).unwrap()
        });
        (base, handle)
    }

    #[test]
    fn a_response_format_is_sent_on_chat_completions_only_when_asked_for() {
        let format = serde_json::json!({"type": "json_object", "schema": {"required": ["scores"]}});
        let (base, server) = capture_one();
        let mut e = endpoint(&base);
        e.wire = Wire::OpenAiCompat {
            max_completion_tokens: false,
        };
        let client = ChatClient::new(e, Duration::from_secs(10))
            .unwrap()
            .with_response_format(format.clone());
        client.chat("sys", &[ChatMessage::user("hi")], 10).unwrap();
        let body = server.join().unwrap();
        assert_eq!(body["response_format"], format);
        // Without it, no response_format at all (vendor seats are asked as before).
        let (base, server) = capture_one();
        let mut e = endpoint(&base);
        e.wire = Wire::OpenAiCompat {
            max_completion_tokens: false,
        };
        let plain = ChatClient::new(e, Duration::from_secs(10)).unwrap();
        plain.chat("sys", &[ChatMessage::user("hi")], 10).unwrap();
        assert!(server.join().unwrap().get("response_format").is_none());
    }

    #[test]
    fn excerpts_are_short_and_single_line() {
        assert_eq!(excerpt("a\n b"), "a b");
        assert_eq!(excerpt(&"x".repeat(400)).chars().count(), 301);
    }
}
