//! Evidence inventory hashing (`just bench`) against coreutils `sha256sum`
//! over the same files in the same run. Prints medians and the throughput ratio
//! (sha256sum time / ours; target >= 0.8); asserts nothing.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use studyloop_acceptance::evidence;

const REPS: usize = 7;
const LARGE: usize = 200;
const LARGE_SIZE: usize = 256 * 1024;
const SMALL: usize = 2000;
const SMALL_SIZE: usize = 1024;

fn main() {
    let dir = tempfile::Builder::new()
        .prefix("sl-bench-inv-")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for (count, size, prefix) in [(LARGE, LARGE_SIZE, "large"), (SMALL, SMALL_SIZE, "small")] {
        let sub = dir.path().join(prefix);
        std::fs::create_dir(&sub).expect("mkdir");
        for i in 0..count {
            let path = sub.join(format!("{i:04}.bin"));
            std::fs::write(&path, pseudo_random(size, &mut seed)).expect("write");
            files.push(path);
        }
    }
    let total_mib = (LARGE * LARGE_SIZE + SMALL * SMALL_SIZE) as f64 / (1024.0 * 1024.0);
    // Warm the page cache for both contenders.
    evidence::inventory(dir.path()).expect("inventory");
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..REPS {
        let start = Instant::now();
        let inv = evidence::inventory(dir.path()).expect("inventory");
        ours.push(start.elapsed());
        assert_eq!(inv.len(), files.len());

        let start = Instant::now();
        let status = Command::new("sha256sum")
            .args(&files)
            .stdout(Stdio::null())
            .status()
            .expect("sha256sum");
        theirs.push(start.elapsed());
        assert!(status.success());
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!(
        "inventory of {} files ({total_mib:.1} MiB): median {:.2} ms ({:.0} MiB/s)",
        files.len(),
        ours.as_secs_f64() * 1000.0,
        total_mib / ours.as_secs_f64()
    );
    println!(
        "sha256sum over the same files: median {:.2} ms ({:.0} MiB/s)",
        theirs.as_secs_f64() * 1000.0,
        total_mib / theirs.as_secs_f64()
    );
    println!(
        "throughput ratio ours / sha256sum: {:.2} (target >= 0.8)",
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
}

/// Incompressible bytes from a xorshift generator (no RNG dependency needed).
fn pseudo_random(len: usize, state: &mut u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
