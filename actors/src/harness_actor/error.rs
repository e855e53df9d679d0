//! Why the harness actor's private tmux, pane or second harness failed.

use std::path::PathBuf;
use std::time::Duration;

use super::sentinel::DONE_SENTINEL;

/// A failure of the harness actor (ends its conversation as errored).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HarnessActorError {
    /// tmux could not be started.
    #[error("cannot run {program}: {detail}")]
    Spawn {
        /// The tmux program.
        program: PathBuf,
        /// The OS error.
        detail: String,
    },
    /// A tmux call outlived its bound and was killed.
    #[error("tmux {call} did not finish within {waited:?} and was killed")]
    CallTimeout {
        /// The tmux command.
        call: String,
        /// Its bound.
        waited: Duration,
    },
    /// Waiting for a tmux call failed.
    #[error("waiting for tmux {call} failed: {detail}")]
    Wait {
        /// The tmux command.
        call: String,
        /// The OS error.
        detail: String,
    },
    /// A tmux call exited non-zero.
    #[error("tmux {call} failed ({status}): {stderr}")]
    Call {
        /// The tmux command.
        call: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The text holds a control character that would be typed as a key.
    #[error("the text to type {0}")]
    Untypable(String),
    /// tmux's status line could not be read.
    #[error("unexpected tmux status line {0:?}")]
    StatusLine(String),
    /// The pane history shrank below the read cursor.
    #[error(
        "the pane history shrank below the read cursor ({complete} < {consumed} lines); its history-limit dropped lines"
    )]
    HistoryShrank {
        /// Complete lines now.
        complete: usize,
        /// Lines already read.
        consumed: usize,
    },
    /// The socket directory could not be made.
    #[error("cannot create the socket dir {path}: {detail}")]
    SocketDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        detail: String,
    },
    /// The second harness exited without saying it was done.
    #[error("the harness command exited without printing {DONE_SENTINEL}")]
    Exited,
    /// The second harness printed no line in time.
    #[error("timed out after {0:?} (reply_timeout) waiting for the harness actor's next line")]
    ReplyTimeout(Duration),
}
