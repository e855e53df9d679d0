//! `cli-tmux::<harness>::interrupt`: Ctrl-C to a runner at any point of a lane
//! leaves nothing behind. For each of three points it runs this same runner
//! binary as a child on one `cli-tmux::<harness>` lane, in its own process
//! group as a terminal's foreground job is, waits for the point, sends SIGINT
//! to the whole group (what Ctrl-C does: the runner, and any child left in its
//! group, get it), and proves: the child exits non-zero within
//! [`CANCEL_BOUND`], the lane recorded outcome `cancelled`, and afterwards
//! there is no scratch tree, no tmux server and no harness or stub process
//! that mentions it. The points: the stub provider just started (the first
//! second of the lane, provisioning), the authenticated probe running (the
//! harness's one-shot call against the stub), and mid-conversation (the stub
//! has answered turn 1).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use super::validate;
use crate::probe::install_hint;
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::{self, HarnessName};

/// How long each phase may take before the trial gives up (and kills the child).
const PHASE_TIMEOUT: Duration = Duration::from_secs(90);
/// How soon after SIGINT the runner must have exited: stopping tmux, the
/// harness and the stub, writing evidence and sweeping, on a loaded machine.
const CANCEL_BOUND: Duration = Duration::from_secs(20);
/// How long the probe's harness gets to start before the signal.
const PROBE_SETTLE: Duration = Duration::from_millis(300);
const STEP: Duration = Duration::from_millis(20);

/// Where in the lane the signal lands.
#[derive(Debug, Clone, Copy)]
enum Point {
    /// The stub provider has just been started.
    StubStarted,
    /// The authenticated probe's harness is running.
    Probe,
    /// The stub has answered turn 1.
    Conversation,
}

const POINTS: [Point; 3] = [Point::StubStarted, Point::Probe, Point::Conversation];

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
        if let Some(group) = i32::try_from(self.0.id()).ok().and_then(Pid::from_raw) {
            let _ = kill_process_group(group, Signal::KILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(ctx: &TrialContext, harness: HarnessName) -> TrialReport {
    let mut facts = Vec::new();
    let mut problems = Vec::new();
    for point in POINTS {
        match interrupt(ctx, harness, point) {
            Ok(fact) => facts.push(format!("{point:?}: {fact}")),
            Err(e) => problems.push(format!("SIGINT at {point:?}: {e}")),
        }
    }
    eprintln!("{}: {}", ctx.name, facts.join("; "));
    if problems.is_empty() {
        TrialReport::passed()
    } else {
        TrialReport::failed(problems.join("; "))
    }
}

fn interrupt(ctx: &TrialContext, harness: HarnessName, point: Point) -> Result<String, String> {
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
        // The probe point needs the probe, which the stub-provider mode runs.
        .env(selection::ACC_AUTH_MODE, "stub-provider")
        .args([lane.as_str(), "--exact", "--test-threads", "1"])
        // A terminal's foreground job: Ctrl-C signals the whole group.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = ChildGuard(
        cmd.spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?,
    );
    let pid = i32::try_from(child.0.id()).map_err(|e| e.to_string())?;

    let root = wait_for(|| stub_root(pid), "the child's stub provider to start")?;
    match point {
        Point::StubStarted => {}
        Point::Probe => {
            // The probe makes its directory right before it starts the harness.
            wait_for(
                || root.join("probe").is_dir().then_some(()),
                "the authenticated probe to start",
            )?;
            std::thread::sleep(PROBE_SETTLE);
        }
        Point::Conversation => {
            // Turn 1 of the product's session (it carries the persona; the
            // probe's one-shot request, also a reply 1, does not).
            let log = root.join("stub/requests.jsonl");
            let turn_one = |r: &studyloop_stubs::LogRecord| {
                r.persona.is_some()
                    && r.reply
                        .as_deref()
                        .is_some_and(|t| t.contains("MENTOR-REPLY 1 "))
            };
            wait_for(
                || {
                    studyloop_stubs::RequestLog::read_all(&log)
                        .ok()
                        .filter(|records| records.iter().any(turn_one))
                        .map(drop)
                },
                "the stub to answer turn 1 of the session",
            )?;
        }
    }
    let group = Pid::from_raw(pid).ok_or("bad child pid")?;
    kill_process_group(group, Signal::INT).map_err(|e| format!("cannot send SIGINT: {e}"))?;
    let sent = Instant::now();
    let status = wait_for(
        || child.0.try_wait().ok().flatten(),
        "the runner to exit after SIGINT",
    )?;
    let exit_after = sent.elapsed();

    let mut problems = Vec::new();
    if exit_after > CANCEL_BOUND {
        problems.push(format!(
            "the runner took {} ms to exit after SIGINT, over {CANCEL_BOUND:?}",
            exit_after.as_millis()
        ));
    }
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
            "runner exited {status} {} ms after SIGINT; bundle outcome cancelled; no scratch tree, tmux server, harness or stub process left",
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
