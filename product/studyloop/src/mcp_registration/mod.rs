//! Registering `studyloop-mcp` with the harnesses: the one server spec
//! ([`spec`]) rendered into ACP `session/new` `mcpServers` (web ACP starts)
//! and into each harness's own config file (CLI starts and
//! `studyloop install agents`).

mod spec;

pub use spec::{MCP_BINARY, McpServerSpec, SERVER_NAME, locate, spec};
