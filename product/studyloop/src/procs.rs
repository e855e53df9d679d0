//! Process facts read from the kernel: is a pid alive, does it have children,
//! what is its command line. Linux `/proc` plus `kill(pid, 0)`; no `ps`/`pgrep`.

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

/// Parent pid from `/proc/<pid>/stat` (the field after the parenthesised comm).
fn parent_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The direct children of `pid`.
pub fn children(pid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|child| {
            fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|s| parent_of(&s))
                == Some(pid)
        })
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
