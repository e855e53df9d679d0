//! Ungated: a Ctrl-C reaches every blocking step of a trial at once, and
//! does not reach the stub provider.
//!
//! The body runs in a child process of its own (this binary re-executed, see
//! `reexec`), because it installs the runner's SIGINT handler and signals its own
//! process: the interrupted flag is process-wide, and under `cargo test` the other
//! tests of this binary are threads of the same process.
//! A trial child that would run for a minute (a harness retrying against a
//! dead port, as the authenticated probe did for 90 s) must be stopped within
//! a second of the signal; the stub provider, in its own process group, must
//! still answer after a SIGINT to the runner's group.

use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, getpgid, kill_process};
use studyloop_acceptance::procfs::group_alive;
use studyloop_acceptance::scratch::Scratch;
use studyloop_stubs::StubProvider;

/// Set in the re-executed child: run the body, not the parent's re-run.
const CHILD: &str = "STUDYLOOP_INTERRUPT_TEST_CHILD";

#[test]
fn sigint_cancels_a_blocking_trial_step_within_a_second_and_spares_the_stub() {
    if std::env::var_os(CHILD).is_none() {
        let name = crate::reexec::libtest_name(
            module_path!(),
            "sigint_cancels_a_blocking_trial_step_within_a_second_and_spares_the_stub",
        );
        crate::reexec::run_alone(&name, CHILD);
        return;
    }
    let scratch = Scratch::create().unwrap();
    let binary = studyloop_acceptance::bins::path("studyloop-stub-provider").unwrap();
    // A plain spawn, with no group asked for: every stub leads its own group.
    let stub = StubProvider::spawn(&binary, &scratch.root().join("stub"), ["--seed", "1"]).unwrap();
    let stub_pid = Pid::from_raw(i32::try_from(stub.pid().unwrap()).unwrap()).unwrap();
    let me = rustix::process::getpid();
    assert_eq!(
        getpgid(Some(stub_pid)).unwrap(),
        stub_pid,
        "the stub leads its own group"
    );
    assert_ne!(getpgid(Some(stub_pid)).unwrap(), getpgid(None).unwrap());

    studyloop_acceptance::interrupt::install().unwrap();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        kill_process(me, Signal::INT).unwrap();
    });
    let mut cmd = scratch.command("sh");
    cmd.args(["-c", "sleep 60"]);
    let start = Instant::now();
    let err = scratch
        .run(&mut cmd, Duration::from_secs(90))
        .expect_err("a cancelled step cannot succeed");
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "the step ran {took:?} after the signal"
    );
    assert!(studyloop_acceptance::interrupt::interrupted());
    let waits = studyloop_acceptance::interrupt::check("the session state")
        .unwrap_err()
        .to_string();
    assert!(
        waits.ends_with("while waiting for the session state"),
        "{waits}"
    );
    assert!(err.to_string().contains("interrupted"), "{err}");
    // SIGKILL takes effect when the killed process next runs, which on a loaded
    // machine can be after `run` returned: allow the same bound as the step.
    for pgid in scratch.process_groups() {
        if pgid != stub_pid.as_raw_nonzero().get() {
            while group_alive(pgid) && start.elapsed() < Duration::from_secs(3) {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(!group_alive(pgid), "group {pgid} outlived the cancel");
        }
    }
    // The stub is untouched by the runner's signal.
    assert!(group_alive(stub_pid.as_raw_nonzero().get()));
    drop(stub);
    scratch.close().unwrap();
}

/// Set in the child of the web-kind Ctrl-C test: it runs the case instead.
const WEB_CHILD: &str = "STUDYLOOP_TEST_SIGINT_WEB_CHILD";

/// A web-kind case (scratch world, product server, ACP session, conversation)
/// blocked mid-conversation in a runner child gets a real Ctrl-C to its
/// process group: the runner must exit non-zero in time, write the bundle as
/// `cancelled`, and leave no scratch tree and no process (product server,
/// ACP agent) of its world. Before the engine, only cli-tmux lanes caught the
/// signal: a web lane died at once, leaving its server and world behind.
#[test]
fn sigint_to_a_runner_mid_web_conversation_cancels_the_case_and_leaves_nothing() {
    use studyloop_acceptance::lane::sigint::{
        ForegroundJob, cancelled_cleanly, child_running, scratch_root_of, wait_for,
    };
    if std::env::var_os(WEB_CHILD).is_some() {
        std::process::exit(web_child());
    }
    let results = tempfile::Builder::new()
        .prefix("sl-int-web-")
        .tempdir_in("/tmp")
        .unwrap();
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        // The test as the one tests/it binary names it (module path included).
        "interrupt::sigint_to_a_runner_mid_web_conversation_cancels_the_case_and_leaves_nothing",
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(WEB_CHILD, "1")
    .env("STUDYLOOP_ACC", "1")
    .env("STUDYLOOP_ACC_RESULTS_DIR", results.path());
    let mut child = ForegroundJob::spawn(&mut cmd).unwrap();
    let pid = child.pid();
    let phase = Duration::from_secs(60);
    let server = wait_for(
        || child_running(pid, "studyloop", Some("web")),
        "the child's product server",
        phase,
    )
    .unwrap();
    let root = scratch_root_of(server).expect("the server runs in a scratch HOME");
    // The stub agent logs every frame it reads: wait for the learner's first
    // prompt, which it holds until cancelled.
    let frames = root.join("tmp/stub-acp-frames.jsonl");
    wait_for(
        || {
            std::fs::read_to_string(&frames)
                .ok()
                .filter(|log| log.contains("session/prompt"))
        },
        "the learner's first prompt to reach the agent",
        phase,
    )
    .unwrap();
    child.ctrl_c().unwrap();
    let (status, took) = child.wait_exit(phase).unwrap();
    let problems = cancelled_cleanly(
        status,
        took,
        Duration::from_secs(20),
        &root,
        &results.path().join("evidence"),
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The child: a runner with one web-kind case that blocks on its first turn.
fn web_child() -> i32 {
    use studyloop_acceptance::caller_env::CallerEnv;
    use studyloop_acceptance::evidence::Tier;
    use studyloop_acceptance::runner::{TrialSpec, run_with_words};
    let caller = CallerEnv::capture();
    let code = run_with_words(
        Tier::Acceptance,
        &caller,
        &["acceptance", "web-acp::sigint-case", "--exact"],
        |_| vec![TrialSpec::gated("web-acp::sigint-case", web_case)],
    );
    if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    }
}

fn web_case(
    ctx: &studyloop_acceptance::runner::TrialContext,
) -> studyloop_acceptance::runner::TrialReport {
    use studyloop_stubs::acp::knobs;
    stub_acp_case(ctx, "SIGINT", |scratch| {
        let frames = scratch.tmp_dir().join("stub-acp-frames.jsonl");
        vec![
            (knobs::STUB_ACP_PROMPT_WAIT_FOR_CANCEL, "1".into()),
            (knobs::STUB_ACP_LOG, frames.display().to_string()),
        ]
    })
}

/// A web ACP case of the real `studyloop web` with `studyloop-stub-acp` as its agent
/// (`knobs` for the stub, from the scratch world): session start, the socket, then a
/// conversation under the case engine. Also the ACP auth test's case (`acp_auth`).
pub(crate) fn stub_acp_case(
    ctx: &studyloop_acceptance::runner::TrialContext,
    topic: &'static str,
    knobs: impl FnOnce(&studyloop_acceptance::scratch::Scratch) -> Vec<(&'static str, String)>,
) -> studyloop_acceptance::runner::TrialReport {
    use studyloop_acceptance::case::{Case, RunDirBundle, StepFailure, Steps, Transport, converse};
    use studyloop_acceptance::evidence::Surface;
    use studyloop_acceptance::scratch::TestHatch;
    use studyloop_acceptance::selection::HarnessName;
    use studyloop_acceptance::web_acp::AcpMentor;
    fn err(e: impl std::fmt::Display) -> StepFailure {
        StepFailure::from_error(e)
    }
    Case::new(ctx, HarnessName::Codex, Surface::WebAcp)
        .run(&RunDirBundle::new(ctx), |c| {
            c.step(
                "scratch world",
                studyloop_acceptance::lane::setup::make_world,
            )?;
            let stub = studyloop_acceptance::bins::path("studyloop-stub-acp").map_err(err)?;
            let mut env = std::mem::take(&mut c.env)
                .with_test_hatch(TestHatch::AcpCmd, format!("'{}'", stub.display()));
            for (name, value) in knobs(c.scratch()?) {
                env = env.with_var(name, &value).map_err(err)?;
            }
            c.env = env;
            c.step(
                "studyloop web",
                studyloop_acceptance::lane::web_acp::start_server,
            )?;
            c.step("session start and socket", |c| {
                let server = c.server()?;
                let started = server
                    .start_acp_session(topic, "codex", 5, Duration::from_secs(60), |_| {})
                    .map_err(err)?;
                let mentor =
                    AcpMentor::attach(&server.addr, &started.ws_url, Duration::from_secs(120))
                        .map_err(err)?;
                c.slots.put_acp(mentor);
                Ok(())
            })?;
            c.step("conversation", |c| {
                c.with_acp(|c, m| converse(c, Transport::Socket(m)))
                    .map(drop)
            })
        })
        .report()
}
