//! `studyloop web`: the browser console. An axum server on 127.0.0.1 (or the
//! LAN with a password) serving a small embedded SPA and the session API, with
//! the live session on a PTY or over ACP and relayed through one WebSocket.
//!
//! The session rules (claim, persona, DB row, end) are the product's own
//! (`crate::session`); this module only adds the web transports and routes.
//! Modules: `server` (router, state, serve loop), `start` (the start/options/
//! state routes on top of the session core), `agents` (ACP argv per harness),
//! `slot` (the live session), `ws` (the relay), `acp` (the ACP client), `pty`,
//! `frames`, `guard` (Host/Origin/CSRF), `token` (the per-launch secret), `labs` (Start/Cancel drill), `listen` (accept loop and
//! limits), `security` (headers, password), `auth_limit` (password failure
//! limiter), `assets`, `queue`, `run` (the command). What the console defends
//! against and with which numbers: README "Security of the web console".

pub mod acp;
pub mod agents;
pub mod app_state;
pub mod assets;
pub(crate) mod auth_limit;
pub mod frames;
pub mod guard;
pub(crate) mod labs;
pub mod listen;
pub mod plans;
pub(crate) mod practice;
pub mod pty;
pub mod queue;
pub mod resume;
pub mod run;
pub mod security;
pub mod server;
pub mod slot;
pub mod start;
pub mod start_prep;
pub mod start_req;
pub mod token;
pub mod ws;

#[cfg(test)]
mod doors_tests;
#[cfg(test)]
mod envelope_tests;
#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod labs_attack_tests;
#[cfg(test)]
mod labs_tests;
#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod plans_tests;
#[cfg(test)]
mod pty_tests;
#[cfg(test)]
mod resume_tests;
#[cfg(test)]
mod server_tests;
#[cfg(test)]
mod sigterm_tests;
#[cfg(test)]
mod start_mcp_tests;
#[cfg(test)]
mod start_tests;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod token_tests;
#[cfg(test)]
mod turn_search_tests;
