//! Ungated tests of the scratch world and the guarded sweeper: layout, the
//! allow-list env, every sweep guard (each leaves the tree until repaired), the
//! escape canary, symlinks inside scratch, a tmux-less machine, a real tmux
//! server and real process groups stopped on close. No test touches the real
//! HOME: guards that need a "real home" get a fake one explicitly.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::procfs::{group_alive, process_alive};
use studyloop_acceptance::scratch::{CONFIG_SEED, SENTINEL_NAME, Scratch};
use studyloop_acceptance::selection::AuthMode;
use studyloop_acceptance::sweep::{SweepError, SweepTarget, check_path_guards};

/// A directory outside every scratch tree, standing in for the real home.
fn fake_real_home() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fake-real-home-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn create_builds_the_layout_and_close_removes_it() {
    let scratch = Scratch::create().unwrap();
    let root = scratch.root().to_path_buf();
    assert!(
        root.starts_with("/tmp")
            && root
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("sl-acc-")
    );
    assert_eq!(mode(&root), 0o700);
    for dir in [
        scratch.home().join(".config"),
        scratch.home().join(".local/share"),
        scratch.home().join(".local/state"),
        scratch.home().join(".cache"),
        scratch.state_dir().to_path_buf(),
        scratch.socket_dir().to_path_buf(),
        scratch.tmp_dir().to_path_buf(),
    ] {
        assert!(dir.is_dir(), "{}", dir.display());
        assert!(dir.starts_with(&root));
    }
    assert_eq!(
        std::fs::read_to_string(scratch.config_dir().join("config.yaml")).unwrap(),
        CONFIG_SEED
    );
    let token = std::fs::read_to_string(scratch.sentinel_path()).unwrap();
    assert_eq!(token.len(), 32);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let socket = scratch.socket_dir().join(format!("tmux-{}/default", uid()));
    assert!(socket.as_os_str().len() < 104);
    let env = scratch.env();
    assert_eq!(env.get("HOME"), Some(scratch.home().as_os_str()));
    assert_eq!(
        env.get("TMUX_TMPDIR"),
        Some(scratch.socket_dir().as_os_str())
    );
    scratch.close().unwrap();
    assert!(!root.exists());
}

#[test]
fn dropping_a_scratch_sweeps_it() {
    let root = {
        let scratch = Scratch::create().unwrap();
        scratch.root().to_path_buf()
    };
    assert!(!root.exists());
}

/// The escape canary: files planted outside survive a full create → sweep,
/// even with symlinks inside scratch pointing at them.
#[test]
fn escape_canary_and_symlinks_pointing_outside_survive() {
    let outside = fake_real_home();
    let canary = outside.path().join("canary.txt");
    std::fs::write(&canary, "do not delete").unwrap();
    let canary_dir = outside.path().join("canary-dir");
    std::fs::create_dir(&canary_dir).unwrap();
    std::fs::write(canary_dir.join("inner.txt"), "keep").unwrap();
    let scratch = Scratch::create().unwrap();
    let root = scratch.root().to_path_buf();
    symlink(&canary, scratch.home().join("link-to-file")).unwrap();
    symlink(&canary_dir, scratch.home().join("link-to-dir")).unwrap();
    symlink(&canary_dir, scratch.state_dir().join("nested-link")).unwrap();
    // A deep, read-only subtree as harnesses sometimes leave behind.
    let deep = scratch.home().join(".cache/a/b/c");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("f"), "x").unwrap();
    std::fs::set_permissions(
        deep.parent().unwrap(),
        std::fs::Permissions::from_mode(0o500),
    )
    .unwrap();
    scratch.close().unwrap();
    assert!(!root.exists());
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "do not delete");
    assert_eq!(
        std::fs::read_to_string(canary_dir.join("inner.txt")).unwrap(),
        "keep"
    );
}

#[test]
fn scratch_home_symlinked_to_the_real_home_is_refused_and_left() {
    let real = fake_real_home();
    std::fs::write(real.path().join("precious"), "mine").unwrap();
    let mut scratch = Scratch::create().unwrap();
    let home = scratch.home().to_path_buf();
    let moved = scratch.root().join("home.orig");
    std::fs::rename(&home, &moved).unwrap();
    symlink(real.path(), &home).unwrap();
    let err = scratch.stop_and_sweep(real.path()).unwrap_err();
    assert!(
        matches!(err, SweepError::HomeInsideRealHome { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("left for inspection"), "{err}");
    assert!(scratch.root().exists() && moved.exists());
    assert_eq!(
        std::fs::read_to_string(real.path().join("precious")).unwrap(),
        "mine"
    );
    // Repair, then the sweep goes through.
    std::fs::remove_file(&home).unwrap();
    std::fs::rename(&moved, &home).unwrap();
    scratch.stop_and_sweep(real.path()).unwrap();
    assert!(real.path().join("precious").exists());
}

#[test]
fn real_home_inside_scratch_is_refused() {
    let mut scratch = Scratch::create().unwrap();
    let inner = scratch.home().join("nested-real-home");
    std::fs::create_dir(&inner).unwrap();
    let err = scratch.stop_and_sweep(&inner).unwrap_err();
    assert!(
        matches!(err, SweepError::RealHomeInsideScratch { .. }),
        "{err}"
    );
    assert!(inner.exists());
    // The root itself as the real home trips both directions; either refusal
    // leaves the tree.
    let root = scratch.root().to_path_buf();
    let err = scratch.stop_and_sweep(&root).unwrap_err();
    assert!(
        matches!(
            err,
            SweepError::RealHomeInsideScratch { .. } | SweepError::HomeInsideRealHome { .. }
        ),
        "{err}"
    );
    assert!(inner.exists());
    let real = fake_real_home();
    scratch.stop_and_sweep(real.path()).unwrap();
}

#[test]
fn scratch_config_under_the_real_studyloop_config_is_refused() {
    let real = fake_real_home();
    let mut scratch = Scratch::create().unwrap();
    std::fs::create_dir_all(real.path().join(".config")).unwrap();
    let real_config = real.path().join(".config/studyloop");
    symlink(scratch.config_dir(), &real_config).unwrap();
    let err = scratch.stop_and_sweep(real.path()).unwrap_err();
    assert!(
        matches!(err, SweepError::ConfigInsideRealConfig { .. }),
        "{err}"
    );
    assert!(scratch.config_dir().join("config.yaml").exists());
    std::fs::remove_file(&real_config).unwrap();
    scratch.stop_and_sweep(real.path()).unwrap();
}

#[test]
fn wrong_missing_or_symlinked_sentinel_is_refused_and_left() {
    let real = fake_real_home();
    let mut scratch = Scratch::create().unwrap();
    let sentinel = scratch.sentinel_path();
    let token = std::fs::read_to_string(&sentinel).unwrap();

    std::fs::write(&sentinel, "0".repeat(32)).unwrap();
    let err = scratch.stop_and_sweep(real.path()).unwrap_err();
    assert!(matches!(err, SweepError::SentinelMismatch { .. }), "{err}");
    assert!(scratch.root().exists());

    std::fs::remove_file(&sentinel).unwrap();
    let err = scratch.stop_and_sweep(real.path()).unwrap_err();
    assert!(matches!(err, SweepError::SentinelMissing { .. }), "{err}");
    assert!(scratch.home().exists());

    // A symlink to a file holding the right token is not the sentinel.
    let decoy = real.path().join("decoy");
    std::fs::write(&decoy, &token).unwrap();
    symlink(&decoy, &sentinel).unwrap();
    let err = scratch.stop_and_sweep(real.path()).unwrap_err();
    assert!(matches!(err, SweepError::SentinelMissing { .. }), "{err}");

    std::fs::remove_file(&sentinel).unwrap();
    std::fs::write(&sentinel, &token).unwrap();
    scratch.stop_and_sweep(real.path()).unwrap();
    assert!(decoy.exists());
}

#[test]
fn only_sl_acc_roots_directly_under_tmp_pass_the_shape_guard() {
    let real = fake_real_home();
    let elsewhere = fake_real_home();
    let home = elsewhere.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let target = SweepTarget {
        root: elsewhere.path(),
        home: &home,
        config_dir: &home.join(".config/studyloop"),
        sentinel_name: SENTINEL_NAME,
        sentinel_token: "x",
    };
    let err = check_path_guards(&target, real.path()).unwrap_err();
    assert!(matches!(err, SweepError::NotAScratchRoot { .. }), "{err}");
    assert!(home.exists());
}

#[test]
fn a_tmux_less_machine_sweeps_fine() {
    let empty_path = fake_real_home();
    let caller = CallerEnv::from_pairs([
        ("PATH", empty_path.path().as_os_str()),
        ("HOME", std::ffi::OsStr::new("/nonexistent-home")),
    ]);
    let scratch = Scratch::create_with(caller, AuthMode::Scrubbed).unwrap();
    assert_eq!(scratch.env().find_binary("tmux"), None);
    // Something that looks like a tmux socket, so the stop step is exercised.
    let sockets = scratch.socket_dir().join(format!("tmux-{}", uid()));
    std::fs::create_dir(&sockets).unwrap();
    std::fs::write(sockets.join("default"), "").unwrap();
    let root = scratch.root().to_path_buf();
    scratch.close().unwrap();
    assert!(!root.exists());
}

#[test]
fn close_stops_the_scratch_tmux_server() {
    let scratch = Scratch::create().unwrap();
    let Some(tmux) = scratch.env().find_binary("tmux") else {
        panic!("tmux not found on PATH: this test needs a real tmux (install it with `just deps`)");
    };
    let mut start = scratch.command(&tmux);
    start.args(["new-session", "-d", "-s", "probe", "sleep", "600"]);
    let started = scratch.run(&mut start, Duration::from_secs(10)).unwrap();
    assert!(started.status.success(), "{}", started.stderr_text());
    let mut pid = scratch.command(&tmux);
    pid.args(["display-message", "-p", "#{pid}"]);
    let pid: i32 = scratch
        .run(&mut pid, Duration::from_secs(10))
        .unwrap()
        .stdout_text()
        .trim()
        .parse()
        .unwrap();
    // The server lives under the scratch socket dir, not the caller's.
    assert!(
        scratch
            .socket_dir()
            .join(format!("tmux-{}/default", uid()))
            .exists()
    );
    assert!(
        process_alive(pid),
        "the tmux server should be running before close"
    );
    scratch.close().unwrap();
    assert!(!process_alive(pid), "tmux server {pid} survived close");
}

#[test]
fn close_stops_every_recorded_process_group() {
    let scratch = Scratch::create().unwrap();
    let mut cmd = scratch.command("/bin/sh");
    cmd.args(["-c", "trap '' TERM; sleep 300 & : > ready; sleep 300"]);
    let mut child = scratch.spawn(&mut cmd).unwrap();
    let ready = scratch.home().join("ready");
    while !ready.exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let pgid = i32::try_from(child.id()).unwrap();
    assert_eq!(scratch.process_groups(), [pgid]);
    assert!(
        group_alive(pgid),
        "the probe group should be running before close"
    );
    let started = std::time::Instant::now();
    scratch.close().unwrap();
    // It ignores SIGTERM, so only the SIGKILL after the grace period ends it.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let _ = child.wait();
    assert!(!group_alive(pgid), "process group {pgid} survived close");
}

/// A daemon that left the recorded process group (`setsid`) still carries the
/// scratch env; close finds it by that env and stops it before sweeping, so it
/// cannot keep writing into the tree.
#[test]
fn close_stops_a_daemon_that_escaped_its_process_group() {
    let scratch = Scratch::create().unwrap();
    let mut cmd = scratch.command("/bin/sh");
    cmd.args([
        "-c",
        "setsid /bin/sh -c 'echo $$ > daemon.pid; exec sleep 300' &",
    ]);
    let mut child = scratch.spawn(&mut cmd).unwrap();
    let _ = child.wait();
    let pid_file = scratch.home().join("daemon.pid");
    let mut waited = 0;
    while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
        assert!(waited < 2000, "the daemon never wrote its pid");
        std::thread::sleep(Duration::from_millis(5));
        waited += 5;
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        process_alive(pid),
        "the daemon should be running before close"
    );
    let root = scratch.root().to_path_buf();
    scratch.close().unwrap();
    assert!(!process_alive(pid), "daemon {pid} survived close");
    assert!(!root.exists());
}

#[test]
fn real_auth_scratch_keeps_home_but_sweeps_only_scratch() {
    let real = fake_real_home();
    let caller = CallerEnv::from_pairs([
        ("PATH", std::ffi::OsString::from("/usr/bin:/bin")),
        ("HOME", real.path().as_os_str().to_owned()),
        ("OPENAI_API_KEY", "sk-canary".into()),
    ]);
    let scratch = Scratch::create_with(caller, AuthMode::RealAuth).unwrap();
    let env = scratch.env();
    assert_eq!(env.get("HOME"), Some(real.path().as_os_str()));
    assert_eq!(
        env.get("OPENAI_API_KEY"),
        Some(std::ffi::OsStr::new("sk-canary"))
    );
    assert!(PathBuf::from(env.get("STUDYLOOP_CONFIG").unwrap()).starts_with(scratch.root()));
    let root = scratch.root().to_path_buf();
    scratch.close().unwrap();
    assert!(!root.exists() && real.path().exists());
}

/// This process's uid, which tmux puts in its socket dir name.
fn uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap()
}

/// Seed 003 (issue 30 item 9): a real-auth grok world's close removes exactly the
/// trust entries the product pre-wrote for its session dirs from the operator's real
/// `~/.grok/trusted_folders.toml`, and keeps the operator's own, byte for byte.
#[test]
fn issue30_a_real_auth_grok_world_removes_its_trust_entries_from_the_real_home() {
    use studyloop_acceptance::scratch::grok_trust::{self, GrokTrust};
    use studyloop_acceptance::selection::HarnessName;
    let real = fake_real_home();
    let grok = real.path().join(".grok");
    std::fs::create_dir(&grok).unwrap();
    let file = grok.join("trusted_folders.toml");
    let operator = "[folders.\"/home/me/src\"]\ntrusted = true\ndecided_at = 1700000000\n";
    std::fs::write(&file, operator).unwrap();
    let caller = CallerEnv::from_pairs([
        ("PATH", std::ffi::OsString::from("/usr/bin:/bin")),
        ("HOME", real.path().as_os_str().to_owned()),
    ]);
    let mut scratch = Scratch::create_with(caller, AuthMode::RealAuth).unwrap();
    let (env, trust) =
        grok_trust::real_auth_opt_in(AuthMode::RealAuth, HarnessName::Grok, scratch.env().clone())
            .unwrap();
    assert_eq!(
        env.get(grok_trust::TRUST_VAR),
        Some(std::ffi::OsStr::new("1"))
    );
    let trust: GrokTrust = trust.unwrap();
    assert_eq!(trust.file(), file);
    scratch.restore_grok_trust_on_close(trust.clone());
    // What the product's pre-write appends for the session dir and its parent.
    let sessions = scratch.root().join("home/.local/share/studyloop/sessions");
    let mut text = std::fs::read_to_string(&file).unwrap();
    for d in [sessions.clone(), sessions.join("study-1")] {
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!(
                "\n[folders.\"{}\"]\ntrusted = true\ndecided_at = 1764633600\n",
                d.display()
            ),
        );
    }
    std::fs::write(&file, text).unwrap();
    let root = scratch.root().to_path_buf();
    assert_eq!(trust.entries_inside(&root).unwrap().len(), 2);
    scratch.close().unwrap();
    assert!(!root.exists());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), operator);
    assert!(trust.entries_inside(&root).unwrap().is_empty());
}
