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
