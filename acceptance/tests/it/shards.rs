//! Partitioned runs of the real runner glue (issue 18): every trial in exactly one
//! shard, each shard's ledger holding only its own skips, the merged cell table
//! equal to the unsharded run's, a missing shard named by its cells, and a cell
//! two shards disagree about named as a conflict.
//!
//! Each run is a libtest-mimic run of `runner::run_with_words` with its own
//! results directory and run key (passed through the caller env, so nothing here
//! reads or changes this process's environment).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::ledger::{
    MergedCells, RunRecords, SKIP_LEDGER, ShardRecord, TrialOutcome, merge_shards,
    shard_record_file,
};
use studyloop_acceptance::runner::{Requirement, TrialReport, TrialSpec, run_with_words};

const CELLS: usize = 23;

/// 23 cells: every 5th fails, every 7th needs an unset variable (a named skip),
/// the rest pass; `flip` turns cell 3's pass into a failure (a re-run that
/// disagrees).
fn catalogue(flip: bool) -> Vec<TrialSpec> {
    (0..CELLS)
        .map(|i| {
            let name = format!("cell-{i:02}::stub");
            let fails = i % 5 == 0 || (flip && i == 3);
            let spec = TrialSpec::gated(name, move |_| {
                if fails {
                    TrialReport::failed("scripted failure")
                } else {
                    TrialReport::passed()
                }
            });
            if i % 7 == 0 {
                spec.requires(Requirement::EnvVar {
                    name: "STUDYLOOP_IT_SHARDS_NEVER_SET",
                    why: "a named skip",
                })
            } else {
                spec
            }
        })
        .collect()
}

fn run(dir: &Path, key: &str, partition: Option<&str>, flip: bool) -> ExitCode {
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC", "1"),
        ("STUDYLOOP_ACC_RESULTS_DIR", dir.to_str().unwrap()),
        // A run key per run (nextest's would be per invocation), so each
        // directory is its own run.
        ("NEXTEST_RUN_ID", key),
    ]);
    let mut words = vec!["acceptance", "--test-threads", "2", "-q"];
    if let Some(p) = partition {
        words.extend(["--partition", p]);
    }
    run_with_words(Tier::Acceptance, &caller, &words, move |_| catalogue(flip))
}

fn read(dirs: &[&PathBuf]) -> (RunRecords, MergedCells) {
    let records = RunRecords::read_all(dirs).unwrap();
    let merged = merge_shards(&records);
    (records, merged)
}

fn shard_record(dir: &Path) -> ShardRecord {
    serde_json::from_slice(&std::fs::read(dir.join(shard_record_file("acceptance"))).unwrap())
        .unwrap()
}

#[test]
fn sharded_runs_merge_to_the_unsharded_cells_and_name_missing_and_conflicting_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    // A failing cell makes the run's exit status a failure; the ledger is what
    // is compared, not the exit status.
    let _ = run(&whole, "whole-run", None, false);
    let (_, unsharded) = read(&[&whole]);
    assert!(unsharded.problems.is_empty(), "{:?}", unsharded.problems);
    assert_eq!(unsharded.cells.len(), CELLS, "{:?}", unsharded.cells);
    let count = |o| unsharded.cells.values().filter(|v| **v == o).count();
    assert_eq!(
        (
            count(TrialOutcome::Passed),
            count(TrialOutcome::Failed),
            count(TrialOutcome::Skipped)
        ),
        (15, 4, 4)
    );

    for kind in ["hash", "count", "time"] {
        let dirs: Vec<PathBuf> = (1..=3)
            .map(|k| tmp.path().join(format!("{kind}-{k}")))
            .collect();
        for (k, dir) in (1..=3).zip(&dirs) {
            let _ = run(
                dir,
                &format!("{kind}-run-{k}"),
                Some(&format!("{kind}:{k}/3")),
                false,
            );
        }
        // Every cell in exactly one shard; each ledger holds only its own skips.
        let mut owner: BTreeMap<String, usize> = BTreeMap::new();
        for (k, dir) in dirs.iter().enumerate() {
            let record = shard_record(dir);
            assert_eq!(
                record.partition.as_deref(),
                Some(format!("{kind}:{}/3", k + 1).as_str())
            );
            assert_eq!(record.catalogue.len(), CELLS);
            for cell in &record.owned {
                assert!(
                    owner.insert(cell.clone(), k).is_none(),
                    "{cell} in two {kind} shards"
                );
            }
            let ledger = std::fs::read_to_string(dir.join(SKIP_LEDGER)).unwrap_or_default();
            for line in ledger.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let trial = v["trial"].as_str().unwrap();
                assert!(
                    record.owned.iter().any(|o| o == trial),
                    "{kind} shard {}: ledgered another shard's skip {trial}",
                    k + 1
                );
            }
        }
        assert_eq!(owner.len(), CELLS, "{kind}: every cell has a shard");
        let sizes: BTreeSet<usize> = (0..3)
            .map(|k| owner.values().filter(|o| **o == k).count())
            .collect();
        assert!(
            sizes.iter().all(|s| *s > 0),
            "{kind}: no empty shard {sizes:?}"
        );

        let all: Vec<&PathBuf> = dirs.iter().collect();
        let (_, merged) = read(&all);
        assert!(merged.problems.is_empty(), "{kind}: {:?}", merged.problems);
        assert_eq!(merged.cells, unsharded.cells, "{kind}: merged == unsharded");
        // Merging is idempotent: reading the same shards again gives the same table.
        assert_eq!(read(&all).1, merged);

        // A missing shard: the merge names every cell it owned.
        let (_, partial) = read(&[&dirs[0], &dirs[2]]);
        let lost: Vec<&String> = owner
            .iter()
            .filter(|(_, k)| **k == 1)
            .map(|(c, _)| c)
            .collect();
        let text = partial.problems.join("\n");
        assert_eq!(partial.problems.len(), 1, "{text}");
        for cell in &lost {
            assert!(
                text.contains(&format!("`{cell}`")),
                "{kind}: missing {cell} not named: {text}"
            );
        }
        assert!(
            text.contains(&format!("{} cell(s) were run by no shard", lost.len())),
            "{text}"
        );
    }

    // A cell recorded by two shards with different outcomes: shard 1 of hash:1/3
    // run again with cell 3 failing (whichever shard owns cell 3 is re-run).
    let hash: Vec<PathBuf> = (1..=3)
        .map(|k| tmp.path().join(format!("hash-{k}")))
        .collect();
    let k = (0..3)
        .find(|k| {
            shard_record(&hash[*k])
                .owned
                .iter()
                .any(|c| c == "cell-03::stub")
        })
        .unwrap();
    let rerun = tmp.path().join("hash-rerun");
    let _ = run(
        &rerun,
        "hash-rerun",
        Some(&format!("hash:{}/3", k + 1)),
        true,
    );
    let (_, conflict) = read(&[&hash[0], &hash[1], &hash[2], &rerun]);
    let text = conflict.problems.join("\n");
    assert!(
        text.contains("cell `cell-03::stub` has different outcomes in different shards")
            && text.contains(&format!("passed in {}", hash[k].display()))
            && text.contains(&format!("failed in {}", rerun.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("shard hash:{}/3 was given 2 times", k + 1)),
        "{text}"
    );
    assert_eq!(conflict.cells["cell-03::stub"], TrialOutcome::Failed);
}

#[test]
fn a_bad_or_ambiguous_partition_refuses_the_run_before_any_trial() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, (flag, env)) in [
        ("hash:0/3", ""),
        ("count:4/3", ""),
        ("hash:1/3", "hash:2/3"),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(format!("r{i}"));
        let caller = CallerEnv::from_pairs([
            ("STUDYLOOP_ACC", "1"),
            ("STUDYLOOP_ACC_RESULTS_DIR", dir.to_str().unwrap()),
            ("STUDYLOOP_ACC_PARTITION", env),
        ]);
        let code = run_with_words(
            Tier::Acceptance,
            &caller,
            &["acceptance", "--partition", flag],
            |_| catalogue(false),
        );
        assert_eq!(code, ExitCode::from(2), "{flag} / {env:?}");
        assert!(!dir.join(SKIP_LEDGER).exists(), "nothing ran for {flag}");
    }
}

#[test]
fn a_fifo_or_symlink_planted_as_the_shard_record_is_an_error_never_a_hang() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside.json");
    std::fs::write(&outside, "{}").unwrap();
    for (i, plant) in ["fifo", "symlink", "garbage"].into_iter().enumerate() {
        let dir = tmp.path().join(format!("r{i}"));
        std::fs::create_dir(&dir).unwrap();
        let record = dir.join(shard_record_file("acceptance"));
        match plant {
            "fifo" => rustix::fs::mknodat(
                rustix::fs::CWD,
                &record,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap(),
            "symlink" => symlink(&outside, &record).unwrap(),
            _ => std::fs::write(&record, "{\"run\": 1}").unwrap(),
        }
        let started = std::time::Instant::now();
        assert!(RunRecords::read(&dir).is_err(), "{plant}");
        // The runner refuses the directory before any trial.
        assert_eq!(
            run(&dir, &format!("planted-{i}"), None, false),
            ExitCode::from(2),
            "{plant}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{plant}: no hang"
        );
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "{}",
            "nothing written through the link"
        );
    }
}

/// Under nextest the runner reads the `--partition` nextest was started with off its
/// parent's command line (`/proc/PPID/cmdline`). Here the parent is a shell whose
/// command line carries the words, and the child is this binary's probe below; a
/// parent that is not nextest gives no partition even when it spells the flag.
#[test]
fn nextests_own_partition_is_read_off_the_parent_process() {
    let exe = std::env::current_exe().unwrap();
    for (words, want) in [
        (
            ["nextest", "run", "--partition", "hash:2/3"],
            "Ok(Some(hash:2/3))",
        ),
        (
            ["nextest", "run", "-v", "--partition=count:1/2"],
            "Ok(Some(count:1/2))",
        ),
        (["other", "run", "--partition", "hash:2/3"], "Ok(None)"),
    ] {
        // `; exit` keeps the shell alive as the probe's parent (no exec of the last
        // command), so the probe's PPID is the shell with these words.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#""$0" --ignored --exact shards::nextest_partition_probe --nocapture; exit $?"#)
            .arg(&exe)
            .args(words)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{words:?}: {text}");
        assert!(
            text.contains(&format!("PROBE {want}\n")),
            "{words:?} should resolve to {want}: {text}"
        );
    }
}

/// Run only by the test above, as a child of a shell standing in for nextest.
#[test]
#[ignore = "a probe: nextests_own_partition_is_read_off_the_parent_process runs it as a child"]
fn nextest_partition_probe() {
    let got = studyloop_acceptance::runner::partition::resolve(
        None,
        &CallerEnv::from_pairs::<&str, &str>([]),
        true,
    )
    .map(|s| s.map(|s| s.partition.to_string()));
    let shown = match got {
        Ok(Some(p)) => format!("Ok(Some({p}))"),
        Ok(None) => "Ok(None)".to_owned(),
        Err(e) => format!("Err({e})"),
    };
    println!("PROBE {shown}");
}
