//! `studyloop-mcp` as a client meets it: the real binary spawned with a
//! scratch HOME, JSON-RPC 2.0 over its stdin/stdout (newline-delimited),
//! `initialize`, `tools/list` (order), and `tools/call` for the happy path
//! and each refusal prefix.

mod conformance;
mod hostile;
mod protocol;
mod sdk_client;
mod stdio;
mod structured;
