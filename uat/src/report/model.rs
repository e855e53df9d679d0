//! What the report shows, read once from the run directories: one [`Cell`] per
//! trial with every attempt (results lines), its skip reasons (skip-ledger
//! lines) and each attempt's bundle, plus the repeat figures: pass^k (all k
//! attempts passed), pass@k (at least one did) and flaky (passed and failed on
//! one commit).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use studyloop_acceptance::ledger::{
    FailureCategory, RESULTS_LOG, RunRecords, TrialOutcome, TrialStatus,
};
use studyloop_acceptance::selection::HARNESS_ORDER;

use super::source::no_symlink_on;
use crate::bundle::Bundle;

/// One finished attempt of a trial.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    /// 1-based attempt number, when the runner recorded one.
    pub(crate) number: Option<u32>,
    /// How it ended.
    pub(crate) outcome: TrialOutcome,
    /// Wall time, when measured.
    pub(crate) elapsed_ms: Option<u64>,
    /// A failure's category.
    pub(crate) category: Option<FailureCategory>,
    /// Failure message or skip reason.
    pub(crate) message: Option<String>,
    /// When it was recorded.
    pub(crate) time: String,
    /// The bundle path as the results line wrote it.
    pub(crate) bundle_path: Option<String>,
    /// The bundle, when it could be opened.
    pub(crate) bundle: Option<Bundle>,
    /// Why the named bundle could not be opened.
    pub(crate) bundle_error: Option<String>,
}

impl Attempt {
    /// The commit the attempt's bundle was built from, when known.
    pub(crate) fn commit(&self) -> Option<&str> {
        self.bundle.as_ref()?.manifest().repo_sha.as_deref()
    }
}

/// One trial across every run directory read.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    /// The trial name.
    pub(crate) trial: String,
    /// Its harness (the name's second part when that is a harness), else `–`.
    pub(crate) harness: String,
    /// Its surface column: the name without the harness part.
    pub(crate) surface: String,
    /// The worst outcome over every line.
    pub(crate) status: TrialStatus,
    /// Every results line, in file order.
    pub(crate) attempts: Vec<Attempt>,
    /// Every distinct skip reason.
    pub(crate) skips: Vec<String>,
}

impl Cell {
    /// pass^k: every attempt passed (`None` when no attempt finished).
    pub(crate) fn pass_all(&self) -> Option<bool> {
        self.ran().then(|| {
            self.attempts
                .iter()
                .all(|a| a.outcome == TrialOutcome::Passed)
        })
    }

    /// pass@k: at least one attempt passed (`None` when none finished).
    pub(crate) fn pass_any(&self) -> Option<bool> {
        self.ran().then(|| {
            self.attempts
                .iter()
                .any(|a| a.outcome == TrialOutcome::Passed)
        })
    }

    /// Flaky: on one commit, one attempt passed and another failed.
    pub(crate) fn flaky(&self) -> bool {
        let mut by_commit: BTreeMap<Option<&str>, (bool, bool)> = BTreeMap::new();
        for a in &self.attempts {
            let e = by_commit.entry(a.commit()).or_default();
            match a.outcome {
                TrialOutcome::Passed => e.0 = true,
                TrialOutcome::Failed => e.1 = true,
                TrialOutcome::Skipped => {}
            }
        }
        by_commit.values().any(|(p, f)| *p && *f)
    }

    /// Total wall time of every attempt; `None` when none was measured.
    pub(crate) fn elapsed_ms(&self) -> Option<u64> {
        let times: Vec<u64> = self.attempts.iter().filter_map(|a| a.elapsed_ms).collect();
        (!times.is_empty()).then(|| times.iter().sum())
    }

    /// The latest attempt with a bundle.
    pub(crate) fn latest_bundle(&self) -> Option<&Bundle> {
        self.attempts.iter().rev().find_map(|a| a.bundle.as_ref())
    }

    /// The reply fidelity the latest bundle scored; `None` when unknown (no
    /// bundle, or a bundle that scored none): never 0.
    pub(crate) fn fidelity(&self) -> Option<f64> {
        self.latest_bundle()?.manifest().fidelity.as_ref()?.ratio
    }

    /// The word a status is shown and filtered by: `failed`, `flaky`,
    /// `skipped` or `passed`.
    pub(crate) fn status_word(&self) -> &'static str {
        if self.flaky() {
            "flaky"
        } else {
            self.status.outcome.as_str()
        }
    }

    /// The harness to show: the name's, else the latest bundle manifest's
    /// (UAT journey names carry none), else `–`.
    pub(crate) fn harness_shown(&self) -> String {
        if self.harness != "–" {
            return self.harness.clone();
        }
        self.latest_bundle()
            .and_then(|b| b.manifest().harness.clone())
            .unwrap_or_else(|| self.harness.clone())
    }

    /// Whether any attempt ran (passed or failed), as opposed to skipping.
    pub(crate) fn ran(&self) -> bool {
        self.attempts
            .iter()
            .any(|a| a.outcome != TrialOutcome::Skipped)
    }
}

/// Every cell of the run directories, by trial name.
pub(crate) fn cells(records: &RunRecords) -> Vec<Cell> {
    records
        .trials()
        .iter()
        .map(|(trial, status)| cell(trial, status))
        .collect()
}

fn cell(trial: &str, status: &TrialStatus) -> Cell {
    let (harness, surface) = split_name(trial);
    let mut attempts = Vec::new();
    let mut skips: Vec<String> = Vec::new();
    for r in &status.records {
        let from_results = r.origin.path.file_name().is_some_and(|n| n == RESULTS_LOG);
        if !from_results {
            if let Some(m) = &r.message
                && !skips.contains(m)
            {
                skips.push(m.clone());
            }
            continue;
        }
        let (bundle, bundle_error) = match r.bundle.as_deref() {
            Some(p) => match open_bundle(Path::new(p)) {
                Ok(b) => (Some(b), None),
                Err(e) => (None, Some(e)),
            },
            None => (None, None),
        };
        attempts.push(Attempt {
            number: r.meta.attempt,
            outcome: r.outcome,
            elapsed_ms: r.meta.elapsed_ms,
            // Lines written before categories were recorded: the same
            // classifier the runner uses, on the recorded message.
            category: r.meta.category.or_else(|| {
                (r.outcome == TrialOutcome::Failed).then(|| {
                    let m = r.message.as_deref().unwrap_or("");
                    FailureCategory::classify(m, m.contains("(outcome budget-exhausted)"))
                })
            }),
            message: r.message.clone(),
            time: r.time.clone(),
            bundle_path: r.bundle.clone(),
            bundle,
            bundle_error,
        });
    }
    Cell {
        trial: trial.to_owned(),
        harness,
        surface,
        status: status.clone(),
        attempts,
        skips,
    }
}

/// A bundle a results line names: only an absolute path with no `..` and no
/// symlink on it, holding a valid manifest, is read.
fn open_bundle(path: &Path) -> Result<Bundle, String> {
    if !no_symlink_on(path) {
        return Err(format!(
            "{} is not read: not an absolute path without `..` and symlinks, or it is gone",
            path.display()
        ));
    }
    Bundle::open(path).map_err(|e| e.to_string())
}

/// (harness, surface column) of a trial name: `cli-tmux::pi::paste` is
/// (`pi`, `cli-tmux::paste`); a name with no harness part is (`–`, name).
pub(crate) fn split_name(trial: &str) -> (String, String) {
    let parts: Vec<&str> = trial.split("::").collect();
    match parts.as_slice() {
        [surface, harness, rest @ ..] if HARNESS_ORDER.iter().any(|h| h.as_str() == *harness) => {
            let mut col = (*surface).to_owned();
            for r in rest {
                col.push_str("::");
                col.push_str(r);
            }
            ((*harness).to_owned(), col)
        }
        _ => ("–".to_owned(), trial.to_owned()),
    }
}

/// The arbitration beside a bundle, when graded and readable.
pub(crate) fn arbitration(bundle: &Bundle) -> Option<crate::council::Arbitration> {
    let dir: PathBuf = bundle.arbitration_dir();
    if !no_symlink_on(&dir) {
        return None;
    }
    let value = super::source::read_json(
        &dir.join(crate::council::ARBITRATION_JSON),
        crate::council::MAX_ARBITRATION_BYTES,
    )?;
    serde_json::from_value(value).ok()
}
