//! The ACP session: the agent child, its timeouts, its error type and the calls the console makes on it.

use super::client;
use super::client::Command;
use super::process;
use super::{AgentCommand, EVENT_QUEUE_BYTES, EVENT_QUEUE_CAPACITY, EventQueue, StderrTail};

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// Deadlines for each request. A version-mismatched adapter (pi-acp against
/// an old pi) hangs silently, so nothing waits forever.
#[derive(Debug, Clone, Copy)]
pub struct AcpTimeouts {
    /// `initialize` (15 s as the reference).
    pub initialize: Duration,
    /// `session/new` (60 s: kiro starts its MCP servers first).
    pub new_session: Duration,
    /// One `session/prompt` turn.
    pub prompt: Duration,
    /// How long an agent gets to exit after cancel/SIGTERM before SIGKILL.
    pub stop_grace: Duration,
}

impl Default for AcpTimeouts {
    fn default() -> Self {
        Self {
            initialize: Duration::from_secs(15),
            new_session: Duration::from_secs(60),
            prompt: Duration::from_secs(600),
            stop_grace: Duration::from_secs(2),
        }
    }
}

/// Why an ACP session could not start or a command could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The command line was empty.
    #[error("the ACP agent command is empty; set the harness ACP argv or STUDYLOOP_TEST_ACP_CMD")]
    EmptyCommand,
    /// The program could not be started.
    #[error("cannot start ACP agent `{program}`: {source}; is it installed and on PATH?")]
    Spawn {
        /// argv[0].
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The child's pipes were not available.
    #[error("the ACP agent's stdio pipes could not be opened")]
    Pipes,
    /// The agent answered a request with an error.
    #[error("ACP {step} failed: {detail}")]
    Rpc {
        /// The request.
        step: &'static str,
        /// The agent's error message and code.
        detail: String,
    },
    /// The agent did not answer in time.
    #[error("ACP {step} got no answer within {}s; the agent may be hung or the wrong version", after.as_secs())]
    Timeout {
        /// The request.
        step: &'static str,
        /// The deadline.
        after: Duration,
    },
    /// The agent went away during the handshake.
    #[error("ACP {step} failed: {detail}; agent stderr (last 4 KB): {stderr_tail}")]
    Handshake {
        /// The request in progress.
        step: &'static str,
        /// What happened.
        detail: String,
        /// The agent's last stderr bytes.
        stderr_tail: String,
    },
    /// The session already ended.
    #[error("the ACP session has ended; start a new one")]
    Ended,
    /// Too many commands are waiting for the agent.
    #[error(
        "the agent has {COMMAND_QUEUE} commands waiting; wait for its reply (or stop the session) before sending more"
    )]
    Busy,
}

/// How many commands (prompts, permission answers) may wait for the driver.
pub const COMMAND_QUEUE: usize = 64;

/// A live ACP session: the agent process, its connection and its events.
#[derive(Debug)]
pub struct AcpSession {
    commands: mpsc::Sender<Command>,
    events: Arc<EventQueue>,
    stderr: StderrTail,
    agent_name: Option<String>,
    session_id: String,
    pid: Option<u32>,
    driver: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl AcpSession {
    /// Spawns the agent and runs the handshake; on any failure the agent's
    /// whole process group is killed before the error returns.
    ///
    /// # Errors
    /// [`AcpError`] naming the failed step (spawn, initialize, session/new).
    pub async fn start(cmd: AgentCommand, timeouts: AcpTimeouts) -> Result<Self, AcpError> {
        let (process, stdin, stdout) = process::AgentProcess::spawn(&cmd)?;
        let stderr = process.stderr.clone();
        let pid = process.pid();
        let events = Arc::new(EventQueue::with_byte_budget(
            EVENT_QUEUE_CAPACITY,
            EVENT_QUEUE_BYTES,
        ));
        let (tx, rx) = mpsc::channel(COMMAND_QUEUE);
        let (ready_tx, ready_rx) = oneshot::channel();
        let driver = tokio::spawn(client::drive(client::Driver {
            process,
            stdin,
            stdout,
            cwd: cmd.cwd.clone(),
            mcp_servers: cmd.mcp_servers.clone(),
            turns: cmd.turns.clone(),
            timeouts,
            events: events.clone(),
            commands: rx,
            ready: ready_tx,
        }));
        let handshake = ready_rx.await.unwrap_or(Err(AcpError::Ended));
        let handshake = match handshake {
            Ok(h) => h,
            Err(err) => {
                // The driver kills the group on its way out; wait so no orphan remains.
                let _ = driver.await;
                return Err(with_stderr(err, &stderr));
            }
        };
        Ok(Self {
            commands: tx,
            events,
            stderr,
            agent_name: handshake.agent_name,
            session_id: handshake.session_id,
            pid,
            driver: std::sync::Mutex::new(Some(driver)),
        })
    }

    /// The agent's self-reported name (`agentInfo.name`).
    #[must_use]
    pub fn agent_name(&self) -> Option<&str> {
        self.agent_name.as_deref()
    }

    /// The ACP session id from `session/new`.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The agent's process id (also its process group id), for `child_pid`.
    #[must_use]
    pub fn agent_pid(&self) -> Option<u32> {
        self.pid
    }

    /// The event queue (one consumer at a time).
    #[must_use]
    pub fn events(&self) -> Arc<EventQueue> {
        self.events.clone()
    }

    /// The agent's last stderr bytes.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Sends one `session/prompt`; its end arrives as an `agent_message`
    /// `turn_end` event (or a `transport_error`).
    ///
    /// # Errors
    /// [`AcpError::Ended`] once the session is over, [`AcpError::Busy`] when
    /// [`COMMAND_QUEUE`] commands are already waiting.
    pub fn prompt(&self, text: &str) -> Result<(), AcpError> {
        self.send(Command::Prompt(text.to_owned()))
    }

    fn send(&self, command: Command) -> Result<(), AcpError> {
        self.commands.try_send(command).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => AcpError::Busy,
            mpsc::error::TrySendError::Closed(_) => AcpError::Ended,
        })
    }

    /// Answers the permission request `request_id` (from the event's
    /// `_request_id`) with an ACP outcome, e.g.
    /// `{"outcome":"selected","optionId":"opt-allow"}` or `{"outcome":"cancelled"}`.
    ///
    /// # Errors
    /// [`AcpError::Ended`] once the session is over.
    pub fn respond_permission(&self, request_id: &str, outcome: Value) -> Result<(), AcpError> {
        let request_id = request_id.to_owned();
        self.send(Command::Permission {
            request_id,
            outcome,
        })
    }

    /// Sends `session/cancel`, closes the agent's stdin, and kills its process
    /// group if it has not exited within the grace period. Waits until done;
    /// a second call returns at once.
    pub async fn stop(&self) {
        let _ = self.commands.send(Command::Stop).await;
        let driver = self
            .driver
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(driver) = driver {
            let _ = driver.await;
        }
    }

    /// Whether the session has stopped (its final event was queued).
    #[must_use]
    pub fn has_stopped(&self) -> bool {
        self.events.is_closed()
    }
}

impl Drop for AcpSession {
    fn drop(&mut self) {
        // Dropping without stop still ends the agent: the driver sees the
        // closed command channel, cancels and kills the group.
        let _ = self.commands.try_send(Command::Stop);
    }
}

fn with_stderr(err: AcpError, stderr: &StderrTail) -> AcpError {
    match err {
        AcpError::Handshake {
            step,
            detail,
            stderr_tail,
        } if stderr_tail.is_empty() => AcpError::Handshake {
            step,
            detail,
            stderr_tail: stderr.text(),
        },
        other => other,
    }
}
