//! Faithful transcripts: the mentor reply recorded for a turn is the model's
//! text, not the screen. The screen stays the proof of display (the nonce on
//! it); what the redactor scans and the council grades comes from, in order of
//! faithfulness:
//!
//! - web and ACP surfaces: the ACP message chunks ([`RecordedReply::acp`]);
//! - CLI/tmux: the harness's own session store in the scratch HOME
//!   ([`store`]), for every harness whose pinned version keeps one (codex,
//!   claude, pi, opencode), declared in the harness table;
//! - otherwise a per-harness screen extractor ([`screen`]) that drops the
//!   TUI's chrome (borders, status lines, spinners) and rejoins wrapped lines.
//!
//! Each reply says which source it came from, and [`fidelity`] scores it
//! against the text the stub sent (its request log holds it) with a floor per
//! source. The case engine's conversation (`crate::case::converse`) calls
//! [`record_turn`] after each CLI turn and [`score_turn`] after each ACP one.

#[cfg(test)]
mod fidelity_cases;
mod reply;
pub mod screen;
#[cfg(test)]
mod screen_tests;
#[cfg(test)]
mod screen_tests_support;
pub mod store;
mod store_sqlite;
mod store_types;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use reply::sent_reply;
pub use reply::{RecordedReply, ReplySource, TranscriptError, TurnTrace, mentor_reply, read_reply};
pub(crate) use reply::{record_turn, score_against, score_turn};
