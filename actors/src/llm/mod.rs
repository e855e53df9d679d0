//! A small synchronous chat client for OpenAI-compatible Chat Completions and
//! Anthropic-compatible Messages: system prompt + messages + `max_tokens` in,
//! text + [`Usage`] out, with one overall timeout per request.
//!
//! Shared by the gateway and direct actors and by UAT judge seats (which call
//! [`ChatClient::chat_within`] to spend from the same [`Budget`]). It is not a
//! general SDK: no streaming, no tools, no retries (a failure is a result the
//! caller records). It never reads the process environment: no proxy variables,
//! no keys; everything comes from the [`Endpoint`]. With a [`cassette::Tap`] it
//! records what it is answered, or answers from a recording without calling out.

pub mod cassette;
mod client;
mod wire;

pub(crate) use client::capped;
pub use client::{
    ApiKey, ChatClient, ChatMessage, ChatResponse, ChatRole, Endpoint, GuardedChatError, LlmError,
    Wire,
};
