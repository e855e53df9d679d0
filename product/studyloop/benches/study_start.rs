//! `studyloop study` to a live tmux session (test agent hatch), median of N
//! runs, against a baseline measured in the same run: bare tmux creating the
//! same two-pane session. Target: median < 300 ms.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

const RUNS: usize = 15;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

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

    let dir = w.home.path().join("baseline");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let mut base = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let name = format!("base-{i}");
        let target = format!("={name}:");
        let t = Instant::now();
        w.tmux(&[
            "new-session",
            "-d",
            "-s",
            &name,
            "-c",
            &d,
            "-x",
            "200",
            "-y",
            "50",
            "-P",
            "-F",
            "#{pane_id}",
            "/bin/sh",
            "-c",
            "exec cat",
            ";",
            "split-window",
            "-h",
            "-l",
            "25%",
            "-t",
            &target,
            "-c",
            &d,
            "-P",
            "-F",
            "#{pane_id}",
            "/bin/sh",
            "-c",
            "exec cat",
            ";",
            "last-pane",
            "-t",
            &target,
        ])
        .ok();
        base.push(t.elapsed());
        w.tmux(&["kill-session", "-t", &format!("={name}")]).ok();
        wait_server_gone(&w);
    }
    let (o, b) = (median(ours), median(base));
    println!(
        "study_start: studyloop study → live tmux session: median {:.1} ms over {RUNS} runs (target < 300 ms)",
        ms(o)
    );
    println!(
        "study_start: baseline bare tmux two-pane session:     median {:.1} ms",
        ms(b)
    );
    println!(
        "study_start: ratio studyloop/baseline = {:.2}x",
        ms(o) / ms(b)
    );
}
