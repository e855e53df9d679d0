//! Fork bombs in a phase, as root and (re-executed through `setpriv`) as uid
//! 65534: a loop of sleeps, the classic `:(){ :|:& };:`, a shell loop whose children each spin
//! the CPU, a C-style `fork while 1` (perl), and spinning children that
//! each `setsid` (a scheduler autogroup each). (A bomb as root of a nested
//! user namespace cannot start: `view_tests`.) Each must stay under the
//! phase's process cap ([`MAX_PROCESSES`]; the kernel exempts real uid 0
//! from `RLIMIT_NPROC`, so root's phase runs as 65534), end with its short
//! timeout, leave nothing running, and leave the machine responsive (a
//! concurrent `true` still starts). Figures are printed for the report.
//!
//! Safe on a shared machine by construction: each bomb runs inside the
//! containment under test with a 3 s timeout, and a bomb that escaped the cap
//! would still end with its namespace at that timeout.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::contain_tests::{again_as_nobody, survivors, token};
use super::runner::{self, ATTEMPT_VAR};
use super::runner_tests::plan_for;
use super::sandbox::MAX_PROCESSES;

/// What one bomb did.
#[derive(Debug)]
struct Figures {
    most: usize,
    ran: Duration,
    /// The slowest start of a concurrent `true` while the bomb ran.
    slowest_true: Duration,
    /// The slowest start of `true` before the bomb (the machine's own load).
    baseline_true: Duration,
    left: usize,
}

fn time_true() -> Duration {
    let t = Instant::now();
    let ok = std::process::Command::new("true")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "`true` did not run");
    t.elapsed()
}

fn bomb(script: &str, t: &str) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan_for(dir.path(), "check", script, 3);
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let baseline_true = (0..5).map(|_| time_true()).max().unwrap_or_default();
    let stop = Arc::new(AtomicBool::new(false));
    let watch = {
        let (stop, id) = (Arc::clone(&stop), a.id.clone());
        std::thread::spawn(move || {
            let mut most = 0;
            while !stop.load(Ordering::Relaxed) {
                most = most.max(crate::procs::with_env(ATTEMPT_VAR, &id).len());
                std::thread::sleep(Duration::from_millis(50));
            }
            most
        })
    };
    let probe = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut slowest = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                slowest = slowest.max(time_true());
                std::thread::sleep(Duration::from_millis(50));
            }
            slowest
        })
    };
    let started = Instant::now();
    let o = runner::run(&plan, &a).unwrap();
    let ran = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let most = watch.join().unwrap();
    let slowest_true = probe.join().unwrap();
    let mut left = crate::procs::with_env(ATTEMPT_VAR, &a.id).len();
    left += survivors(t).len();
    assert!(o.timed_out || o.code.is_some(), "{o:?}");
    Figures {
        most,
        ran,
        slowest_true,
        baseline_true,
        left,
    }
}

fn all_bombs() {
    let root = rustix::process::geteuid().is_root();
    let t = token();
    let bombs = [
        (
            "sleep loop",
            format!("#!/bin/sh\n(while :; do sleep {t} & done) 2>/dev/null &\nexec sleep 300\n"),
        ),
        (
            "classic :(){ :|:& };:",
            "#!/bin/bash\n:(){ :|:& };:\nexec sleep 300\n".to_owned(),
        ),
        (
            "shell loop, spinning children",
            format!(
                "#!/bin/sh\n(while :; do sh -c 'while :; do :; done; sleep {t}' & done) 2>/dev/null &\nexec sleep 300\n"
            ),
        ),
        (
            "C-style fork while 1 (perl)",
            "#!/bin/sh\nexec perl -e 'fork while 1'\n".to_owned(),
        ),
        (
            "spinning children each in a session of its own",
            format!(
                "#!/bin/sh\n(while :; do setsid sh -c 'while :; do :; done; sleep {t}' & done) 2>/dev/null &\nexec sleep 300\n"
            ),
        ),
    ];
    for (name, script) in bombs {
        let f = bomb(&script, &t);
        eprintln!(
            "fork bomb {name} (root={root}): at most {} processes, over in {:.1?}, `true` started in at most {:.0?} during it ({:.0?} before), {} left",
            f.most, f.ran, f.slowest_true, f.baseline_true, f.left
        );
        assert!(f.most > 10, "{name}: {f:?}: the bomb did not run");
        assert!(
            f.most <= MAX_PROCESSES as usize,
            "{name}: {f:?}: over the cap"
        );
        assert!(f.ran < Duration::from_secs(10), "{name}: {f:?}");
        // Up to 3 s before the phase ran at nice 19 in a session of its own.
        assert!(
            f.slowest_true < Duration::from_secs(2) + f.baseline_true,
            "{name}: {f:?}: the machine stalled"
        );
        assert_eq!(f.left, 0, "{name}: {f:?}: processes survived");
    }
}

#[test]
fn fork_bombs_are_capped_and_end_with_the_phase() {
    all_bombs();
}

#[test]
fn fork_bombs_are_capped_for_an_unprivileged_user_too() {
    again_as_nobody(module_path!(), "bombs_as_the_reexecuted_user", "fork bomb");
}

#[test]
#[ignore = "run by fork_bombs_are_capped_for_an_unprivileged_user_too as uid 65534"]
fn bombs_as_the_reexecuted_user() {
    assert!(!rustix::process::geteuid().is_root());
    all_bombs();
}
