//! A tmux handle bound to one explicit server socket, plus a control-mode client.
//!
//! Every call runs `tmux -S <socket> -f /dev/null …` with an environment built
//! from nothing but what the caller passed (no inherited `TMUX`, no process
//! `TMUX_TMPDIR`), so it can never reach the developer's own tmux server or a
//! server started by another test. `Tmux::for_tmpdir` addresses the server a
//! child (the product) starts under a scratch `TMUX_TMPDIR`.
//!
//! What it is not: a session manager for the product (the product creates its
//! own `study-*` sessions) and not a screen-reader: reading a pane for a turn is
//! `crate::pane`'s job, on top of [`control::ControlClient`].

pub mod control;
mod error;
pub(crate) mod parse;
mod server;

pub use control::{ControlClient, Event};
pub use error::TmuxError;
pub use server::{MAX_SOCKET_PATH, Tmux};
