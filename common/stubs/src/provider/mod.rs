//! `studyloop-stub-provider`: a real, deterministic local model server on
//! 127.0.0.1 speaking OpenAI Chat Completions, OpenAI Responses and Anthropic
//! Messages (stream and non-stream), so real harness CLIs and the HTTP learner
//! actors run offline. It stands in only for a paid model and is named as a stub.
//!
//! Usage counts are honest under one documented rule (`reply::count_tokens`):
//! input = words of every text the model reads (system/instructions and every
//! message's text blocks), output = words of the reply. Faults are opt-in.
//!
//! This module holds the configuration and the server lifecycle; `request`
//! reads bodies, `answer` picks the reply text, `render` shapes it per protocol
//! (`render_tool` a scripted tool call, `crate::tool_script`),
//! `http` handles requests, `body` sends answers and `server` runs the listener.

mod answer;
mod body;
mod config;
mod http;
mod render;
mod render_tool;
mod request;
mod schema;
mod server;

pub use config::{FailStatus, Faults, ProviderConfig, ProviderError, ReplyMode};
pub use server::run;
