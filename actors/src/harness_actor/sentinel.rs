//! The one word of the harness backend's protocol: the line that ends the
//! conversation. A leaf, so the screen reader that sees it and the error that names
//! its absence both use it without importing each other.

/// A line consisting of exactly this ends the conversation as completed.
pub const DONE_SENTINEL: &str = "STUDYLOOP_ACTOR_DONE";
