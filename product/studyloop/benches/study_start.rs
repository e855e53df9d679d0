//! `studyloop study` to a live tmux session (test agent hatch), median of N
//! runs, against a baseline measured in the same run: the library's tmux call
//! alone creating the same two-pane session. Target: median < 300 ms.

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::time::Instant;

use common::{median, ms};

const RUNS: usize = 15;

/// Both loops start from no tmux server (ending a session kills the last one
/// and tmux exits): wait for that exit so a new client never races it.
fn wait_server_gone(w: &common::World) {
    common::wait_until(5, "the tmux server to exit", || !w.server_running());
}

fn main() {
    let w = common::World::new();
    // Warm-up: creates the DB and the tmux server once, like a user's second session.
    w.run(&["study", "Warm up", "--agent", "codex"]).ok();
    w.run(&["study", "--end"]).ok();
    wait_server_gone(&w);

    let mut ours = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let t = Instant::now();
        w.run(&["study", &format!("Bench topic {i}"), "--agent", "codex"])
            .ok();
        ours.push(t.elapsed());
        assert!(
            !w.sessions().is_empty(),
            "session live after study returned"
        );
        w.run(&["study", "--end"]).ok();
        wait_server_gone(&w);
    }

    // Baseline: the same two-pane tmux session through the library's tmux
    // call alone (no claim, DB, persona or session dir).
    let tmux = studyloop::tmux::Tmux::new(&w.lib_env()).unwrap();
    let dir = w.home.path().join("baseline");
    std::fs::create_dir_all(&dir).unwrap();
    let pane = || vec!["/bin/sh".to_owned(), "-c".to_owned(), "exec cat".to_owned()];
    let mut base = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let name = format!("base-{i}");
        let t = Instant::now();
        tmux.new_study_session(&name, "base", &dir, &pane(), &pane())
            .unwrap();
        base.push(t.elapsed());
        tmux.kill_session(&name).unwrap();
        wait_server_gone(&w);
    }
    let (o, b) = (median(ours), median(base));
    println!(
        "study_start: studyloop study → live tmux session: median {:.1} ms over {RUNS} runs (target < 300 ms)",
        ms(o)
    );
    println!(
        "study_start: baseline tmux two-pane session (library call): median {:.1} ms",
        ms(b)
    );
    println!(
        "study_start: ratio studyloop/baseline = {:.2}x",
        ms(o) / ms(b)
    );
}
