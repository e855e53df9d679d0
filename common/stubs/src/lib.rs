//! Hermetic doubles for paid or unavailable parts, each named as a stub
//! everywhere it appears: `studyloop-stub-provider`, a deterministic local model
//! server speaking the OpenAI Chat Completions, OpenAI Responses and Anthropic
//! Messages protocols, and `studyloop-stub-acp`, a scripted ACP agent.
//!
//! The library holds what a driver shares with the stubs to check their output
//! (the reply rules and nonce in [`reply`], the realistic Markdown reply in
//! [`realistic`], the request-log record in [`log`],
//! the roles script in [`roles`], the tool-call script in [`tools`]) and the servers themselves ([`provider`]), so
//! the binaries stay thin. It depends on nothing else in the workspace.

pub mod acp;
pub mod log;
pub mod practice;
pub mod provider;
pub mod realistic;
pub mod recall;
pub mod reply;
pub mod roles;
pub mod spawn;
pub mod tool_script;

pub use log::{LogRecord, Protocol, RequestLog, ToolCallRecord, UsageRecord};
pub use practice::{PracticeCheck, practice_check};
pub use realistic::{marker_line, realistic_reply};
pub use reply::{is_boilerplate, mentor_reply, nonce, persona, real_user_text, text_sha256};
pub use roles::{Role, RolesParseError, RolesScript};
pub use spawn::{SpawnError, StubProvider};
pub use tool_script::{ToolScript, ToolScriptError, ToolStep};
