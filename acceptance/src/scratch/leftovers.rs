//! Processes a scratch world left behind: any process whose command line or
//! environment still mentions the world's root after its case released every
//! slot (a harness that forked out of its pane's process group, or one still
//! flushing its session files). The finish step proves there are none; the
//! release stops them first. Only processes that name this world's root are
//! ever signalled.

use std::path::Path;

/// Processes whose command line or environment mentions `root` (a scratch
/// tree): after the sweep there must be none. `pid: command` per process.
pub(crate) fn leftover_processes(root: &Path) -> Vec<String> {
    let needle = root.as_os_str().as_encoded_bytes();
    crate::procfs::processes_where(|cmdline, environ| {
        contains(cmdline, needle) || contains(environ, needle)
    })
    .into_iter()
    .map(|(pid, cmd)| format!("{pid}: {cmd}"))
    .collect()
}

/// Stops every process that still mentions `root` (a harness that forked out
/// of its pane's process group, or one still flushing its session files):
/// SIGTERM, then SIGKILL after `grace`, bounded by twice `grace`. Returns what
/// was signalled, for the evidence notes.
pub(crate) fn stop_leftovers(root: &Path, grace: std::time::Duration) -> Vec<String> {
    use rustix::process::{Pid, Signal, kill_process};
    let start = std::time::Instant::now();
    let mut signalled = Vec::new();
    loop {
        let left = leftover_processes(root);
        if left.is_empty() || start.elapsed() >= grace * 2 {
            return signalled;
        }
        let signal = if start.elapsed() < grace {
            Signal::TERM
        } else {
            Signal::KILL
        };
        for line in &left {
            let pid = line
                .split(':')
                .next()
                .and_then(|p| p.parse::<i32>().ok())
                .and_then(Pid::from_raw);
            if let Some(pid) = pid {
                let _ = kill_process(pid, signal);
            }
            if !signalled.contains(line) {
                signalled.push(line.clone());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_finds_a_process_mentioning_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("MARK", dir.path())
            .spawn()
            .unwrap();
        // Until the child has exec'd, its /proc entry still shows our env.
        let cmdline = format!("/proc/{}/cmdline", child.id());
        for _ in 0..200 {
            if std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sleep")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let found = leftover_processes(dir.path());
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.iter().any(|l| l.contains("sleep 30")), "{found:?}");
        assert!(leftover_processes(dir.path()).is_empty());
    }
}
