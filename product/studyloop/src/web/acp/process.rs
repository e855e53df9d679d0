//! The ACP agent as an operating-system process: spawned in its own process
//! group with an explicit environment, its stderr drained into a 4 KB tail, and
//! the whole group signalled on stop.
//!
//! Why a process group: npm adapters (codex-acp, claude-code-acp) are a `node`
//! wrapper around a native child, and some ignore stdin EOF; signalling only the
//! wrapper leaves the native child orphaned. This module knows nothing about
//! JSON-RPC.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::AcpError;

/// How many bytes of the agent's stderr are kept for diagnostics.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// What to run: argv, working directory (the session dir) and the complete
/// environment (already scrubbed by the caller; nothing is inherited).
#[derive(Debug, Clone)]
pub struct AgentCommand {
    /// Program and arguments; the program is looked up on the given `PATH`.
    pub argv: Vec<String>,
    /// The session directory; also the root the fs handlers are confined to.
    pub cwd: PathBuf,
    /// The child's entire environment.
    pub env: Vec<(String, String)>,
    /// MCP servers passed in `session/new` `mcpServers` (stdio form), so a
    /// harness driven over ACP gets the product's tools.
    pub mcp_servers: Vec<crate::mcp_registration::McpServerSpec>,
    /// Where the conversation's turns are indexed for search (none: not kept).
    pub turns: Option<super::TurnLog>,
}

/// The last bytes an agent wrote to stderr.
#[derive(Debug, Default, Clone)]
pub struct StderrTail(Arc<Mutex<Vec<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut buf = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        buf.extend_from_slice(bytes);
        if buf.len() > STDERR_TAIL_BYTES {
            let cut = buf.len() - STDERR_TAIL_BYTES;
            buf.drain(..cut);
        }
    }

    /// The kept tail as (lossy) text.
    #[must_use]
    pub fn text(&self) -> String {
        let buf = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// A running agent process and its group.
#[derive(Debug)]
pub struct AgentProcess {
    child: Child,
    pgid: Option<Pid>,
    /// Its stderr tail.
    pub stderr: StderrTail,
    /// The task that reads stderr into the tail (done at stderr EOF).
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl AgentProcess {
    /// Spawns `cmd` in a new process group with piped stdio.
    ///
    /// # Errors
    /// [`AcpError::EmptyCommand`] or [`AcpError::Spawn`] (e.g. the program is missing).
    pub fn spawn(cmd: &AgentCommand) -> Result<(Self, ChildStdin, ChildStdout), AcpError> {
        let (program, args) = cmd.argv.split_first().ok_or(AcpError::EmptyCommand)?;
        let path = cmd
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str());
        let resolved = resolve_program(program, path);
        let mut command = Command::new(&resolved);
        command
            .args(args)
            .current_dir(&cmd.cwd)
            .env_clear()
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group, so stop can signal the adapter and every helper it spawned.
            .process_group(0)
            // Last resort if the owner is dropped without `stop`.
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| AcpError::Spawn {
            program: program.clone(),
            source,
        })?;
        let pgid = child
            .id()
            .and_then(|id| Pid::from_raw(i32::try_from(id).ok()?));
        let stdin = child.stdin.take().ok_or(AcpError::Pipes)?;
        let stdout = child.stdout.take().ok_or(AcpError::Pipes)?;
        let stderr = StderrTail::default();
        let stderr_reader = child.stderr.take().map(|mut pipe| {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0_u8; 1024];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    tail.push(&buf[..n]);
                }
            })
        });
        Ok((
            Self {
                child,
                pgid,
                stderr,
                stderr_reader,
            },
            stdin,
            stdout,
        ))
    }

    /// The leader's pid (= the group id).
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p.as_raw_nonzero().get().unsigned_abs())
    }

    /// Waits for the leader to exit; its exit code (`None` if killed by a signal).
    pub async fn wait(&mut self) -> Option<i32> {
        self.child.wait().await.ok().and_then(|s| s.code())
    }

    /// Waits (at most `within`) until stderr is drained to EOF, so the tail
    /// holds the agent's last words.
    pub async fn stderr_settled(&mut self, within: Duration) {
        if let Some(reader) = self.stderr_reader.as_mut() {
            let _ = tokio::time::timeout(within, reader).await;
        }
    }

    /// Whether the leader has already exited, and with what code.
    pub fn try_exit(&mut self) -> Option<Option<i32>> {
        self.child.try_wait().ok().flatten().map(|s| s.code())
    }

    /// Ends the whole group: SIGTERM, up to `grace` for the leader to exit, then
    /// SIGKILL to whatever is left. Returns the leader's exit code.
    pub async fn terminate(&mut self, grace: Duration) -> Option<i32> {
        if let Some(code) = self.try_exit() {
            self.signal_group(Signal::KILL);
            return code;
        }
        self.signal_group(Signal::TERM);
        let code = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => status.ok().and_then(|s| s.code()),
            Err(_) => {
                self.signal_group(Signal::KILL);
                self.child.wait().await.ok().and_then(|s| s.code())
            }
        };
        // Helpers may outlive the leader (they share its group): sweep them too.
        self.signal_group(Signal::KILL);
        code
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the good case; nothing to report.
            let _ = kill_process_group(pgid, signal);
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // Never leave an agent group behind, even on an early return or a panic.
        self.signal_group(Signal::KILL);
    }
}

/// Finds `program` on the child's own `PATH` (not the server's), so a scrubbed
/// env with a harness bin dir first launches that harness.
#[must_use]
pub fn resolve_program(program: &str, path: Option<&str>) -> PathBuf {
    if program.contains('/') {
        return PathBuf::from(program);
    }
    path.into_iter()
        .flat_map(|p| p.split(':'))
        .filter(|dir| !dir.is_empty())
        .map(|dir| PathBuf::from(dir).join(program))
        .find(|candidate| is_executable(candidate))
        .unwrap_or_else(|| PathBuf::from(program))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
