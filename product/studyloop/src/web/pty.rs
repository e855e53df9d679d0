//! The PTY transport of the web console: a shell command (the harness launch
//! command or `STUDYLOOP_TEST_AGENT_CMD`) running on a pseudo-terminal, its
//! output queued as byte chunks for the WebSocket, its input written back.
//!
//! How, and why this way: the pty pair comes from `rustix::pty` (already a
//! dependency; safe API), and the child is started as `setsid -c /bin/sh -c
//! CMD` with the slave as its stdio. util-linux `setsid` (Essential on Debian)
//! makes the child a session and group leader with the pty as its controlling
//! terminal, which otherwise needs an `unsafe` `pre_exec` (denied in this
//! workspace) or a heavier crate such as portable-pty. Stop signals the whole
//! group. Blocking reads and writes run on two small threads; the async side
//! only sees the queue. Both directions are bounded: output in a queue of
//! [`PTY_QUEUE_CHUNKS`] chunks / [`PTY_QUEUE_BYTES`] (oldest dropped, reported
//! as a gap), input to [`PTY_INPUT_PENDING_BYTES`] not yet taken by the
//! terminal (more is refused with [`InputFull`], never buffered).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

use super::queue::{Final, Queue};

/// Output chunks kept for a console that is not reading (oldest dropped).
pub const PTY_QUEUE_CHUNKS: usize = 1024;
/// Output bytes kept for a console that is not reading (oldest dropped).
pub const PTY_QUEUE_BYTES: usize = 4 * 1024 * 1024;
/// Keyboard input accepted but not yet written to the terminal.
pub const PTY_INPUT_PENDING_BYTES: usize = 1024 * 1024;

/// Input refused because the terminal is not taking what it already has.
#[derive(Debug, thiserror::Error)]
#[error(
    "input refused: {pending} bytes are still waiting for the terminal (limit {PTY_INPUT_PENDING_BYTES}); the program is not reading its input"
)]
pub struct InputFull {
    /// Bytes still waiting.
    pub pending: usize,
}

/// What to run on the pty.
#[derive(Debug, Clone)]
pub struct PtyCommand {
    /// Passed to `/bin/sh -c`.
    pub shell_command: String,
    /// The session directory.
    pub cwd: PathBuf,
    /// The child's entire (scrubbed) environment.
    pub env: Vec<(String, String)>,
    /// Initial size.
    pub cols: u16,
    /// Initial size.
    pub rows: u16,
}

/// One item from the pty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PtyEvent {
    /// Raw terminal bytes.
    Output(Vec<u8>),
    /// The child ended; nothing follows.
    Stopped {
        /// Its exit status (`None`: killed by a signal).
        returncode: Option<i32>,
        /// `exit` (it ended) or `cancel` (we stopped it).
        reason: &'static str,
    },
}

impl Final for PtyEvent {
    fn is_final(&self) -> bool {
        matches!(self, Self::Stopped { .. })
    }

    fn bytes(&self) -> usize {
        match self {
            Self::Output(bytes) => bytes.len(),
            Self::Stopped { .. } => 0,
        }
    }
}

/// Why the pty could not start.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// Allocating the pseudo-terminal failed.
    #[error("cannot allocate a pseudo-terminal: {0}; is /dev/ptmx available?")]
    Alloc(#[source] std::io::Error),
    /// Starting the child failed.
    #[error("cannot start `setsid -c /bin/sh -c …` in {cwd}: {source}; is util-linux installed?")]
    Spawn {
        /// The working directory.
        cwd: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A running pty child.
#[derive(Debug)]
pub struct PtySession {
    pid: u32,
    master: Arc<File>,
    input: mpsc::Sender<Vec<u8>>,
    pending_input: Arc<AtomicUsize>,
    events: Arc<Queue<PtyEvent>>,
    stopping: Arc<AtomicBool>,
    exit: Arc<(Mutex<Option<Option<i32>>>, std::sync::Condvar)>,
}

impl PtySession {
    /// Opens a pty and starts the command on it.
    ///
    /// # Errors
    /// [`PtyError`] when the pty or the child cannot be created.
    pub fn start(cmd: &PtyCommand) -> Result<Self, PtyError> {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)
            .map_err(|e| PtyError::Alloc(e.into()))?;
        grantpt(&master).map_err(|e| PtyError::Alloc(e.into()))?;
        unlockpt(&master).map_err(|e| PtyError::Alloc(e.into()))?;
        let name = ptsname(&master, Vec::new()).map_err(|e| PtyError::Alloc(e.into()))?;
        let slave: OwnedFd = File::options()
            .read(true)
            .write(true)
            .open(std::ffi::OsStr::new(&*name.to_string_lossy()))
            .map_err(PtyError::Alloc)?
            .into();
        let _ = tcsetwinsize(&master, winsize(cmd.cols, cmd.rows));
        let dup = |fd: &OwnedFd| fd.try_clone().map(Stdio::from).map_err(PtyError::Alloc);
        let mut child = Command::new("setsid")
            .args(["-c", "/bin/sh", "-c", &cmd.shell_command])
            .current_dir(&cmd.cwd)
            .env_clear()
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(dup(&slave)?)
            .stdout(dup(&slave)?)
            .stderr(Stdio::from(slave))
            .spawn()
            .map_err(|source| PtyError::Spawn {
                cwd: cmd.cwd.clone(),
                source,
            })?;
        let pid = child.id();
        let master = Arc::new(File::from(master));
        let events = Arc::new(Queue::with_byte_budget(PTY_QUEUE_CHUNKS, PTY_QUEUE_BYTES));
        let stopping = Arc::new(AtomicBool::new(false));
        let exit = Arc::new((Mutex::new(None), std::sync::Condvar::new()));

        let exit_w = exit.clone();
        std::thread::spawn(move || {
            let code = child.wait().ok().and_then(|s| s.code());
            let (lock, cvar) = &*exit_w;
            *lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(code);
            cvar.notify_all();
        });

        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let writer = master.clone();
        let pending_input = Arc::new(AtomicUsize::new(0));
        let pending_w = pending_input.clone();
        std::thread::spawn(move || {
            for bytes in rx {
                let done = (&*writer).write_all(&bytes);
                pending_w.fetch_sub(bytes.len(), Ordering::AcqRel);
                if done.is_err() {
                    break;
                }
            }
        });

        let (reader, events_r, stopping_r, exit_r) = (
            master.clone(),
            events.clone(),
            stopping.clone(),
            exit.clone(),
        );
        std::thread::spawn(move || {
            let mut buf = [0_u8; 4096];
            // EIO once every holder of the slave has exited: that is the end.
            while let Ok(n @ 1..) = (&*reader).read(&mut buf) {
                events_r.push(PtyEvent::Output(buf[..n].to_vec()));
            }
            let code = wait_exit(&exit_r, Duration::from_secs(5)).flatten();
            let reason = if stopping_r.load(Ordering::Acquire) {
                "cancel"
            } else {
                "exit"
            };
            events_r.push(PtyEvent::Stopped {
                returncode: code,
                reason,
            });
        });

        Ok(Self {
            pid,
            master,
            input: tx,
            pending_input,
            events,
            stopping,
            exit,
        })
    }

    /// The child's pid (also its session and group id), for `child_pid`.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The output queue.
    #[must_use]
    pub fn events(&self) -> Arc<Queue<PtyEvent>> {
        self.events.clone()
    }

    /// Writes keyboard input to the terminal (never blocks the caller).
    ///
    /// # Errors
    /// [`InputFull`] when accepting `bytes` would leave more than
    /// [`PTY_INPUT_PENDING_BYTES`] waiting for the terminal.
    pub fn write(&self, bytes: &[u8]) -> Result<(), InputFull> {
        self.pending_input
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |pending| {
                (pending + bytes.len() <= PTY_INPUT_PENDING_BYTES).then_some(pending + bytes.len())
            })
            .map_err(|pending| InputFull { pending })?;
        if self.input.send(bytes.to_vec()).is_err() {
            // The writer is gone (the terminal closed): nothing will take it.
            self.pending_input.fetch_sub(bytes.len(), Ordering::AcqRel);
        }
        Ok(())
    }

    /// Resizes the terminal.
    pub fn resize(&self, cols: u16, rows: u16) {
        let _ = tcsetwinsize(&*self.master, winsize(cols, rows));
    }

    /// Whether the child has exited.
    #[must_use]
    pub fn has_exited(&self) -> bool {
        self.exit
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }

    /// Ends the child's whole group: SIGHUP+SIGTERM, then SIGKILL after `grace`.
    /// Blocks (call it from `spawn_blocking`).
    pub fn stop_blocking(&self, grace: Duration) {
        self.stopping.store(true, Ordering::Release);
        self.signal(Signal::HUP);
        self.signal(Signal::TERM);
        if wait_exit(&self.exit, grace).is_none() {
            self.signal(Signal::KILL);
            let _ = wait_exit(&self.exit, Duration::from_secs(5));
        }
        // Helpers that share the group may outlive the shell.
        self.signal(Signal::KILL);
    }

    fn signal(&self, signal: Signal) {
        if let Some(pid) = i32::try_from(self.pid).ok().and_then(Pid::from_raw) {
            // ESRCH means the group is already gone, which is the goal.
            let _ = kill_process_group(pid, signal);
        }
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if !self.has_exited() {
            self.stopping.store(true, Ordering::Release);
            self.signal(Signal::KILL);
        }
    }
}

fn winsize(cols: u16, rows: u16) -> Winsize {
    Winsize {
        ws_row: rows.max(1),
        ws_col: cols.max(1),
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

fn wait_exit(
    exit: &(Mutex<Option<Option<i32>>>, std::sync::Condvar),
    timeout: Duration,
) -> Option<Option<i32>> {
    let (lock, cvar) = exit;
    let guard = lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (guard, _) = cvar
        .wait_timeout_while(guard, timeout, |code| code.is_none())
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    *guard
}
