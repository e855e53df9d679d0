//! `cli-tmux::<harness>::interrupt` and `web-acp::<harness>::interrupt`: Ctrl-C
//! to a runner at any point of a live case leaves nothing behind. For each
//! point it runs this same runner binary as a child on one lane
//! (`cli-tmux::<harness>` or `web-acp::<harness>`), as a terminal's foreground
//! job ([`sigint`](super::sigint)), waits for the point, sends SIGINT to the
//! whole group, and proves: the child exits non-zero within [`CANCEL_BOUND`],
//! the case recorded outcome `cancelled`, and afterwards there is no scratch
//! tree, no tmux server and no harness, product or stub process that mentions
//! it. The points: the stub provider just started (provisioning), the
//! authenticated probe running (on the cli-tmux lane: the harness's one-shot call;
//! every lane runs that same step, `setup::model_path`),
//! and mid-conversation (the stub has answered learner turn 1).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::sigint::{ForegroundJob, JobError, cancelled_cleanly};
use crate::harness_spec::install_hint;
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::{self, HarnessName};

/// How long each phase may take before the trial gives up (and kills the child).
const PHASE_TIMEOUT: Duration = Duration::from_secs(90);
/// How soon after SIGINT the runner must have exited: stopping tmux, the
/// harness, the product and the stub, writing evidence and sweeping, on a
/// loaded machine.
pub(crate) const CANCEL_BOUND: Duration = Duration::from_secs(20);
/// How long the probe's harness gets to start before the signal.
const PROBE_SETTLE: Duration = Duration::from_millis(300);

/// Why one interrupt point failed.
#[derive(Debug, thiserror::Error)]
enum PointError {
    /// The child or its results dir could not be set up.
    #[error("{what}: {detail}")]
    Setup {
        /// What could not be set up.
        what: &'static str,
        /// The OS error.
        detail: String,
    },
    /// Driving the child failed.
    #[error(transparent)]
    Job(#[from] JobError),
    /// The child did not end cancelled and clean.
    #[error("{}", .0.join("; "))]
    NotClean(Vec<String>),
}

/// Which lane the child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `cli-tmux::<harness>`.
    CliTmux,
    /// `web-acp::<harness>` (HTTP and the session socket).
    WebAcp,
}

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

impl Kind {
    fn points(self) -> &'static [Point] {
        match self {
            Self::CliTmux => &[Point::StubStarted, Point::Probe, Point::Conversation],
            // The web lanes run the same probe step (`setup::model_path`): its
            // interrupt is proven once, on the cli-tmux lane.
            Self::WebAcp => &[Point::StubStarted, Point::Conversation],
        }
    }

    fn lane(self, harness: HarnessName) -> String {
        match self {
            Self::CliTmux => super::cli_tmux::trial_name(harness),
            Self::WebAcp => {
                crate::lane::web_acp::trial_name(harness, crate::lane::web_acp::Variant::Socket)
            }
        }
    }
}

/// The trial for `harness` on `kind`'s lane.
#[must_use]
pub fn trial(harness: HarnessName, kind: Kind) -> TrialSpec {
    let name = format!("{}::interrupt", kind.lane(harness));
    let binary = match (kind, crate::harness_spec::spec(harness).acp) {
        (Kind::WebAcp, Some(acp)) => acp.argv[0],
        _ => harness.binary(),
    };
    TrialSpec::gated(name, move |ctx| run(ctx, harness, kind))
        .requires(Requirement::HarnessSelected(harness))
        .requires(Requirement::BinaryOnScratchPath {
            binary,
            fix: install_hint(harness),
        })
}

fn run(ctx: &TrialContext, harness: HarnessName, kind: Kind) -> TrialReport {
    let mut facts = Vec::new();
    let mut problems = Vec::new();
    for point in kind.points() {
        match interrupt(ctx, harness, kind, *point) {
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

fn interrupt(
    ctx: &TrialContext,
    harness: HarnessName,
    kind: Kind,
    point: Point,
) -> Result<String, PointError> {
    let setup = |what| {
        move |e: std::io::Error| PointError::Setup {
            what,
            detail: e.to_string(),
        }
    };
    let exe = std::env::current_exe().map_err(setup("cannot find the runner binary"))?;
    let results = tempfile::Builder::new()
        .prefix("sl-int-")
        .tempdir_in("/tmp")
        .map_err(setup("cannot make a results dir"))?;
    let lane = kind.lane(harness);
    let mut cmd = Command::new(&exe);
    cmd.env_clear()
        .envs(ctx.caller.iter())
        .env(selection::ACC, "1")
        .env(selection::ACC_HARNESS, harness.as_str())
        .env(selection::ACC_RESULTS_DIR, results.path())
        // The child runs this one lane whatever shard the parent is: under the
        // parent's partition its own one-harness catalogue may deal it elsewhere.
        .env_remove(selection::ACC_PARTITION)
        // The probe point needs the probe, which the stub-provider mode runs.
        .env(selection::ACC_AUTH_MODE, "stub-provider")
        .args([lane.as_str(), "--exact", "--test-threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = ForegroundJob::spawn(&mut cmd).map_err(setup("cannot start the runner"))?;
    let pid = child.pid();

    // Each wait ends as soon as the child does: a lane that failed before the
    // point (a harness that never started) has nothing left to interrupt.
    let root = child.wait_while_running(
        || stub_root(pid),
        "the child's stub provider to start",
        PHASE_TIMEOUT,
    )?;
    match point {
        Point::StubStarted => {}
        Point::Probe => {
            // The probe makes its directory right before it starts the harness.
            child.wait_while_running(
                || root.join("probe").is_dir().then_some(()),
                "the authenticated probe to start",
                PHASE_TIMEOUT,
            )?;
            std::thread::sleep(PROBE_SETTLE);
        }
        Point::Conversation => {
            // Learner turn 1 of the product's session (it carries the persona;
            // the probe's one-shot request, also a reply 1, does not).
            let log = root.join("stub/requests.jsonl");
            let turn_one = |r: &studyloop_stubs::LogRecord| {
                r.persona.is_some()
                    && r.reply
                        .as_deref()
                        .is_some_and(|t| t.contains("MENTOR-REPLY 1 "))
            };
            child.wait_while_running(
                || {
                    studyloop_stubs::RequestLog::read_all(&log)
                        .ok()
                        .filter(|records| records.iter().any(turn_one))
                        .map(drop)
                },
                "the stub to answer turn 1 of the session",
                PHASE_TIMEOUT,
            )?;
        }
    }
    child.ctrl_c()?;
    let (status, took) = child.wait_exit(PHASE_TIMEOUT)?;
    let problems = cancelled_cleanly(
        status,
        took,
        CANCEL_BOUND,
        &root,
        &results.path().join("evidence"),
    );
    if problems.is_empty() {
        Ok(format!(
            "runner exited {status} {} ms after SIGINT; bundle outcome cancelled; no scratch tree, tmux server, harness, product or stub process left",
            took.as_millis()
        ))
    } else {
        Err(PointError::NotClean(problems))
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
