//! The harness actor: its settings, its private tmux socket and the learner turn it plays in the pane.

use super::HarnessActorError;
use super::screen::{Event, Reader};
use super::tmux::Tmux;
use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::conversation::{Actor, Learner, LearnerError, Learning, Next, PaneError};
use crate::error::ActorError;
use crate::kind::ActorKind;
use crate::llm::{ChatMessage, ChatResponse};
use crate::transcript::{CancelToken, Usage};

/// `sockaddr_un.sun_path` on macOS/BSD (Linux allows 108); using the smaller
/// value keeps paths portable. The path must leave room for the NUL.
pub const SUN_PATH_LEN: usize = 104;

/// The socket file's name inside the socket directory.
const SOCKET_NAME: &str = "a";

/// How often the pane is captured while waiting for a line.
const POLL: Duration = Duration::from_millis(50);

/// How long to wait for the second harness's next line by default.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// The environment the second harness gets when the caller passes none: enough
/// to run programs, and no credentials.
pub const DEFAULT_ENV_ALLOW_LIST: [&str; 6] = ["PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER"];

/// What the harness actor needs.
#[derive(Debug, Clone)]
pub struct HarnessSettings {
    /// Shell command line starting the second harness (run by tmux via `sh -c`).
    pub command: String,
    /// A private directory for the tmux socket (short; created 0700 if missing).
    pub socket_dir: PathBuf,
    /// The tmux program to run.
    pub tmux: PathBuf,
    /// The complete environment of tmux and the harness in it.
    pub env: Vec<(OsString, OsString)>,
    /// Longest wait for the harness's next line.
    pub reply_timeout: Duration,
}

/// The socket path for `socket_dir`, or an error naming the limit and the fix.
pub fn socket_path(socket_dir: &Path) -> Result<PathBuf, ActorError> {
    let path = socket_dir.join(SOCKET_NAME);
    let len = path.as_os_str().len();
    let limit = SUN_PATH_LEN - 1;
    if len > limit {
        return Err(ActorError::SocketPathTooLong {
            path,
            len,
            limit,
            sun_path: SUN_PATH_LEN,
        });
    }
    Ok(path)
}

/// Finds `program` in the `PATH` of `env` (not of this process).
pub fn find_on_path(program: &str, path_var: Option<&str>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// A learner played by a second harness in its own tmux.
#[derive(Debug)]
pub struct HarnessActor {
    command: String,
    reply_timeout: Duration,
    socket_dir: PathBuf,
    tmux: Tmux,
    started: bool,
}

impl HarnessActor {
    /// Validates the socket path (before touching the filesystem); tmux starts
    /// on the first `converse`.
    pub fn new(settings: HarnessSettings) -> Result<Self, ActorError> {
        let socket = socket_path(&settings.socket_dir)?;
        Ok(Self {
            command: settings.command,
            reply_timeout: settings.reply_timeout,
            socket_dir: settings.socket_dir,
            tmux: Tmux::new(settings.tmux, socket, settings.env),
            started: false,
        })
    }

    /// The private tmux socket (for recording the pane on failure).
    pub fn socket(&self) -> &Path {
        self.tmux.socket()
    }

    fn start(&mut self) -> Result<(), HarnessActorError> {
        if self.started {
            return Ok(());
        }
        if !self.socket_dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.socket_dir)
                .map_err(|e| HarnessActorError::SocketDir {
                    path: self.socket_dir.clone(),
                    detail: e.to_string(),
                })?;
        }
        self.started = true;
        self.tmux.start(&self.command)
    }

    /// Waits for the next learner line (or the sentinel), polling the pane.
    fn next_line(
        &self,
        reader: &mut Reader,
        cancel: &CancelToken,
    ) -> Result<Option<Event>, HarnessActorError> {
        let deadline = Instant::now() + self.reply_timeout;
        loop {
            let capture = self.tmux.capture()?;
            if let Some(event) = reader.next(&capture)? {
                return Ok(Some(event));
            }
            if capture.dead {
                return Err(HarnessActorError::Exited);
            }
            if cancel.is_cancelled() {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                return Err(HarnessActorError::ReplyTimeout(self.reply_timeout));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Stops the private tmux server. Also done on drop.
    pub fn close(&mut self) {
        if self.started {
            self.tmux.kill_server();
            self.started = false;
        }
    }
}

impl Drop for HarnessActor {
    fn drop(&mut self) {
        self.close();
    }
}

impl Actor for HarnessActor {
    fn kind(&self) -> ActorKind {
        ActorKind::Harness
    }

    fn learner(&mut self) -> Result<Learning<'_>, PaneError> {
        self.start()?;
        let learner = PaneLearner {
            actor: self,
            reader: Reader::default(),
        };
        Ok(Learning::new(learner, None))
    }
}

/// The second harness as a learner: its next printed line, and the mentor's
/// reply typed back. Usage is unobservable, so every turn records `None`.
struct PaneLearner<'a> {
    actor: &'a HarnessActor,
    reader: Reader,
}

impl Learner for PaneLearner<'_> {
    fn next(
        &mut self,
        _history: &[ChatMessage],
        _max_tokens: Option<u32>,
        cancel: &CancelToken,
    ) -> Result<Next, LearnerError> {
        let event = self
            .actor
            .next_line(&mut self.reader, cancel)
            .map_err(|e| LearnerError::Pane(Box::new(e)))?;
        Ok(match event {
            Some(Event::Line(text)) => Next::Say(ChatResponse {
                text,
                usage: Usage::UNKNOWN,
            }),
            Some(Event::Done) => Next::Done,
            None => Next::Cancelled,
        })
    }

    fn heard(&mut self, reply: &str) -> Result<(), LearnerError> {
        self.actor
            .tmux
            .type_line(reply)
            .map_err(|e| LearnerError::TypeReply(Box::new(e)))?;
        self.reader.typed(reply);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_paths_over_the_limit_name_the_limit_and_the_fix() {
        let long = PathBuf::from(format!("/tmp/{}", "d".repeat(120)));
        let err = socket_path(&long).unwrap_err().to_string();
        assert!(err.contains("over the AF_UNIX limit of 103 bytes"), "{err}");
        assert!(err.contains("shorter socket directory under /tmp"), "{err}");
        let exact = PathBuf::from(format!("/tmp/{}", "d".repeat(103 - "/tmp/".len() - 2)));
        assert_eq!(socket_path(&exact).unwrap().as_os_str().len(), 103);
    }
}
