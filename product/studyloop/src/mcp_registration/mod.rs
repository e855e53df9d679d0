//! Registering `studyloop-mcp` with the harnesses: the one server spec
//! ([`spec`]) rendered into ACP `session/new` `mcpServers` (web ACP starts)
//! and into each harness's own config file ([`register`]; CLI starts and
//! `studyloop install agents`).

mod codex_toml;
mod error;
mod files;
mod harness;
mod spec;
#[cfg(test)]
mod tests;

pub use error::RegistrationError;
pub use harness::{Outcome, PI_NO_MCP, Registered, Target, register, register_for_session};
pub use spec::{MCP_BINARY, McpServerSpec, SERVER_NAME, locate, spec};
