//! Running a child process with a deadline and captured output.
//!
//! Every subprocess this crate runs on its own behalf (a harness's version
//! command, `tmux kill-server`, `git`) goes through here, so none can hang a
//! run: the child gets its own process group and, past the deadline, the whole
//! group is killed. Output is captured on reader threads, so a chatty child
//! never blocks on a full pipe. This module does not choose environments; the
//! caller configures the `Command` (usually with [`crate::scratch::Env::apply`]).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

/// How long to wait for the output pipes after the child has exited; a
/// daemonised grandchild that keeps them open must not hang the caller.
const PIPE_DRAIN: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(5);

/// A child that exited on its own before the deadline.
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it exited.
    pub status: ExitStatus,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl Finished {
    /// Stdout as text (lossy).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Stderr as text (lossy).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Why a bounded run did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be started (missing, not executable).
    #[error(
        "failed to start {program}: {source} (check that it is installed and on the child's PATH)"
    )]
    Spawn {
        /// The program as given to `Command`.
        program: String,
        /// The OS error; `NotFound` when the binary is missing.
        #[source]
        source: std::io::Error,
    },
    /// The deadline passed; the child's process group was killed.
    #[error("{program} did not exit within {timeout:?}; its process group was killed")]
    TimedOut {
        /// The program as given to `Command`.
        program: String,
        /// The deadline.
        timeout: Duration,
        /// Output captured before the kill.
        stdout: Vec<u8>,
        /// Output captured before the kill.
        stderr: Vec<u8>,
    },
    /// Waiting on the child failed.
    #[error("failed to wait for {program}: {source}")]
    Wait {
        /// The program as given to `Command`.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    /// Whether the program was simply not found.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, RunError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Runs `cmd` in a new process group with stdin closed and both outputs
/// captured, killing the group if it outlives `timeout`.
pub(crate) fn run_bounded(cmd: &mut Command, timeout: Duration) -> Result<Finished, RunError> {
    prepare(cmd);
    let program = program_name(cmd);
    let child = cmd.spawn().map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    wait_bounded(child, &program, timeout)
}

/// Sets what [`wait_bounded`] relies on: own process group, piped outputs,
/// no stdin (a child that prompts must fail, not hang).
pub fn prepare(cmd: &mut Command) -> &mut Command {
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
}

/// The program of `cmd`, for messages.
pub(crate) fn program_name(cmd: &Command) -> String {
    cmd.get_program().to_string_lossy().into_owned()
}

/// Waits for a child spawned after [`prepare`], collecting its output, and
/// kills its process group (the child's pid) at the deadline.
pub(crate) fn wait_bounded(
    child: Child,
    program: &str,
    timeout: Duration,
) -> Result<Finished, RunError> {
    wait_bounded_or_cancelled(child, program, timeout, || false)
}

/// As [`wait_bounded`], and the group is also killed as soon as `cancelled()`
/// holds (checked every few ms): then the error is [`RunError::Wait`] of kind
/// `Interrupted`. Cleanup paths use [`wait_bounded`]: they must finish after
/// a cancel.
pub(crate) fn wait_bounded_or_cancelled(
    mut child: Child,
    program: &str,
    timeout: Duration,
    cancelled: impl Fn() -> bool,
) -> Result<Finished, RunError> {
    let start = Instant::now();
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let deadline = Instant::now() + PIPE_DRAIN;
                return Ok(Finished {
                    status,
                    stdout: collect(&stdout, deadline),
                    stderr: collect(&stderr, deadline),
                    elapsed: start.elapsed(),
                });
            }
            Ok(None) if start.elapsed() >= timeout => {
                kill_group(child.id());
                // Reap the leader so it does not linger as a zombie.
                let _ = child.wait();
                let deadline = Instant::now() + PIPE_DRAIN;
                return Err(RunError::TimedOut {
                    program: program.to_owned(),
                    timeout,
                    stdout: collect(&stdout, deadline),
                    stderr: collect(&stderr, deadline),
                });
            }
            Ok(None) if cancelled() => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(RunError::Wait {
                    program: program.to_owned(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "cancelled: the runner was interrupted (SIGINT/SIGTERM); its process group was killed",
                    ),
                });
            }
            Ok(None) => thread::sleep(POLL),
            Err(source) => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(RunError::Wait {
                    program: program.to_owned(),
                    source,
                });
            }
        }
    }
}

/// SIGKILL to the process group led by `pid`; a group that is already gone is
/// not an error.
fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send(buf);
        });
    } else {
        let _ = tx.send(Vec::new());
    }
    rx
}

fn collect(rx: &mpsc::Receiver<Vec<u8>>, deadline: Instant) -> Vec<u8> {
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_status() {
        let done = run_bounded(
            Command::new("/bin/sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(done.stdout_text(), "out\n");
        assert_eq!(done.stderr_text(), "err\n");
        assert_eq!(done.status.code(), Some(3));
    }

    #[test]
    fn kills_the_whole_group_at_the_deadline() {
        let start = Instant::now();
        let err = run_bounded(
            Command::new("/bin/sh").args(["-c", "echo started; sleep 30 & sleep 30"]),
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(10));
        match err {
            RunError::TimedOut { stdout, .. } => assert_eq!(stdout, b"started\n"),
            other => panic!("expected a timeout, got {other}"),
        }
    }

    #[test]
    fn a_missing_program_is_named() {
        let err = run_bounded(
            &mut Command::new("/nonexistent/studyloop-no-such-binary"),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(err.is_not_found());
        assert!(err.to_string().contains("studyloop-no-such-binary"));
    }
}
