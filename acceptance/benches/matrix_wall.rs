//! Matrix wall time vs the slowest single lane (`just bench`, live: needs
//! `STUDYLOOP_ACC=1` and `just harnesses`; otherwise it prints why it skipped).
//!
//! Runs the hermetic `cli-tmux::*` matrix through the real runner (`cargo test
//! --test acceptance`, debug profile, stub provider) once with every cell
//! concurrent and once with the default job count (= cores), and compares each
//! run's wall time with its slowest lane (sum of that lane's recorded steps).
//! Prints the ratios; asserts nothing (target: all-concurrent wall <= 1.3x the
//! slowest lane).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn main() {
    if std::env::var("STUDYLOOP_ACC").as_deref() != Ok("1") {
        println!(
            "matrix wall bench: skipped: set STUDYLOOP_ACC=1 (it runs the live cli-tmux matrix, ~2 min) after `just harnesses`"
        );
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = root.join(".harnesses/node_modules/.bin");
    if !bin.join("codex").exists() {
        println!(
            "matrix wall bench: skipped: {} has no pinned harnesses; run `just harnesses`",
            bin.display()
        );
        return;
    }
    // Build the runner first so no compile lands inside a timed run.
    let warm = Command::new("cargo")
        .current_dir(&root)
        .args([
            "test",
            "-q",
            "-p",
            "studyloop-acceptance",
            "--test",
            "acceptance",
            "--no-run",
        ])
        .status();
    if !warm.is_ok_and(|s| s.success()) {
        println!("matrix wall bench: failed: could not build the acceptance runner");
        return;
    }
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    for (label, jobs) in [
        ("every cell concurrent", 6),
        ("default jobs (= cores)", cores),
    ] {
        match run(&root, &bin, jobs) {
            Ok((wall, slowest, lanes)) => println!(
                "matrix ({label}, --test-threads {jobs}): wall {:.1} s, slowest lane {:.1} s ({lanes} lanes), ratio {:.2} (target <= 1.3 all-concurrent)",
                wall,
                slowest,
                wall / slowest
            ),
            Err(e) => println!("matrix ({label}): failed: {e}"),
        }
    }
}

fn run(root: &Path, bin: &Path, jobs: usize) -> Result<(f64, f64, usize), String> {
    let results = tempfile::Builder::new()
        .prefix("sl-bench-mx-")
        .tempdir_in("/tmp")
        .map_err(|e| e.to_string())?;
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let start = Instant::now();
    let out = Command::new("cargo")
        .current_dir(root)
        .args([
            "test",
            "-q",
            "-p",
            "studyloop-acceptance",
            "--test",
            "acceptance",
            "--",
            "cli-tmux::",
        ])
        .args(["--skip", "interrupt", "--test-threads", &jobs.to_string()])
        .env("STUDYLOOP_ACC", "1")
        .env("STUDYLOOP_ACC_HARNESS", "")
        .env("STUDYLOOP_ACC_RESULTS_DIR", results.path())
        .env("PATH", path)
        .output()
        .map_err(|e| format!("cargo test: {e}"))?;
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        let results_log =
            std::fs::read_to_string(results.path().join("results.jsonl")).unwrap_or_default();
        let failed: Vec<&str> = results_log
            .lines()
            .filter(|l| l.contains("\"failed\""))
            .collect();
        // Keep the run for inspection: its bundles are the evidence of the failure.
        let kept = results.keep();
        return Err(format!(
            "the matrix failed (run kept in {}): {}",
            kept.display(),
            failed.join(" | ")
        ));
    }
    let mut lanes = Vec::new();
    for bundle in std::fs::read_dir(results.path().join("evidence"))
        .map_err(|e| e.to_string())?
        .flatten()
    {
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(bundle.path().join("manifest.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        if manifest["surface"] != "cli-tmux" {
            continue;
        }
        let steps: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(bundle.path().join("steps.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        let ms: u64 = steps
            .as_array()
            .map(|a| a.iter().filter_map(|s| s["elapsed_ms"].as_u64()).sum())
            .unwrap_or(0);
        lanes.push(ms as f64 / 1000.0);
    }
    let slowest = lanes.iter().copied().fold(0.0_f64, f64::max);
    if slowest == 0.0 {
        return Err("no cli-tmux bundle was written".into());
    }
    Ok((wall, slowest, lanes.len()))
}
