//! The harness backend: a second harness process plays the learner in its own
//! private tmux server. It speaks first; each complete, non-blank line it prints
//! (other than the echo of what was typed) is one learner message; the mentor's
//! reply is typed back followed by Enter; a line that is exactly
//! [`DONE_SENTINEL`] completes the conversation.
//!
//! So the command must be line-oriented (a wrapper script around a harness's
//! non-interactive mode, for instance), not a full-screen TUI. Usage is never
//! observable here: every turn records `None`, so only the turn cap applies.

mod actor;
mod error;
mod screen;
mod sentinel;
mod tmux;

pub use actor::{
    DEFAULT_ENV_ALLOW_LIST, DEFAULT_REPLY_TIMEOUT, HarnessActor, HarnessSettings, SUN_PATH_LEN,
    find_on_path, socket_path,
};
pub use error::HarnessActorError;
pub use sentinel::DONE_SENTINEL;
