//! Bounds of a drill phase through the real CLI on a terminal:
//!
//! - a module whose check prints 1 GB: the phase ends (the runner drains
//!   what it does not keep), the CLI keeps the first 64 KiB and says so, and
//!   its memory stays bounded — it runs under `RLIMIT_DATA` 256 MiB, which a
//!   CLI storing the gigabyte would exceed;
//! - `studyloop drill` SIGKILLed mid-check: no process of the phase is left.

use crate::commands::drill_on_a_tty_as;
use crate::common::World;

#[test]
fn a_gigabyte_of_output_is_capped_reported_and_never_held() {
    let w = World::bare();
    assert_eq!(w.run(&["module", "new", "loud"]).code, 0);
    std::fs::write(
        w.home.path().join("loud/scripts/check.sh"),
        "#!/bin/sh\nhead -c 1073741824 /dev/zero | tr '\\0' x\necho\necho done-printing\nexit 1\n",
    )
    .unwrap();
    assert_eq!(w.run(&["module", "add", "loud"]).code, 0);
    let started = std::time::Instant::now();
    let out = drill_on_a_tty_as(&w, "prlimit --data=268435456 -- ", "loud", "check", "yes\n");
    let took = started.elapsed();
    assert_eq!(
        out.code,
        1,
        "{}\n{}",
        out.stderr,
        &out.stdout[..out.stdout.len().min(2000)]
    );
    assert!(
        out.stdout.contains("| … (output capped at 65536 bytes)")
            && out.stdout.contains("check: failed (exit 1)"),
        "{}",
        &out.stdout[out.stdout.len().saturating_sub(2000)..]
    );
    // Only the first 64 KiB are kept: the line after the gigabyte is not.
    assert!(!out.stdout.contains("done-printing"));
    assert!(
        out.stdout.len() < 200 * 1024,
        "{} bytes shown",
        out.stdout.len()
    );
    eprintln!("1 GB of check output: capped and reported in {took:.1?}");
}

/// Host pids whose command line holds `needle`.
fn with_cmdline(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd)
            .replace('\0', " ")
            .contains(needle)
        {
            found.push(pid);
        }
    }
    found
}

fn wait_until(what: impl Fn() -> bool, secs: u64) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < until {
        if what() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    what()
}

/// `studyloop drill` SIGKILLed mid-check (the learner closes the terminal
/// hard): every process of the phase — a `setsid` daemon, a double-forked
/// one, the script's own sleep — goes with it. As root the phase's init
/// changes its ids, which clears its parent-death signal: it is armed again.
#[test]
fn killing_the_cli_mid_check_leaves_no_process() {
    let w = World::bare();
    let t = format!("{}", 60_000 + std::process::id() % 5_000);
    let module = format!("hang-{t}");
    assert_eq!(w.run(&["module", "new", &module]).code, 0);
    std::fs::write(
        w.home.path().join(format!("{module}/scripts/check.sh")),
        format!(
            "#!/bin/sh\nsetsid sleep {t}1 </dev/null >/dev/null 2>&1 &\nsh -c '(setsid sleep {t}2 </dev/null >/dev/null 2>&1 &) &'\necho started\nexec sleep {t}3\n"
        ),
    )
    .unwrap();
    assert_eq!(w.run(&["module", "add", &module]).code, 0);
    let drill = format!("drill check {module}/getting-started/ready-01");
    let line = format!("{} {drill}", crate::common::exe());
    let mut term = w
        .program("script", &["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    let mut stdin = term.stdin.take().unwrap();
    stdin.write_all(b"yes\n").unwrap();
    let phase = || with_cmdline(&format!("sleep {t}"));
    // Whatever happens below, nothing of this test outlives it.
    struct Reap(String, String);
    impl Drop for Reap {
        fn drop(&mut self) {
            for p in with_cmdline(&self.0)
                .into_iter()
                .chain(with_cmdline(&self.1))
            {
                if let Some(p) = rustix::process::Pid::from_raw(p) {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
            }
        }
    }
    let _reap = Reap(format!("sleep {t}"), drill.clone());
    assert!(
        wait_until(|| phase().len() == 3, 20),
        "the phase did not start: {:?}",
        phase()
    );
    let cli = with_cmdline(&drill);
    let cli: Vec<i32> = cli
        .into_iter()
        .filter(|p| {
            std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| {
                e.ends_with(
                    std::path::Path::new(crate::common::exe())
                        .file_name()
                        .unwrap(),
                )
            })
        })
        .collect();
    // The CLI, and the two forks of it that contain the phase (never exec'd):
    // the CLI is the one whose parent is none of them.
    let parent = |p: i32| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit(')')
                    .next()?
                    .split_whitespace()
                    .nth(1)?
                    .parse::<i32>()
                    .ok()
            })
    };
    let top: Vec<i32> = cli
        .iter()
        .copied()
        .filter(|p| parent(*p).is_some_and(|pp| !cli.contains(&pp)))
        .collect();
    assert_eq!(top.len(), 1, "{cli:?}");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(top[0]).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let gone = wait_until(|| phase().is_empty(), 3);
    let left = phase();
    for p in &left {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(*p).unwrap(),
            rustix::process::Signal::KILL,
        );
    }
    drop(stdin);
    let _ = term.kill();
    let _ = term.wait();
    assert!(gone, "survived the CLI: {left:?}");
}
