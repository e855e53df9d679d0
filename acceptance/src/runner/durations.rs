//! Each trial's recorded duration, read from the committed receipts
//! (`receipts/<date>/<harness>/*.json`, written by `studyloop-uat receipts`), so a
//! run can deal `time:K/N` shards by weight and start its long poles first.
//!
//! A trial's estimate is the median of the wall times (the sum of its steps'
//! `elapsed_ms`) of its last [`LAST_CLEAN`] clean receipts (outcome `completed`,
//! every step ok), newest by date, counting only runs of a committed tree
//! (`dirty: false`) when the trial has any: a dirty tree's run timed code that no
//! commit holds (the 2026-12-01 receipts of `mcp::opencode`, 77 s, predate the
//! npm-offline fix that made it 22 s). A trial with no clean receipt gets the median
//! of its surface's estimates (the name's first `::` part: `cli-tmux`, `drill`,
//! …), and when its surface has none either, the median of every estimate. With
//! no receipts at all every trial weighs the same, [`UNKNOWN_MS`].
//!
//! These are weights, not evidence: an unreadable or malformed receipt is left
//! out (the receipts' own checks live in `studyloop-uat`), and nothing here
//! decides an outcome. The same receipts always give the same estimates, which
//! is what lets every shard of a run compute the same deal on its own.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// Clean receipts per trial the median is taken over.
pub const LAST_CLEAN: usize = 5;
/// The weight of every trial when no receipt says anything.
pub const UNKNOWN_MS: u64 = 1;

/// The receipt fields the weights need (the rest is ignored).
#[derive(Debug, Deserialize)]
struct ReceiptTime {
    cell: String,
    date: String,
    outcome: String,
    #[serde(default)]
    dirty: Option<bool>,
    #[serde(default)]
    steps: Vec<StepTime>,
}

#[derive(Debug, Deserialize)]
struct StepTime {
    ok: bool,
    elapsed_ms: Option<u64>,
}

/// One clean run of a trial: when, and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The trial (the receipt's `cell`).
    pub trial: String,
    /// The receipt's date (RFC 3339; newest sorts last).
    pub date: String,
    /// Its wall time in milliseconds.
    pub ms: u64,
    /// Whether it ran from a committed tree (the receipt's `dirty: false`).
    pub committed: bool,
}

/// Estimated wall time per trial, per surface and overall.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Durations {
    by_trial: BTreeMap<String, u64>,
    by_surface: BTreeMap<String, u64>,
    overall: Option<u64>,
}

impl Durations {
    /// The estimates from the workspace's committed receipts.
    #[must_use]
    pub fn recorded() -> Self {
        Self::from_dir(&crate::bins::workspace_root().join("receipts"))
    }

    /// The estimates from the receipts under `dir` (`<date>/<harness>/*.json`);
    /// a missing dir gives no estimates. Symlinks are not followed.
    #[must_use]
    pub fn from_dir(dir: &Path) -> Self {
        let mut runs = Vec::new();
        for date in entries(dir) {
            for harness in entries(&date) {
                for file in entries(&harness) {
                    if file.extension().is_some_and(|e| e == "json")
                        && let Some(run) = read_clean(&file)
                    {
                        runs.push(run);
                    }
                }
            }
        }
        Self::from_runs(runs)
    }

    /// The estimates from clean runs (any order).
    #[must_use]
    pub fn from_runs(runs: impl IntoIterator<Item = Recorded>) -> Self {
        let mut per_trial: BTreeMap<String, Vec<(bool, String, u64)>> = BTreeMap::new();
        for run in runs {
            per_trial
                .entry(run.trial)
                .or_default()
                .push((run.committed, run.date, run.ms));
        }
        let by_trial: BTreeMap<String, u64> = per_trial
            .into_iter()
            .map(|(trial, runs)| {
                let committed = runs.iter().any(|r| r.0);
                let mut times: Vec<(String, u64)> = runs
                    .into_iter()
                    .filter(|r| r.0 || !committed)
                    .map(|(_, date, ms)| (date, ms))
                    .collect();
                // Newest last; the date then the time break ties, so the pick
                // does not depend on the order the files were read in.
                times.sort();
                let last: Vec<u64> = times.iter().rev().take(LAST_CLEAN).map(|t| t.1).collect();
                (trial, median(last).unwrap_or(UNKNOWN_MS))
            })
            .collect();
        let mut per_surface: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (trial, ms) in &by_trial {
            per_surface
                .entry(surface(trial).to_owned())
                .or_default()
                .push(*ms);
        }
        let by_surface = per_surface
            .into_iter()
            .filter_map(|(s, times)| median(times).map(|m| (s, m)))
            .collect();
        let overall = median(by_trial.values().copied().collect());
        Self {
            by_trial,
            by_surface,
            overall,
        }
    }

    /// The estimated wall time of `trial` in milliseconds (never 0).
    #[must_use]
    pub fn estimate(&self, trial: &str) -> u64 {
        self.by_trial
            .get(trial)
            .or_else(|| self.by_surface.get(surface(trial)))
            .copied()
            .or(self.overall)
            .unwrap_or(UNKNOWN_MS)
            .max(1)
    }

    /// Whether any receipt gave an estimate.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_trial.is_empty()
    }
}

/// A trial's surface: its name up to the first `::`.
fn surface(trial: &str) -> &str {
    trial.split_once("::").map_or(trial, |(s, _)| s)
}

/// The median (the lower middle of an even count, so it is always a recorded
/// time), or `None` for no times.
fn median(mut times: Vec<u64>) -> Option<u64> {
    times.sort_unstable();
    let n = times.len();
    (n > 0).then(|| times[(n - 1) / 2])
}

/// The entries of `dir` in name order, symlinks left out.
fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = read
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// A clean receipt's run, or `None` (unreadable, malformed, not clean, untimed).
fn read_clean(file: &Path) -> Option<Recorded> {
    let text = std::fs::read(file).ok()?;
    let r: ReceiptTime = serde_json::from_slice(&text).ok()?;
    let clean = r.outcome == "completed" && !r.steps.is_empty() && r.steps.iter().all(|s| s.ok);
    if !clean {
        return None;
    }
    let ms = r.steps.iter().filter_map(|s| s.elapsed_ms).sum();
    Some(Recorded {
        trial: r.cell,
        date: r.date,
        ms,
        committed: r.dirty == Some(false),
    })
}

#[cfg(test)]
#[path = "durations_tests.rs"]
mod tests;
