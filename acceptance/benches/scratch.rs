//! Scratch-world benchmarks (`just bench`): the create+sweep cycle, and the
//! guarded sweep of a 20k-file tree against `rm -rf` of an identical tree in
//! the same run. Prints medians and the ratio; asserts nothing (targets: cycle
//! < 20 ms median, sweep/rm ratio <= 1.3).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use studyloop_acceptance::scratch::Scratch;

const CYCLES: usize = 50;
const TREE_REPS: usize = 5;
const DIRS: usize = 100;
const FILES_PER_DIR: usize = 200;

fn main() {
    let cycle = median((0..CYCLES).map(|_| {
        let start = Instant::now();
        Scratch::create().expect("create").close().expect("sweep");
        start.elapsed()
    }));
    println!(
        "scratch create+sweep cycle: median {} over {CYCLES} cycles (target < 20 ms)",
        ms(cycle)
    );

    let mut sweeps = Vec::new();
    let mut rms = Vec::new();
    for _ in 0..TREE_REPS {
        let scratch = Scratch::create().expect("create");
        build_tree(&scratch.home().join("tree"));
        let start = Instant::now();
        scratch.close().expect("sweep");
        sweeps.push(start.elapsed());

        let baseline = tempfile::Builder::new()
            .prefix("sl-bench-rm-")
            .tempdir_in("/tmp")
            .expect("tempdir");
        let root = baseline.keep();
        build_tree(&root.join("tree"));
        let start = Instant::now();
        let status = Command::new("rm")
            .arg("-rf")
            .arg(&root)
            .status()
            .expect("rm");
        rms.push(start.elapsed());
        assert!(status.success() && !root.exists(), "rm -rf failed");
    }
    let files = DIRS * FILES_PER_DIR;
    let (sweep, rm) = (median(sweeps), median(rms));
    println!(
        "sweep of a {files}-file tree: median {} over {TREE_REPS} runs",
        ms(sweep)
    );
    println!(
        "rm -rf of an identical tree: median {} over {TREE_REPS} runs",
        ms(rm)
    );
    println!(
        "sweep / rm -rf ratio: {:.2} (target <= 1.3)",
        sweep.as_secs_f64() / rm.as_secs_f64()
    );
}

/// `DIRS` directories of `FILES_PER_DIR` small files each.
fn build_tree(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("d{d:03}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..FILES_PER_DIR {
            std::fs::write(dir.join(format!("f{f:03}")), b"scratch file content\n").expect("write");
        }
    }
}

fn median(samples: impl IntoIterator<Item = Duration>) -> Duration {
    let mut v: Vec<Duration> = samples.into_iter().collect();
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
