//! `STUDYLOOP_ACC_RERUN_FAILED` (`just rerun-failed [RUN_DIR]`): run exactly the
//! trials an earlier run failed, errored or was flaky on, into a new run
//! directory whose shard record names the earlier run (`rerun_of`).
//!
//! A trial counts as failed when any results line of it in the earlier directory
//! is `failed` (an error is a failure with a category; a flaky trial has a failed
//! attempt beside a passed one), so a rerun never drops a trial the earlier run
//! could not pass. Each rerun attempt is numbered after that trial's attempts in
//! the earlier run, so merged the two read as one trial's attempts (the earlier
//! failure stays: merged, a failed-then-passed trial is flaky, never passed).
//!
//! `latest` is the newest other run directory beside this run's (by its marker's
//! open time, then name) that holds results of this tier.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::ledger::{LedgerError, RunRecords, TrialOutcome};

/// The earlier run a rerun repeats, and what of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rerun {
    /// The earlier run directory.
    pub of: PathBuf,
    /// Its run key (its marker's), recorded as this run's `rerun_of`.
    pub key: String,
    /// Each trial to rerun, with the most attempts the earlier run recorded.
    pub trials: BTreeMap<String, u32>,
}

/// Why a rerun cannot start.
#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    /// `latest` found no earlier run.
    #[error(
        "STUDYLOOP_ACC_RERUN_FAILED=latest: no earlier {tier} run directory beside {this} holds results; run the matrix first (`just testacc`) or name a run directory"
    )]
    NoEarlierRun {
        /// The tier.
        tier: String,
        /// This run's directory.
        this: PathBuf,
    },
    /// The named directory cannot be read as a run.
    #[error(
        "STUDYLOOP_ACC_RERUN_FAILED={value}: cannot read it as a run directory ({source}); give `latest` or a directory under target/studyloop/runs/"
    )]
    Unreadable {
        /// The value given.
        value: String,
        /// Why.
        source: LedgerError,
    },
    /// The directory has no run marker (so no key to link to).
    #[error(
        "STUDYLOOP_ACC_RERUN_FAILED={value}: {dir} has no run.json marker, so it is not a run this runner wrote; give `latest` or a run directory"
    )]
    NoMarker {
        /// The value given.
        value: String,
        /// The directory.
        dir: PathBuf,
    },
    /// The value names this very run.
    #[error(
        "STUDYLOOP_ACC_RERUN_FAILED={value} is this run's own directory; give the earlier run's directory or `latest`"
    )]
    ThisRun {
        /// The value given.
        value: String,
    },
    /// Trials the earlier run failed that this catalogue no longer has.
    #[error(
        "the earlier run {of} failed trial(s) this catalogue does not list: {names}; rerun from a checkout that has them, or run the whole matrix"
    )]
    Unknown {
        /// The earlier run.
        of: PathBuf,
        /// The names, comma-separated.
        names: String,
    },
}

/// The rerun `value` asks for (`latest` or a directory), seen from this run's
/// directory `this`, for the runner of `tier` (`acceptance` or `uat`).
///
/// # Errors
/// [`RerunError`] when the earlier run cannot be found or read.
pub fn resolve(value: &str, this: &Path, tier: &str) -> Result<Rerun, RerunError> {
    let same = |d: &Path| match (d.canonicalize(), this.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let dir = if value == "latest" {
        latest(this, tier, &same).ok_or_else(|| RerunError::NoEarlierRun {
            tier: tier.to_owned(),
            this: this.to_owned(),
        })?
    } else {
        let dir = PathBuf::from(value);
        if same(&dir) {
            return Err(RerunError::ThisRun {
                value: value.to_owned(),
            });
        }
        dir
    };
    let records = RunRecords::read(&dir).map_err(|source| RerunError::Unreadable {
        value: value.to_owned(),
        source,
    })?;
    let key = records
        .runs()
        .first()
        .and_then(|r| r.key.clone())
        .ok_or_else(|| RerunError::NoMarker {
            value: value.to_owned(),
            dir: dir.clone(),
        })?;
    let mut trials = BTreeMap::new();
    for (name, status) in records.trials() {
        // Results lines only: a skip-ledger line is no attempt.
        let results = status
            .records
            .iter()
            .filter(|r| r.origin.path.ends_with(crate::ledger::RESULTS_LOG));
        let mut failed = false;
        let mut attempts = 0u32;
        for line in results {
            failed |= line.outcome == TrialOutcome::Failed;
            attempts = attempts.max(line.meta.attempt.unwrap_or(1));
        }
        if failed {
            trials.insert(name.clone(), attempts.max(1));
        }
    }
    Ok(Rerun {
        of: dir,
        key,
        trials,
    })
}

/// The newest run directory beside `this` (not `this`) with results of `tier`.
fn latest(this: &Path, tier: &str, same: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    let root = this.parent()?;
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(root).ok()?.filter_map(Result::ok) {
        let dir = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_dir()) || same(&dir) {
            continue;
        }
        if !dir.join(crate::ledger::shard_record_file(tier)).is_file()
            || !dir.join(crate::ledger::RESULTS_LOG).is_file()
        {
            continue;
        }
        // Only the marker: reading every sibling's logs to pick one is wasted I/O.
        if let Ok(Some(marker)) = crate::ledger::read_marker(&dir) {
            found.push((marker.time, dir));
        }
    }
    found.sort();
    found.pop().map(|(_, dir)| dir)
}

#[cfg(test)]
#[path = "rerun_tests.rs"]
mod tests;
