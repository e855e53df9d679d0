//! StudyLoop, the product: a study mentor that launches a coding-agent CLI (a
//! "harness": codex, claude, kiro, pi, opencode or grok) with a mentor persona,
//! keeps one live study session, records what was learned in SQLite, and exposes
//! the session through the `studyloop` CLI (tmux) and, later, a web UI over PTY or
//! ACP.
//!
//! This crate is the real product the acceptance and UAT tiers drive as a
//! subprocess. It is not test code and knows nothing about those tiers, apart from
//! the documented `STUDYLOOP_TEST_AGENT_CMD` hatch that hermetic tests use in place
//! of a harness binary.
//!
//! Every operation takes an explicit [`context::Ctx`] (environment snapshot,
//! cwd, executable); nothing reads the process environment behind its back.

pub(crate) mod adapters;
pub(crate) mod child_env;
pub mod cli;
pub mod clock;
pub mod config;
pub mod console_token;
pub mod context;
pub(crate) mod doctor;
pub mod embed;
pub mod env;
pub mod envelope;
pub mod envelope_schema;
pub mod export;
pub mod feeds;
pub(crate) mod fsutil;
pub(crate) mod ids;
pub(crate) mod install_agents;
pub mod mcp_registration;
pub mod modules;
pub(crate) mod persona;
pub mod plans;
pub mod procs;
pub mod scope;
pub mod session;
pub mod settings;
pub(crate) mod shell;
pub(crate) mod sidebar;
pub mod state;
pub(crate) mod status;
pub mod store;
pub mod term;
pub mod tmux;
pub mod web;

pub use env::{ENV_VARS, EnvVarDoc};
