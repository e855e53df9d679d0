//! The ACP client of the web console: runs a harness's ACP agent (or
//! `STUDYLOOP_TEST_ACP_CMD`) as a child process and exposes it as a small,
//! crate-independent API: [`AcpSession::start`] (spawn, `initialize`,
//! `session/new`), [`AcpSession::prompt`], [`AcpSession::respond_permission`],
//! [`AcpSession::stop`] and a queue of [`AcpEvent`]s shaped as WS frames.
//!
//! Why the official `agent-client-protocol` crate (pinned `=5.2.0`): it owns
//! the JSON-RPC engine (id correlation, error shapes, malformed-frame replies)
//! and the v1 schema types, and its low-level `Lines` transport lets us keep
//! everything a WS relay needs in our hands: we spawn the process (own group,
//! scrubbed env, stderr tail), see every inbound line (malformed → reported and
//! the session ends), and take inbound messages untyped so unknown update kinds
//! pass through unchanged. Only `client.rs`, `requests.rs` and `transport.rs`
//! name the crate, so a breaking release touches three files. The fallback
//! (schema types plus our own NDJSON client) was not needed. Cost to know about: the crate turns on
//! `serde_json/preserve_order` for every crate built with it, so code that needs
//! sorted JSON keys must sort explicitly (structs or `BTreeMap`), not rely on
//! `serde_json::Map` order.
//!
//! Not here: HTTP/WS routing and the session claim (see `web::server`), the
//! choice of argv per harness (see `web::agents`).

mod client;
mod events;
mod fs;
#[cfg(test)]
mod fs_tests;
#[cfg(test)]
pub(crate) mod limit_tests;
mod process;
mod requests;
#[cfg(test)]
mod requests_tests;
mod session;
#[cfg(test)]
mod tests;
mod transport;
mod turn_error;
mod turns;

pub use events::{
    AcpEvent, EVENT_QUEUE_BYTES, EVENT_QUEUE_CAPACITY, EventQueue, map_session_update,
};
pub use fs::{FsError, SessionFs};
pub use process::{AgentCommand, STDERR_TAIL_BYTES, StderrTail, resolve_program};
pub use session::{AcpError, AcpSession, AcpTimeouts, COMMAND_QUEUE};
pub use turns::TurnLog;
