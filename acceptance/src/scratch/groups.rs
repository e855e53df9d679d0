//! Stopping what a scratch world started: its private tmux servers, then every
//! process group it spawned.
//!
//! tmux servers daemonise into their own session, so they are stopped through
//! their sockets (`tmux -S <socket> kill-server`), found under the scratch
//! socket dir: only real sockets, found and addressed through the directory's fd
//! (a symlinked `tmux-<uid>` or socket entry must never reach a server outside
//! the world), and only servers carrying this world's `TMUX_TMPDIR`. A missing tmux binary means no server could have been started:
//! that is not an error. Process groups get SIGTERM, a grace period, then
//! SIGKILL. Last come stragglers: any process still carrying this world's
//! `TMUX_TMPDIR` or HOME in its environment (a pane's harness that outlived its
//! tmux server, a daemonised grandchild in its own group), which would otherwise
//! keep writing into the tree while it is swept. Problems here are returned as
//! warnings, never panics: the sweep that follows must still run.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, fstat, openat, statat};
use rustix::io::Errno;
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

/// Stops every tmux server this world started: one listening on a socket inside
/// `<socket_dir>/tmux-<uid>/` (see [`tmux_sockets`]: real sockets only, found
/// through the directory's fd without following a link) whose server process
/// carries this world's `TMUX_TMPDIR`, using the tmux found on `env`'s PATH.
/// Returns warnings; never fails.
pub(crate) fn stop_tmux_servers(socket_dir: &Path, env: &Env) -> Vec<String> {
    let mut warnings = Vec::new();
    let sockets = match tmux_sockets(socket_dir) {
        Ok(Some(sockets)) => sockets,
        Ok(None) => return warnings,
        Err(refused) => return vec![refused],
    };
    if sockets.names.is_empty() {
        return warnings;
    }
    let Some(tmux) = env.find_binary("tmux") else {
        // No tmux binary: no server can have been started through it.
        return warnings;
    };
    for name in &sockets.names {
        // The path runs through our own fd of the checked directory, so a link
        // swapped in for the directory after the check is never followed.
        let socket = sockets.through_fd(name);
        let tmux_on = |args: &[&str]| {
            let mut cmd = Command::new(&tmux);
            env.apply(&mut cmd).arg("-S").arg(&socket).args(args);
            command::run_bounded(&mut cmd, TMUX_TIMEOUT)
        };
        // The server's pid first: kill-server returns before the server has
        // exited, and the sweep must not race a server still writing files.
        let Some(server) = tmux_on(&["display-message", "-p", "#{pid}"])
            .ok()
            .filter(|done| done.status.success())
            .and_then(|done| done.stdout_text().trim().parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            // No server answers: nothing to stop.
            continue;
        };
        // Only a server this world started: it carries the world's TMUX_TMPDIR.
        let ours = procfs::processes_with_env("TMUX_TMPDIR", socket_dir.as_os_str())
            .contains(&server.as_raw_nonzero().get());
        if !ours {
            warnings.push(format!(
                "left tmux server {} on socket {name:?} alone: it was not started by this world",
                server.as_raw_nonzero()
            ));
            continue;
        }
        match tmux_on(&["kill-server"]) {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => warnings.push(format!("stopping tmux on socket {name:?}: {e}")),
        }
        if !wait_pid_gone(server, TERM_GRACE) {
            let _ = kill_process(server, Signal::KILL);
            if !wait_pid_gone(server, KILL_WAIT) {
                warnings.push(format!(
                    "tmux server {} survived SIGKILL",
                    server.as_raw_nonzero()
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

/// The world's tmux socket directory, held open, and the socket entries in it.
struct Sockets {
    dir: OwnedFd,
    names: Vec<OsString>,
}

impl Sockets {
    /// `name` addressed through this process's fd of the directory
    /// (`/proc/<pid>/fd/<n>/<name>`), so the tmux client resolves the directory
    /// we checked, not whatever the path names by then.
    fn through_fd(&self, name: &OsStr) -> PathBuf {
        Path::new(&format!(
            "/proc/{}/fd/{}",
            std::process::id(),
            self.dir.as_raw_fd()
        ))
        .join(name)
    }
}

/// The real sockets of `<socket_dir>/tmux-<uid>/` (tmux's default and named
/// `-L` sockets all live there when `TMUX_TMPDIR` is the socket dir), opened
/// through the socket dir's fd without following a link: a `tmux-<uid>` that is
/// a symlink is refused (a warning), and an entry that is a link, not a socket,
/// hard-linked from elsewhere (more than one link) or someone else's is
/// skipped. No directory yet means no server: `None`.
fn tmux_sockets(socket_dir: &Path) -> Result<Option<Sockets>, String> {
    let uid = rustix::process::getuid();
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let refuse = |what: String| format!("left tmux sockets alone: {what}");
    let parent = match openat(CWD, socket_dir, dir_flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => {
            return Err(refuse(format!(
                "{} cannot be opened: {e}",
                socket_dir.display()
            )));
        }
    };
    let name = format!("tmux-{}", uid.as_raw());
    let dir = match openat(&parent, name.as_str(), dir_flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        // ELOOP / ENOTDIR: a symlink (or a file) where tmux's directory should be.
        Err(e) => {
            return Err(refuse(format!(
                "{}/{name} is not a directory of this world ({e})",
                socket_dir.display()
            )));
        }
    };
    let meta = fstat(&dir).map_err(|e| refuse(format!("{name}: {e}")))?;
    if meta.st_uid != uid.as_raw() {
        return Err(refuse(format!("{name} belongs to uid {}", meta.st_uid)));
    }
    let mut names = Vec::new();
    let entries = Dir::read_from(&dir).map_err(|e| refuse(format!("{name}: {e}")))?;
    for entry in entries.flatten() {
        let entry_name = OsStr::from_bytes(entry.file_name().to_bytes());
        if entry_name == "." || entry_name == ".." {
            continue;
        }
        let Ok(stat) = statat(&dir, entry_name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let is_socket = FileType::from_raw_mode(stat.st_mode) == FileType::Socket;
        if is_socket && stat.st_uid == uid.as_raw() && stat.st_nlink == 1 {
            names.push(entry_name.to_owned());
        }
    }
    names.sort();
    Ok(Some(Sockets { dir, names }))
}
