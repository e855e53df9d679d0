//! Ungated: scratch worlds whose owner was SIGKILLed are stopped and swept by
//! the reaper (what every runner runs before its trials and `just
//! clean-scratch` runs), and a live owner's world is never touched.
//!
//! The owner is this test binary re-executed (choosing its part by [`CHILD`]):
//! it makes a world, starts a real tmux server and a sleeping process in it,
//! says READY and waits to be killed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::procfs::{process_alive, processes_with_env};
use studyloop_acceptance::scratch::{Scratch, reap_orphans};

const CHILD: &str = "STUDYLOOP_REAPER_TEST_CHILD";
const TEST: &str = "a_sigkilled_owners_world_is_stopped_and_swept_and_a_live_one_is_not";

/// Kills and reaps the owner whatever happens.
struct Owner(Child);

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The owner's part: a world with a tmux server (a pane running `sleep`) and
/// a sleeping process of its own, then wait.
fn own_a_world() -> ! {
    let scratch = Scratch::create().unwrap();
    let mut tmux = scratch.command("tmux");
    tmux.args(["new-session", "-d", "-s", "w", "sleep 600"]);
    let done = scratch.run(&mut tmux, Duration::from_secs(20)).unwrap();
    assert!(done.status.success(), "{}", done.stderr_text());
    let mut sleep = scratch.command("sleep");
    sleep.arg("600");
    // Never waited for: this process is SIGKILLed with it still running.
    #[expect(
        clippy::zombie_processes,
        reason = "the owner is SIGKILLed, never exits"
    )]
    let _sleeper = scratch.spawn(&mut sleep).unwrap();
    println!("ROOT={}", scratch.root().display());
    println!("HOME={}", scratch.home().display());
    println!("READY");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

fn world_processes(home: &Path) -> Vec<i32> {
    processes_with_env("HOME", home.as_os_str())
}

#[test]
fn a_sigkilled_owners_world_is_stopped_and_swept_and_a_live_one_is_not() {
    if std::env::var_os(CHILD).is_some() {
        own_a_world();
    }
    let mut owner = Owner(
        Command::new(std::env::current_exe().unwrap())
            .arg(crate::reexec::libtest_name(module_path!(), TEST))
            .args(["--exact", "--nocapture", "--test-threads", "1"])
            .env(CHILD, "1")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (mut root, mut home) = (None, None);
    for line in BufReader::new(owner.0.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some((_, r)) = line.split_once("ROOT=") {
            root = Some(PathBuf::from(r.trim()));
        } else if let Some(h) = line.strip_prefix("HOME=") {
            home = Some(PathBuf::from(h));
        } else if line == "READY" {
            break;
        }
    }
    let (root, home) = (root.expect("the owner made no world"), home.unwrap());
    // tmux server, the pane's sleep, the owner's sleep (and the owner itself).
    let start = Instant::now();
    let mut before = world_processes(&home);
    while before.len() < 3 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        before = world_processes(&home);
    }
    assert!(before.len() >= 3, "world processes: {before:?}");

    // Alive: the reaper leaves the world and everything in it.
    let caller = CallerEnv::capture();
    let report = reap_orphans(&caller);
    assert!(!report.reaped.contains(&root), "{report:?}");
    let left = report.left.iter().find(|(r, _)| *r == root);
    assert!(
        left.is_some_and(|(_, why)| why.contains("is alive")),
        "{report:?}"
    );
    assert!(root.join("home").is_dir());
    assert!(before.iter().all(|&pid| process_alive(pid)));

    // SIGKILL: no Drop runs. Not waited for yet, so the owner is a zombie
    // while the reaper looks: a zombie owns nothing.
    let owner_pid = i32::try_from(owner.0.id()).unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(owner_pid).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    while process_alive(owner_pid) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        root.exists(),
        "nothing sweeps a SIGKILLed owner's world by itself"
    );
    let report = reap_orphans(&caller);
    assert!(report.reaped.contains(&root), "{report:?}");
    assert!(!root.exists(), "{} is still there", root.display());
    let after = world_processes(&home);
    assert!(after.is_empty(), "processes left: {after:?}");
    assert!(before.iter().all(|&pid| !process_alive(pid)), "{before:?}");
    drop(owner);
}

#[test]
fn a_world_without_an_owner_record_is_left_alone() {
    let scratch = Scratch::create().unwrap();
    std::fs::remove_file(scratch.root().join("owner")).unwrap();
    let report = reap_orphans(&CallerEnv::capture());
    let left = report.left.iter().find(|(r, _)| r == scratch.root());
    assert!(
        left.is_some_and(|(_, why)| why.contains("no owner record")),
        "{report:?}"
    );
    assert!(scratch.sentinel_path().is_file());
    scratch.close().unwrap();
}

#[test]
fn a_stub_provider_whose_owner_is_sigkilled_exits_by_itself() {
    // In its own process group a stub misses its owner's Ctrl-C; it must not
    // outlive an owner that dies without stopping it.
    let binary = studyloop_acceptance::bins::path("studyloop-stub-provider").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let script = r#""$0" --port 0 --port-file "$1" >/dev/null & echo "$!"; exec sleep 600"#;
    let mut owner = Owner(
        Command::new("sh")
            .args(["-c", script])
            .arg(&binary)
            .arg(dir.path().join("port"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(owner.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let stub: i32 = line.trim().parse().unwrap();
    let start = Instant::now();
    while !dir.path().join("port").exists() && start.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(process_alive(stub), "the stub did not start");
    owner.0.kill().unwrap();
    owner.0.wait().unwrap();
    let start = Instant::now();
    while process_alive(stub) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let alive = process_alive(stub);
    if alive {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(stub).unwrap(),
            rustix::process::Signal::KILL,
        );
    }
    assert!(
        !alive,
        "the orphaned stub {stub} still runs 5 s after its owner died"
    );
}
