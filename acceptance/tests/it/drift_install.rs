//! Issue 32 item 1 (bad input): a Ctrl-C during `just drift`'s candidate
//! install (`.ci/drift-install`) leaves no process and no half-installed
//! `.harnesses-drift/` directory. A fake `npm` on PATH stands in for the
//! registry: it starts a postinstall-like child in the background (which, as
//! any background child of a script, ignores SIGINT), writes half an install
//! into the prefix and waits. The SIGINT goes to the script's process group, as
//! a terminal's Ctrl-C does.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

const FAKE_NPM: &str = r#"#!/usr/bin/env bash
# install --prefix DIR ...: half an install, a child that outlives a SIGINT, then wait.
mkdir -p "$3/node_modules/.bin" && : >"$3/node_modules/half-written"
sleep 300 &
printf '%s\n%s\n' "$$" "$!" >>"$FAKE_NPM_PIDS"
wait
"#;

fn alive(pid: i32) -> bool {
    // A zombie has exited; only its parent's reaping is left.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

fn until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

#[test]
fn ctrl_c_during_the_candidate_install_leaves_no_process_and_no_partial_directory() {
    if !["/usr/bin/setsid", "/bin/setsid"]
        .iter()
        .any(|p| Path::new(p).is_file())
    {
        eprintln!(
            "SKIP ctrl_c_during_the_candidate_install_leaves_no_process_and_no_partial_directory: \
             setsid (util-linux) is not installed, and .ci/drift-install needs it; apt-get install util-linux"
        );
        return;
    };
    let script = super::markdown::workspace_root().join(".ci/drift-install");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("harnesses")).unwrap();
    std::fs::write(
        root.join("harnesses/package.json"),
        "{\n  \"dependencies\": {\n    \"@openai/codex\": \"0.171.0\"\n  }\n}\n",
    )
    .unwrap();
    let bin = root.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let npm = bin.join("npm");
    std::fs::write(&npm, FAKE_NPM).unwrap();
    std::fs::set_permissions(&npm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let pids = root.join("npm-pids");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new(&script)
        .args(["codex", "0.172.0"])
        .current_dir(root)
        .env("PATH", path)
        .env("FAKE_NPM_PIDS", &pids)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, as a shell job: the SIGINT below reaches it whole.
        .process_group(0)
        .spawn()
        .unwrap();
    let recorded = |p: &Path| -> Vec<i32> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    let drift = root.join(".harnesses-drift");
    assert!(
        until(Duration::from_secs(20), || recorded(&pids).len() == 2),
        "the fake npm never started"
    );
    let partial = || {
        std::fs::read_dir(&drift)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    // Mid-install: the partial directory holds half an install.
    assert!(
        partial()
            .iter()
            .any(|n| n.starts_with("codex@0.172.0.partial.")),
        "no partial install to interrupt: {:?}",
        partial()
    );
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    kill_process_group(group, Signal::INT).unwrap();
    let done = until(Duration::from_secs(20), || {
        child.try_wait().unwrap().is_some()
    });
    if !done {
        let _ = kill_process_group(group, Signal::KILL);
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // What the install started, checked (and then ended, so a failure leaves
    // nothing running either) before anything else is asserted.
    let npm_pids = recorded(&pids);
    let left = || {
        npm_pids
            .iter()
            .copied()
            .filter(|p| alive(*p))
            .collect::<Vec<_>>()
    };
    let gone = until(Duration::from_secs(5), || left().is_empty());
    let leftover = left();
    for p in &leftover {
        let pid = Pid::from_raw(*p).unwrap();
        let _ = kill_process_group(pid, Signal::KILL);
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
    assert!(
        gone,
        "processes of the install left after Ctrl-C: {leftover:?}; {stderr}"
    );
    assert!(
        done,
        "drift-install did not stop within 20 s of SIGINT: {stderr}"
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(partial(), Vec::<String>::new(), "left in .harnesses-drift/");
    assert!(!drift.join("codex@0.172.0").exists());
}
