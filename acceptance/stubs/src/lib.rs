//! Hermetic doubles for paid or unavailable parts, each named as a stub
//! everywhere it appears: `studyloop-stub-provider`, a deterministic local model
//! server speaking the OpenAI Chat Completions, OpenAI Responses and Anthropic
//! Messages protocols, and `studyloop-stub-acp`, a scripted ACP agent.
//!
//! The library part holds only what a driver must share with the stubs to check
//! their output (the reply nonce formula and the request-log record). It depends
//! on nothing else in the workspace.

pub mod acp;
