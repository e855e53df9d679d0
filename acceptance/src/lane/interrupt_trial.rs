//! `cli-tmux::<harness>::interrupt`: SIGINT to a runner mid-conversation
//! leaves nothing behind. It runs this same runner binary as a child on one
//! `cli-tmux::<harness>` lane, waits until the stub has answered turn 1 (the
//! conversation is under way), sends SIGINT to the child, and proves: the child
//! exits non-zero, the lane recorded outcome `cancelled`, and afterwards there
//! is no scratch tree, no tmux server and no harness process that mentions it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::validate;
use crate::probe::install_hint;
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::{self, HarnessName};

/// How long each phase may take before the trial gives up (and kills the child).
const PHASE_TIMEOUT: Duration = Duration::from_secs(90);
const STEP: Duration = Duration::from_millis(20);

/// The trial for `harness`.
pub fn trial(harness: HarnessName) -> TrialSpec {
    TrialSpec::gated(format!("cli-tmux::{harness}::interrupt"), move |ctx| {
        run(ctx, harness)
    })
    .requires(Requirement::HarnessSelected(harness))
    .requires(Requirement::BinaryOnScratchPath {
        binary: harness.binary(),
        fix: install_hint(harness),
    })
}

/// Kills the child's process group on drop, whatever happened.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(ctx: &TrialContext, harness: HarnessName) -> TrialReport {
    match interrupt(ctx, harness) {
        Ok(facts) => {
            eprintln!("{}: {facts}", ctx.name);
            TrialReport::passed()
        }
        Err(e) => TrialReport::failed(e),
    }
}

fn interrupt(ctx: &TrialContext, harness: HarnessName) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the runner binary: {e}"))?;
    let results = tempfile::Builder::new()
        .prefix("sl-int-")
        .tempdir_in("/tmp")
        .map_err(|e| format!("cannot make a results dir: {e}"))?;
    let lane = super::cli_tmux::trial_name(harness);
    let mut cmd = Command::new(&exe);
    cmd.env_clear()
        .envs(ctx.caller.iter())
        .env(selection::ACC, "1")
        .env(selection::ACC_HARNESS, harness.as_str())
        .env(selection::ACC_RESULTS_DIR, results.path())
        .args([lane.as_str(), "--exact", "--test-threads", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = ChildGuard(
        cmd.spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?,
    );
    let pid = i32::try_from(child.0.id()).map_err(|e| e.to_string())?;

    let root = wait_for(|| stub_root(pid), "the child's stub provider to start")?;
    let log = root.join("stub/requests.jsonl");
    wait_for(
        || {
            std::fs::read_to_string(&log)
                .ok()
                .filter(|t| t.contains("MENTOR-REPLY 1 "))
                .map(drop)
        },
        "the stub to answer turn 1",
    )?;
    let rustix_pid = rustix::process::Pid::from_raw(pid).ok_or("bad child pid")?;
    rustix::process::kill_process(rustix_pid, rustix::process::Signal::INT)
        .map_err(|e| format!("cannot send SIGINT: {e}"))?;
    let sent = Instant::now();
    let status = wait_for(
        || child.0.try_wait().ok().flatten(),
        "the runner to exit after SIGINT",
    )?;
    let exit_after = sent.elapsed();

    let mut problems = Vec::new();
    if status.success() {
        problems.push(format!(
            "the interrupted runner exited {status}, expected a failure"
        ));
    }
    if root.exists() {
        problems.push(format!(
            "the scratch tree {} is still there",
            root.display()
        ));
    }
    let left = validate::leftover_processes(&root);
    if !left.is_empty() {
        problems.push(format!("processes left: {}", left.join("; ")));
    }
    let outcome = bundle_outcome(results.path());
    if outcome.as_deref() != Some("cancelled") {
        problems.push(format!(
            "the lane's bundle outcome is {outcome:?}, expected \"cancelled\""
        ));
    }
    if problems.is_empty() {
        Ok(format!(
            "SIGINT mid-conversation: runner exited {status} {} ms later; bundle outcome cancelled; no scratch tree, tmux server or harness process left",
            exit_after.as_millis()
        ))
    } else {
        Err(problems.join("; "))
    }
}

/// The scratch root of the child's lane: its stub provider is the child's own
/// direct child, started with `--log <root>/stub/requests.jsonl`.
fn stub_root(parent: i32) -> Option<PathBuf> {
    crate::procfs::children(parent)
        .into_iter()
        .find_map(|child| {
            let args = crate::procfs::argv(child)?;
            if !args
                .first()
                .is_some_and(|a| a.ends_with("studyloop-stub-provider"))
            {
                return None;
            }
            let log = args.iter().skip_while(|a| *a != "--log").nth(1)?;
            Path::new(log).parent()?.parent().map(Path::to_owned)
        })
}

fn bundle_outcome(results: &Path) -> Option<String> {
    let evidence = std::fs::read_dir(results.join("evidence")).ok()?;
    evidence.flatten().find_map(|b| {
        let text = std::fs::read_to_string(b.path().join("manifest.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v["outcome"].as_str().map(str::to_owned)
    })
}

/// Bounded wait (20 ms steps) for `f` to return something.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>, what: &str) -> Result<T, String> {
    let deadline = Instant::now() + PHASE_TIMEOUT;
    loop {
        if let Some(v) = f() {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "timed out after {PHASE_TIMEOUT:?} waiting for {what}"
            ));
        }
        std::thread::sleep(STEP);
    }
}
