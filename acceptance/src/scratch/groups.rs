//! Stopping what a scratch world started: its private tmux servers, then every
//! process group it spawned.
//!
//! tmux servers daemonise into their own session, so they are stopped through
//! their sockets (`tmux -S <socket> kill-server`), found under the scratch
//! socket dir. A missing tmux binary means no server could have been started:
//! that is not an error. Process groups get SIGTERM, a grace period, then
//! SIGKILL. Last come stragglers: any process still carrying this world's
//! `TMUX_TMPDIR` or HOME in its environment (a pane's harness that outlived its
//! tmux server, a daemonised grandchild in its own group), which would otherwise
//! keep writing into the tree while it is swept. Problems here are returned as
//! warnings, never panics: the sweep that follows must still run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions, kill_process, kill_process_group, waitpid};

use crate::scratch::Env;
use crate::{command, procfs};

/// How long `tmux kill-server` may take per socket.
const TMUX_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a process group gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for a group to vanish after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(10);

/// The process groups a scratch world started.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    pgids: Mutex<Vec<Pid>>,
}

impl Groups {
    /// Records a group leader's pid (its pgid, as it was spawned with
    /// `process_group(0)`).
    pub(crate) fn record(&self, pid: u32) {
        if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            self.lock().push(pid);
        }
    }

    /// The recorded pgids.
    pub(crate) fn snapshot(&self) -> Vec<i32> {
        self.lock()
            .iter()
            .map(|p| p.as_raw_nonzero().get())
            .collect()
    }

    /// SIGTERM every group, wait up to the grace period, SIGKILL the rest.
    /// Returns one warning per group that survived SIGKILL.
    pub(crate) fn terminate_all(&self) -> Vec<String> {
        let pgids: Vec<Pid> = std::mem::take(&mut *self.lock());
        let mut alive: Vec<Pid> = pgids
            .into_iter()
            .filter(|&pg| kill_process_group(pg, Signal::TERM).is_ok())
            .collect();
        alive = wait_until_gone(alive, TERM_GRACE);
        for &pg in &alive {
            let _ = kill_process_group(pg, Signal::KILL);
        }
        wait_until_gone(alive, KILL_WAIT)
            .into_iter()
            .map(|pg| format!("process group {} survived SIGKILL", pg.as_raw_nonzero()))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pid>> {
        // A panic while holding this lock cannot leave the list inconsistent.
        self.pgids
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn wait_until_gone(mut alive: Vec<Pid>, within: Duration) -> Vec<Pid> {
    let start = Instant::now();
    loop {
        alive.retain(|&pg| {
            // Reap the leader if it is our child, so a zombie does not keep the
            // group "alive"; ECHILD (not ours, or already reaped) is fine.
            let _ = waitpid(Some(pg), WaitOptions::NOHANG);
            procfs::group_alive(pg.as_raw_nonzero().get())
        });
        if alive.is_empty() || start.elapsed() >= within {
            return alive;
        }
        thread::sleep(POLL);
    }
}

/// Stops every tmux server whose socket is under `socket_dir`, using the tmux
/// found on `env`'s PATH. Returns warnings; never fails.
pub(crate) fn stop_tmux_servers(socket_dir: &Path, env: &Env) -> Vec<String> {
    let sockets = tmux_sockets(socket_dir);
    if sockets.is_empty() {
        return Vec::new();
    }
    let Some(tmux) = env.find_binary("tmux") else {
        // No tmux binary: no server can have been started through it.
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for socket in sockets {
        let tmux_on = |args: &[&str]| {
            let mut cmd = Command::new(&tmux);
            env.apply(&mut cmd).arg("-S").arg(&socket).args(args);
            command::run_bounded(&mut cmd, TMUX_TIMEOUT)
        };
        // The server's pid first: kill-server returns before the server has
        // exited, and the sweep must not race a server still writing files.
        let server = tmux_on(&["display-message", "-p", "#{pid}"])
            .ok()
            .filter(|done| done.status.success())
            .and_then(|done| done.stdout_text().trim().parse::<i32>().ok())
            .and_then(Pid::from_raw);
        match tmux_on(&["kill-server"]) {
            // A non-zero exit means no server was listening: nothing to stop.
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => warnings.push(format!("stopping tmux on {}: {e}", socket.display())),
        }
        if let Some(pid) = server
            && !wait_pid_gone(pid, TERM_GRACE)
        {
            let _ = kill_process(pid, Signal::KILL);
            if !wait_pid_gone(pid, KILL_WAIT) {
                warnings.push(format!(
                    "tmux server {} survived SIGKILL",
                    pid.as_raw_nonzero()
                ));
            }
        }
    }
    warnings
}

/// Stops every process whose environment marks it as a child of this world:
/// `TMUX_TMPDIR=<socket_dir>` or `HOME=<home>`. SIGTERM, grace, SIGKILL.
pub(crate) fn stop_stragglers(socket_dir: &Path, home: &Path) -> Vec<String> {
    let mut pids = procfs::processes_with_env("TMUX_TMPDIR", socket_dir.as_os_str());
    pids.extend(procfs::processes_with_env("HOME", home.as_os_str()));
    pids.sort_unstable();
    pids.dedup();
    let pids: Vec<Pid> = pids.into_iter().filter_map(Pid::from_raw).collect();
    for &pid in &pids {
        let _ = kill_process(pid, Signal::TERM);
    }
    let mut warnings = Vec::new();
    for pid in pids {
        if !wait_pid_gone(pid, TERM_GRACE) {
            let _ = kill_process(pid, Signal::KILL);
            if !wait_pid_gone(pid, KILL_WAIT) {
                warnings.push(format!("process {} survived SIGKILL", pid.as_raw_nonzero()));
            }
        }
    }
    warnings
}

fn wait_pid_gone(pid: Pid, within: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !procfs::process_alive(pid.as_raw_nonzero().get()) {
            return true;
        }
        if start.elapsed() >= within {
            return false;
        }
        thread::sleep(POLL);
    }
}

/// Every non-directory entry of `<socket_dir>/tmux-<uid>/`: tmux's default and
/// named (`-L`) sockets all live there when `TMUX_TMPDIR` is the socket dir.
fn tmux_sockets(socket_dir: &Path) -> Vec<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let dir = socket_dir.join(format!("tmux-{uid}"));
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut sockets: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.path())
        .collect();
    sockets.sort();
    sockets
}
