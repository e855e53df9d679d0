//! Process facts read from the kernel: is a pid alive, does it have children,
//! what is its command line, when did it start, which processes carry an
//! environment marker; and stopping a process only when its recorded identity
//! (pid + start time) still matches. Linux `/proc` plus `kill(pid, 0)`; no
//! `ps`/`pgrep`.
//!
//! A pid alone names "whoever has that number now"; after a reboot or a wrap
//! it is someone else. Anything StudyLoop signals later is recorded as an
//! [`Identity`] at launch and re-checked before the signal.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::process::{Pid, Signal};

use crate::env::{self, Env};

/// Resolve `name` to an absolute executable path through the `PATH` of `env`
/// (tmux panes run a non-login shell, so launches use absolute paths). A name
/// containing `/` is checked as is.
pub fn which(env: &Env, name: &str) -> Option<PathBuf> {
    let is_exec = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_exec(&p).then_some(p);
    }
    let path = env.get_os(env::PATH)?;
    std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| is_exec(p))
}

/// Whether `pid` names a live process (EPERM still means "exists").
pub fn alive(pid: i32) -> bool {
    let Some(pid) = Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// This process's id.
pub fn self_pid() -> i32 {
    rustix::process::getpid().as_raw_nonzero().get()
}

/// The fields after the parenthesised comm of a `/proc/<pid>/stat` line (the
/// comm may itself hold spaces or `)`): state, ppid, pgrp, ….
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace().collect())
}

/// Parent pid from `/proc/<pid>/stat` (the field after the state).
fn parent_of(stat: &str) -> Option<i32> {
    stat_fields(stat)?.get(1)?.parse().ok()
}

fn read_stat(pid: i32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/stat")).ok()
}

/// Whether `pid` is a zombie or dead (`kill(pid, 0)` still succeeds for one).
fn gone(stat: &str) -> bool {
    stat_fields(stat)
        .and_then(|f| f.first().copied())
        .is_none_or(|st| st == "Z" || st == "X")
}

/// The start time of `pid` in clock ticks since boot (`/proc/<pid>/stat`
/// field 22); `None` when the process is gone or a zombie.
pub fn start_time(pid: i32) -> Option<u64> {
    let stat = read_stat(pid)?;
    if gone(&stat) {
        return None;
    }
    // Field 22 overall = index 19 after the comm (fields 3.. start at 0).
    stat_fields(&stat)?.get(19)?.parse().ok()
}

/// A process as recorded at launch: its pid and its kernel start time. Two
/// processes never share both while the machine is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    /// The pid.
    pub pid: i32,
    /// Clock ticks since boot at which it started.
    pub start_time: u64,
}

impl Identity {
    /// The identity of the live process `pid`, if it is alive.
    pub fn of(pid: i32) -> Option<Self> {
        Some(Self {
            pid,
            start_time: start_time(pid)?,
        })
    }

    /// Whether the process with this identity is still the one running.
    pub fn is_running(self) -> bool {
        start_time(self.pid) == Some(self.start_time)
    }

    /// SIGTERM it, only if its identity still matches; returns whether sent.
    pub fn terminate(self) -> bool {
        self.is_running() && {
            terminate(self.pid);
            true
        }
    }
}

/// This process and every ancestor up to pid 1 (a stop must never reach the
/// process doing the stopping, nor the shell waiting for it).
pub fn self_and_ancestors() -> Vec<i32> {
    let mut out = vec![self_pid()];
    while let Some(parent) = out
        .last()
        .and_then(|p| read_stat(*p))
        .and_then(|s| parent_of(&s))
        .filter(|p| *p > 1 && !out.contains(p))
    {
        out.push(parent);
    }
    out
}

/// How long an empty environment of a live process is re-read before it is
/// believed: inside `execve` the new environment block is not laid out yet,
/// and a scan that believed the empty read would miss a child caught there
/// (the acceptance tier's scanner learned this on loaded runners).
const EXEC_WINDOW: std::time::Duration = std::time::Duration::from_millis(200);

/// `PF_KTHREAD` from the kernel's `include/linux/sched.h`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// A live user-space process (not a zombie, not a kernel thread): only such a
/// process's empty environment may be the `execve` window.
fn user_process(pid: i32) -> bool {
    read_stat(pid).is_some_and(|stat| {
        !gone(&stat)
            && stat_fields(&stat)
                .and_then(|f| f.get(6)?.parse::<u64>().ok())
                .is_some_and(|flags| flags & PF_KTHREAD == 0)
    })
}

/// Every live process other than this one whose environment holds exactly
/// `name=value` (the session marker). Unreadable environments (another
/// user's) are skipped.
pub fn with_env(name: &str, value: &str) -> Vec<i32> {
    let wanted = format!("{name}={value}");
    let has = |env: &[u8]| env.split(|b| *b == 0).any(|kv| kv == wanted.as_bytes());
    let me = self_pid();
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut pending = Vec::new();
    for pid in dir
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| *p != me)
    {
        match fs::read(format!("/proc/{pid}/environ")) {
            Ok(env) if env.is_empty() && user_process(pid) => pending.push(pid),
            Ok(env) if has(&env) && start_time(pid).is_some() => found.push(pid),
            _ => {}
        }
    }
    let began = std::time::Instant::now();
    while !pending.is_empty() && began.elapsed() < EXEC_WINDOW {
        std::thread::sleep(std::time::Duration::from_millis(2));
        pending.retain(|pid| {
            let env = fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if has(&env) {
                found.push(*pid);
            }
            env.is_empty() && user_process(*pid)
        });
    }
    found.sort_unstable();
    found
}

/// Stop every process carrying `name=value` in its environment except `keep`:
/// SIGTERM, up to `grace` for them to go, then SIGKILL, re-scanning so a child
/// forked meanwhile is caught too. Returns the pids that were signalled.
pub fn stop_marked(name: &str, value: &str, keep: &[i32], grace: std::time::Duration) -> Vec<i32> {
    let scan = || -> Vec<Identity> {
        with_env(name, value)
            .into_iter()
            .filter(|p| !keep.contains(p))
            .filter_map(Identity::of)
            .collect()
    };
    let mut signalled: Vec<i32> = Vec::new();
    let first = scan();
    for id in &first {
        if id.terminate() {
            signalled.push(id.pid);
        }
    }
    let deadline = std::time::Instant::now() + grace;
    let mut left = first;
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        left.retain(|id| id.is_running());
    }
    // Whoever ignored SIGTERM, and anything forked since the first scan.
    for _ in 0..3 {
        let rest = scan();
        if rest.is_empty() {
            break;
        }
        for id in rest {
            if id.is_running()
                && let Some(p) = Pid::from_raw(id.pid)
            {
                let _ = rustix::process::kill_process(p, Signal::KILL);
                signalled.push(id.pid);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    signalled.sort_unstable();
    signalled.dedup();
    signalled
}

/// The direct children of `pid`.
pub fn children(pid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|child| read_stat(*child).and_then(|s| parent_of(&s)) == Some(pid))
        .collect()
}

/// The command line of `pid`, arguments joined by spaces; `None` if gone.
pub fn cmdline(pid: i32) -> Option<String> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        raw.split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(String::from_utf8_lossy)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Send SIGTERM to `pid`; a vanished process is not an error.
pub fn terminate(pid: i32) {
    if let Some(p) = Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(p, Signal::TERM);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_uses_the_given_path_only() {
        let env = Env::from_pairs([("PATH", "/usr/bin:/bin")]);
        assert!(which(&env, "sh").is_some());
        assert!(which(&Env::default(), "sh").is_none());
        assert!(which(&env, "definitely-not-a-binary-x").is_none());
    }

    #[test]
    fn parses_parent_even_with_spaces_in_comm() {
        assert_eq!(parent_of("123 (a b) c) S 77 123 123 0"), Some(77));
    }

    #[test]
    fn identity_matches_only_the_same_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let id = Identity::of(pid).unwrap();
        assert!(id.is_running());
        let other = Identity {
            pid,
            start_time: id.start_time + 1,
        };
        assert!(!other.terminate(), "a reused pid must not be signalled");
        assert!(child.try_wait().unwrap().is_none());
        assert!(id.terminate());
        child.wait().unwrap();
        assert!(!id.is_running() && Identity::of(pid).is_none());
        assert_eq!(self_and_ancestors()[0], self_pid());
    }

    #[test]
    fn sees_own_child() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        assert!(alive(pid));
        assert!(children(self_pid()).contains(&pid));
        // Until the child's execve its cmdline is still ours; wait for the exec.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !cmdline(pid).is_some_and(|c| c.contains("sleep 5")) {
            assert!(std::time::Instant::now() < deadline, "{:?}", cmdline(pid));
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        terminate(pid);
        child.wait().unwrap();
        assert!(!alive(pid));
    }
}
