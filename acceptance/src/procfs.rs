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
        Ok(stat) => parse_stat(&stat).is_some_and(|s| !s.gone()),
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
        .any(|s| s.pgrp == pgid && !s.gone())
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
    processes_where(|_, environ| environ.split(|&b| b == 0).any(|kv| kv == wanted.as_slice()))
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// Every live (non-zombie) process other than this one for which
/// `matches(cmdline, environ)` holds, as `(pid, command line with spaces)`,
/// sorted by pid. The one `/proc` scanner: sweeps and leak validators share it
/// so both see a child caught inside `execve` (see [`EXEC_WINDOW`]).
pub(crate) fn processes_where(matches: impl Fn(&[u8], &[u8]) -> bool) -> Vec<(i32, String)> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut judge = |pid: i32, environ: &[u8]| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if matches(&cmdline, environ) && process_alive(pid) {
            let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((pid, cmd.trim().to_owned()));
        }
    };
    // Empty environments of live user processes are re-read together, so a
    // scan waits one window at most, however many there are.
    let mut pending = Vec::new();
    for pid in entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
    {
        match std::fs::read(format!("/proc/{pid}/environ")) {
            Ok(env) if env.is_empty() && may_be_mid_exec(pid) => pending.push(pid),
            Ok(env) => judge(pid, &env),
            // Another user's environment is unreadable: only its command line
            // can match then.
            Err(_) => judge(pid, &[]),
        }
    }
    let start = std::time::Instant::now();
    while !pending.is_empty() {
        let last_look = start.elapsed() >= EXEC_WINDOW;
        if !last_look {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        pending.retain(|&pid| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let settled = !env.is_empty() || last_look || !may_be_mid_exec(pid);
            if settled {
                judge(pid, &env);
            }
            !settled
        });
    }
    found.sort_unstable();
    found
}

/// Whether `pid` is the live process that started at `start` (see
/// [`start_time`]): a zombie, a reused pid or a gone one is not. A pid whose
/// `/proc` entry cannot be read but that `kill(pid, 0)` still finds (hidden by
/// `hidepid`, or no `/proc`) counts as alive: the caller must not destroy
/// what a live process may own.
pub(crate) fn is_same_live_process(pid: i32, start: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => parse_stat(&stat).is_some_and(|s| !s.gone() && s.start == Some(start)),
        Err(_) => {
            Pid::from_raw(pid).is_some_and(|p| !matches!(test_kill_process(p), Err(Errno::SRCH)))
        }
    }
}

/// When `pid` started: field 22 of `/proc/<pid>/stat`, in clock ticks after
/// boot. With the pid it names one process for good (a reused pid starts
/// later). `None` when it is gone or `/proc` is unreadable.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)?.start
}

/// The pid namespace `pid` lives in (the `/proc/<pid>/ns/pid` link, e.g.
/// `pid:[4026531836]`): pids recorded in one namespace mean nothing in another.
pub(crate) fn pid_namespace(pid: i32) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()?;
    link.to_str().map(str::to_owned)
}

/// The direct children of `pid` (every thread's list, as the kernel keeps
/// them), empty when it has none or is gone.
pub fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut kids: Vec<i32> = tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect();
    kids.sort_unstable();
    kids.dedup();
    kids
}

/// The arguments of `pid`'s command line, `None` when it is gone.
pub fn argv(pid: i32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        raw.split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// How long empty environments of live user processes are re-read before
/// they are believed. Inside `execve` the new address space is installed
/// before its environment block is laid out, and a read in that window returns
/// zero bytes: a sweep that believed it would miss a child caught mid-exec (the
/// harness wrapper exec'ing the harness, `sh -c '…; exec sleep'`) and leak it.
/// The window is microseconds on an idle machine and has outlasted a bare
/// re-read on a loaded 2-core runner. Kernel threads, zombies and processes
/// started with `env -i` are empty for good; the first two are told apart by
/// `/proc/<pid>/stat`, the last cost one window per scan.
const EXEC_WINDOW: std::time::Duration = std::time::Duration::from_millis(200);

/// Whether `pid` is a live user-space process (not a zombie, not a kernel
/// thread), so that an empty environment may be the `execve` window.
fn may_be_mid_exec(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| parse_stat(&stat))
        .is_some_and(|s| !s.gone() && s.flags & PF_KTHREAD == 0)
}

/// `PF_KTHREAD` from the kernel's `include/linux/sched.h`.
const PF_KTHREAD: u64 = 0x0020_0000;

fn proc_mounted() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
}

/// What this module reads from a `/proc/<pid>/stat` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    state: char,
    pgrp: i32,
    flags: u64,
    /// Field 22, `starttime`; absent from truncated lines.
    start: Option<u64>,
}

impl Stat {
    fn gone(self) -> bool {
        self.state == 'Z' || self.state == 'X'
    }
}

/// Parses a `/proc/<pid>/stat` line. The command name is in parentheses and
/// may itself contain spaces or `)`, so fields are counted from the last `)`:
/// state (field 3), ppid, pgrp, session, tty, tpgid, flags (9), …, starttime (22).
fn parse_stat(stat: &str) -> Option<Stat> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        pgrp: fields.get(2)?.parse().ok()?,
        flags: fields.get(6)?.parse().ok()?,
        start: fields.get(19).and_then(|f| f.parse().ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_with_spaces_and_parens() {
        let stat = |state, pgrp, flags| {
            Some(Stat {
                state,
                pgrp,
                flags,
                start: None,
            })
        };
        let line = "42 (tmux: server) S 1 42 42 0 -1 4194560 117 0 0";
        assert_eq!(parse_stat(line), stat('S', 42, 4_194_560));
        assert_eq!(
            parse_stat("7 (a) b) Z 1 9 9 0 -1 4227084 0"),
            stat('Z', 9, 4_227_084)
        );
        assert_eq!(parse_stat("7 (short) S 1 9"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn start_time_is_field_22_even_after_a_name_with_spaces() {
        let line = "42 (tmux: a) b) S 1 42 42 0 -1 4194560 117 0 0 0 5 3 0 0 20 0 1 0 987654 9 9";
        assert_eq!(parse_stat(line).unwrap().start, Some(987_654));
        let me = i32::try_from(std::process::id()).unwrap();
        let start = start_time(me).unwrap();
        assert!(is_same_live_process(me, start));
        assert!(!is_same_live_process(me, start + 1));
        assert!(!is_same_live_process(i32::MAX, start));
        assert_eq!(start_time(i32::MAX), None);
        assert!(pid_namespace(me).is_some_and(|ns| ns.starts_with("pid:[")));
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
    fn kernel_threads_and_zombies_are_not_waited_on_as_mid_exec() {
        // pid 2 is kthreadd on Linux; flags 0x208040 carry PF_KTHREAD.
        let kthread = parse_stat("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0").unwrap();
        assert_eq!(kthread.flags, 0x0020_8040);
        assert_ne!(kthread.flags & PF_KTHREAD, 0);
        let user = parse_stat("4242 (sh) R 1 4242 4242 0 -1 4194560 0 0").unwrap();
        assert_eq!(user.flags & PF_KTHREAD, 0);
        assert!(parse_stat("9 (x) Z 1 9 9 0 -1 4227084 0").unwrap().gone());
        assert!(may_be_mid_exec(i32::try_from(std::process::id()).unwrap()));
        assert!(!may_be_mid_exec(i32::MAX));
    }

    #[test]
    fn empty_environments_are_believed_after_one_shared_window() {
        // Processes started with no environment at all are empty for good: a
        // scan re-reads them together for one window, then judges them by
        // their command line.
        let marker = format!("{}.{}", 1000 + std::process::id() % 1000, 123);
        let mut kids: Vec<std::process::Child> = (0..3)
            .map(|_| {
                std::process::Command::new("/bin/sleep")
                    .arg(&marker)
                    .env_clear()
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut pids: Vec<i32> = kids
            .iter()
            .map(|k| i32::try_from(k.id()).unwrap())
            .collect();
        pids.sort_unstable();
        let wanted = |pid: &i32| argv(*pid).is_some_and(|a| a.last() == Some(&marker));
        let start = std::time::Instant::now();
        while !pids.iter().all(wanted) && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let start = std::time::Instant::now();
        let found = processes_where(|cmdline, environ| {
            environ.is_empty() && cmdline.ends_with(format!("{marker}\0").as_bytes())
        });
        let elapsed = start.elapsed();
        for kid in &mut kids {
            kid.kill().unwrap();
            kid.wait().unwrap();
        }
        let found: Vec<i32> = found.into_iter().map(|(pid, _)| pid).collect();
        assert_eq!(found, pids);
        assert!(elapsed >= EXEC_WINDOW, "believed after {elapsed:?}");
    }

    #[test]
    fn children_and_argv_of_a_spawned_sleep() {
        let mut child = std::process::Command::new("/bin/sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let me = i32::try_from(std::process::id()).unwrap();
        let kids = children(me);
        // Until its execve is done the child is the forked test binary, and
        // inside the execve its command line reads empty: poll for the final one.
        let want = Some(vec!["/bin/sleep".to_owned(), "30".to_owned()]);
        let start = std::time::Instant::now();
        let mut args = argv(pid);
        while args != want && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
            args = argv(pid);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(kids.contains(&pid), "{pid} not in {kids:?}");
        assert_eq!(args, want);
        assert_eq!(argv(i32::MAX), None);
        assert!(children(i32::MAX).is_empty());
    }

    #[test]
    fn this_process_is_alive_and_a_free_pid_is_not() {
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(process_alive(me));
        assert!(!process_alive(i32::MAX));
        assert!(!group_alive(i32::MAX));
    }
}
