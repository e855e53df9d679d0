//! `studyloop status --json` with an active session, median of N runs, against
//! a baseline measured in the same run: `studyloop --version` (process start
//! and argument parsing only). Target: median < 20 ms.

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{median, ms};

const RUNS: usize = 60;

fn time(w: &common::World, args: &[&str]) -> Duration {
    let mut v = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        w.run(args).ok();
        v.push(t.elapsed());
    }
    median(v)
}

fn main() {
    let w = common::World::new();
    w.run(&["study", "Status bench", "--agent", "pi"]).ok();
    for i in 0..20 {
        w.run(&[
            "topic",
            &format!("concept {i}"),
            "-s",
            "learning",
            "-n",
            "note",
        ])
        .ok();
    }
    let status = time(&w, &["status", "--json"]);
    let base = time(&w, &["--version"]);
    w.run(&["study", "--end"]).ok();
    println!(
        "status: studyloop status --json (active session, 20 topics): median {:.2} ms over {RUNS} runs (target < 20 ms)",
        ms(status)
    );
    println!(
        "status: baseline studyloop --version:                          median {:.2} ms",
        ms(base)
    );
    println!(
        "status: ratio status/baseline = {:.2}x",
        ms(status) / ms(base)
    );
}
