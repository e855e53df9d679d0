//! Liveness of processes and process groups, zombies counted as gone.
//!
//! `kill(pid, 0)` succeeds for a zombie, and on machines whose pid 1 never
//! reaps (some container and micro-VM inits), a killed daemon or orphan stays a
//! zombie indefinitely. Stopping logic must therefore read process states from
//! `/proc`; where `/proc` is unavailable it falls back to `kill(…, 0)`.

use rustix::io::Errno;
use rustix::process::{Pid, test_kill_process, test_kill_process_group};

/// Whether `pid` exists and is not a zombie.
pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => parse_stat(&stat).is_some_and(|(state, _)| state != 'Z' && state != 'X'),
        Err(_) if proc_mounted() => false,
        Err(_) => {
            Pid::from_raw(pid).is_some_and(|p| !matches!(test_kill_process(p), Err(Errno::SRCH)))
        }
    }
}

/// Whether any non-zombie process is in process group `pgid`.
pub fn group_alive(pgid: i32) -> bool {
    if !proc_mounted() {
        return Pid::from_raw(pgid)
            .is_some_and(|p| !matches!(test_kill_process_group(p), Err(Errno::SRCH)));
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| parse_stat(&stat))
        .any(|(state, group)| group == pgid && state != 'Z' && state != 'X')
}

/// Every live (non-zombie) process other than this one whose environment holds
/// `name=value` exactly. Processes whose environment cannot be read (another
/// user's) are skipped; without `/proc` the answer is empty.
pub fn processes_with_env(name: &str, value: &std::ffi::OsStr) -> Vec<i32> {
    use std::os::unix::ffi::OsStrExt;
    let mut wanted = Vec::with_capacity(name.len() + 1 + value.len());
    wanted.extend_from_slice(name.as_bytes());
    wanted.push(b'=');
    wanted.extend_from_slice(value.as_bytes());
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<i32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|kv| kv == wanted.as_slice()))
        })
        .filter(|&pid| process_alive(pid))
        .collect();
    pids.sort_unstable();
    pids
}

fn proc_mounted() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
}

/// `(state, pgrp)` from a `/proc/<pid>/stat` line. The command name is in
/// parentheses and may itself contain spaces or `)`, so fields are counted
/// from the last `)`.
fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_with_spaces_and_parens() {
        assert_eq!(parse_stat("42 (tmux: server) S 1 42 42 0"), Some(('S', 42)));
        assert_eq!(parse_stat("7 (a) b) Z 1 9 9"), Some(('Z', 9)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn finds_a_child_by_an_environment_marker() {
        use std::io::BufRead;
        let marker = format!("studyloop-procfs-test-{}", std::process::id());
        // The child announces itself once it runs: until its execve, its
        // /proc/<pid>/environ is still the parent's, without the marker.
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "echo up; exec sleep 30"])
            .env("STUDYLOOP_PROCFS_MARKER", &marker)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "up\n");
        let pid = i32::try_from(child.id()).unwrap();
        let found = processes_with_env("STUDYLOOP_PROCFS_MARKER", marker.as_ref());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(found, [pid]);
        assert!(processes_with_env("STUDYLOOP_PROCFS_MARKER", marker.as_ref()).is_empty());
    }

    #[test]
    fn this_process_is_alive_and_a_free_pid_is_not() {
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(process_alive(me));
        assert!(!process_alive(i32::MAX));
        assert!(!group_alive(i32::MAX));
    }
}
