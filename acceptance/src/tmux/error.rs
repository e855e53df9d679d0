//! [`TmuxError`]: what went wrong talking to tmux, one variant per failure, each naming
//! the command, the socket and the fix.

use std::path::PathBuf;
use std::time::Duration;

/// What went wrong talking to tmux.
#[derive(Debug, thiserror::Error)]
pub enum TmuxError {
    /// The socket path does not fit in `sun_path`.
    #[error(
        "tmux socket path {path} is {len} bytes, over the {max}-byte AF_UNIX limit; use a shorter directory (e.g. a /tmp/sl-acc-XXXXXX dir)"
    )]
    SocketPathTooLong {
        /// The offending path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
        /// The limit ([`super::MAX_SOCKET_PATH`]), carried so the error names it
        /// without importing the server that owns it.
        max: usize,
    },
    /// `tmux` could not be started at all.
    #[error(
        "could not run `tmux {args}`: {source}; install tmux (apt-get install tmux) and put it on the PATH passed to the scratch env"
    )]
    Spawn {
        /// The arguments after `-S <socket>`.
        args: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A command did not answer in time.
    #[error(
        "`tmux {args}` on {socket} did not answer within {timeout:?}; the server may be hung (it is killed with the scratch world)"
    )]
    Timeout {
        /// The arguments after `-S <socket>`.
        args: String,
        /// The server socket.
        socket: PathBuf,
        /// The limit that passed.
        timeout: Duration,
    },
    /// A command ran and failed.
    #[error("`tmux {args}` on {socket} failed: {message}")]
    Failed {
        /// The arguments (or control-mode command line).
        args: String,
        /// The server socket.
        socket: PathBuf,
        /// tmux's stderr or `%error` text.
        message: String,
    },
    /// A control-mode command line that tmux would not read as one command:
    /// a newline ends it and starts another (a blank line detaches the
    /// client), and other control characters are keys or truncate it. Nothing
    /// was written.
    #[error(
        "refused to send control-mode command {command:?}: it holds {what}; text with newlines or control characters must go through a buffer loaded from a file (crate::pane types turns that way), never on the command line"
    )]
    UnsafeCommand {
        /// The refused line, debug-escaped.
        command: String,
        /// What made it unsafe (the character, or emptiness).
        what: String,
    },
    /// The control-mode client exited or its pipe closed.
    #[error("tmux control client on {socket} is gone ({reason}) while waiting for `{command}`")]
    ControlClosed {
        /// The server socket.
        socket: PathBuf,
        /// The command that was waiting.
        command: String,
        /// Why the client ended, as far as known.
        reason: String,
    },
}
