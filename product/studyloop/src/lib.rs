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

pub mod adapters;
pub mod child_env;
pub mod cli;
pub mod config;
pub mod context;
pub mod doctor;
pub mod env;
pub mod feeds;
pub mod fsutil;
pub mod ids;
pub mod persona;
pub mod plans;
pub mod procs;
pub mod scope;
pub mod session;
pub mod settings;
pub mod shell;
pub mod sidebar;
pub mod state;
pub mod status;
pub mod store;
pub mod term;
pub mod tmux;
pub mod web;

pub use env::{ENV_VARS, EnvVarDoc};
