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
    let waits = studyloop_acceptance::interrupt::check("the session state").unwrap_err();
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
