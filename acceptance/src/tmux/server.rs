//! [`Tmux`]: one tmux server addressed by its socket path, with the exact environment
//! every invocation (and so the server it starts) gets; one-shot commands are bounded
//! and a server is killed with every process group it started.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::TmuxError;
use crate::command::{self, RunError};

/// AF_UNIX `sun_path` limit on the platforms we run on (104 on macOS, 108 on
/// Linux): the smaller one, so a path that works here works everywhere.
pub const MAX_SOCKET_PATH: usize = 104;

/// How long a one-shot tmux command may take before it counts as hung.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// A tmux server addressed by socket path, with the exact environment every
/// tmux invocation (and so a server it starts) gets.
#[derive(Debug, Clone)]
pub struct Tmux {
    socket: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Tmux {
    /// A handle on the server at `socket`. `env` is the complete environment of
    /// every tmux call (a server started through this handle keeps it, and its
    /// panes inherit it); `TMUX` is always removed.
    pub fn new<K, V>(
        socket: impl Into<PathBuf>,
        env: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, TmuxError>
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let socket = socket.into();
        let len = socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(TmuxError::SocketPathTooLong {
                path: socket,
                len,
                max: MAX_SOCKET_PATH,
            });
        }
        let env = env
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .filter(|(k, _)| k != "TMUX")
            .collect();
        Ok(Self { socket, env })
    }

    /// The default server a child started with `TMUX_TMPDIR=<tmpdir>` uses:
    /// `<tmpdir>/tmux-<uid>/default`.
    pub(crate) fn for_tmpdir<K, V>(
        tmpdir: &Path,
        env: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, TmuxError>
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let uid = rustix::process::getuid().as_raw();
        Self::new(tmpdir.join(format!("tmux-{uid}")).join("default"), env)
    }

    /// The server socket path.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// A `tmux -S <socket> -f /dev/null` command with the handle's environment.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.env_clear().envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.arg("-S").arg(&self.socket).arg("-f").arg("/dev/null");
        cmd
    }

    /// Runs one tmux command and returns its stdout; fails on a non-zero exit or
    /// when it takes longer than 10 s.
    pub fn run(&self, args: &[&str]) -> Result<String, TmuxError> {
        let shown = args.join(" ");
        let mut cmd = self.command();
        cmd.args(args);
        match command::run_bounded(&mut cmd, COMMAND_TIMEOUT) {
            Ok(done) if done.status.success() => Ok(done.stdout_text()),
            Ok(done) => Err(TmuxError::Failed {
                args: shown,
                socket: self.socket.clone(),
                message: format!("{}: {}", done.status, done.stderr_text().trim()),
            }),
            Err(RunError::TimedOut { .. }) => Err(TmuxError::Timeout {
                args: shown,
                socket: self.socket.clone(),
                timeout: COMMAND_TIMEOUT,
            }),
            Err(RunError::Spawn { source, .. } | RunError::Wait { source, .. }) => {
                Err(TmuxError::Spawn {
                    args: shown,
                    source,
                })
            }
        }
    }

    /// Starts a detached session running `argv` in `cwd` (starting the server
    /// if needed) and returns its first pane id (`%N`).
    pub fn new_session(
        &self,
        name: &str,
        cwd: &Path,
        size: (u16, u16),
        argv: &[&str],
    ) -> Result<String, TmuxError> {
        let (w, h) = (size.0.to_string(), size.1.to_string());
        let cwd = cwd.to_string_lossy().into_owned();
        let mut args = vec![
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-s",
            name,
            "-x",
            &w,
            "-y",
            &h,
            "-c",
            &cwd,
        ];
        args.extend_from_slice(argv);
        Ok(self.run(&args)?.trim().to_owned())
    }

    /// Whether a server answers on the socket.
    pub fn server_running(&self) -> bool {
        self.socket.exists() && self.run(&["list-sessions"]).is_ok()
    }

    /// Whether session `name` exists (exact match).
    pub(crate) fn has_session(&self, name: &str) -> bool {
        self.run(&["has-session", "-t", &format!("={name}")])
            .is_ok()
    }

    /// The process id of every pane's leader on this server.
    pub fn pane_pids(&self) -> Vec<i32> {
        self.run(&["list-panes", "-a", "-F", "#{pane_pid}"])
            .map(|out| out.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Stops the server and everything its panes started: SIGTERM to each
    /// pane's process group, `kill-server`, then SIGKILL to any group still
    /// alive. A server that is not running (or no tmux binary) is success.
    pub fn kill_server(&self) {
        if !self.socket.exists() {
            return;
        }
        let groups = self.pane_pids();
        signal_groups(&groups, rustix::process::Signal::TERM);
        let _ = self.run(&["kill-server"]);
        if !wait_groups_gone(&groups, Duration::from_secs(2)) {
            signal_groups(&groups, rustix::process::Signal::KILL);
            wait_groups_gone(&groups, Duration::from_secs(1));
        }
    }
}

/// Waits (bounded, 10 ms steps) until none of `groups` has a live member.
fn wait_groups_gone(groups: &[i32], within: Duration) -> bool {
    let start = std::time::Instant::now();
    loop {
        if !groups.iter().any(|&g| group_alive(g)) {
            return true;
        }
        if start.elapsed() >= within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal_groups(groups: &[i32], signal: rustix::process::Signal) {
    for &g in groups {
        if let Some(pid) = rustix::process::Pid::from_raw(g) {
            let _ = rustix::process::kill_process_group(pid, signal);
        }
    }
}

fn group_alive(group: i32) -> bool {
    rustix::process::Pid::from_raw(group)
        .is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}
