//! `PaneDriver`: types learner turns into a harness's tmux pane and decides,
//! from pushed output, when the mentor has replied.
//!
//! The rules, in order (each one a lesson from the Python anchor's live runs):
//! 1. Never type before the harness's ready marker is on screen (keys typed
//!    early are half-lost).
//! 2. Type the text as text, never as tmux command syntax (see `typing`: one
//!    line as a quoted `send-keys -l` argument, several lines through a buffer
//!    loaded from a private file and pasted the way the harness takes a
//!    multi-line paste), wait for its echo, then send a separate `Enter`. A
//!    turn holding a control character (other than newline and tab) or nothing
//!    visible is refused by name before anything is typed.
//! 3. "Replied" = the proof is on screen (the stub's per-turn marker with its
//!    nonce in stub-provider mode; otherwise new non-echo lines), the idle marker
//!    is in the bottom lines, the busy marker is not, AND no output arrived for
//!    the quiescence window. An echo or a spinner satisfies none of these.
//! 4. Screens are captured only when tmux pushes `%output` for the pane (one
//!    capture per burst); waits block on the event channel, never on a timer.
//! 5. A turn that times out records the screen first, then returns
//!    [`PaneError::TurnTimeout`]; a turn past the ceiling is never sent.
//!
//! 6. Every byte of the pane's `%output` also goes into an asciinema v2
//!    recording (`cast`) with its arrival time, for the bundle's `.cast`; the
//!    screen after each turn is also rendered from those bytes (`render`).
//!
//! What it is not: it knows nothing about the product or a harness's name; the
//! markers and the proof come from `crate::harness_spec` and the lane.

pub mod cast;
mod driver;
mod mentor;
pub mod render;
pub mod screen;
mod types;
mod typing;

pub use types::{
    Key, Limits, MarkerFn, Markers, PaneError, PasteMode, Proof, Refusal, TurnOutcome, TurnRecord,
};

pub use driver::PaneDriver;
