//! Reading run directories back, one or several merged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::evidence::Counts;
use crate::ledger::records::{ResultRecord, SkipRecord, TrialOutcome};
use crate::ledger::writer::{RESULTS_LOG, SKIP_LEDGER};

/// Why a run directory could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A file or directory could not be read or written.
    #[error("failed to access {path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The run directory does not exist.
    #[error(
        "run directory {path} does not exist (pass the directory a runner wrote, e.g. target/studyloop/runs/<run-key>)"
    )]
    NoRunDir {
        /// The path given.
        path: PathBuf,
    },
    /// `STUDYLOOP_ACC_RESULTS_DIR` is a relative path.
    #[error(
        "STUDYLOOP_ACC_RESULTS_DIR={path:?} is not an absolute path (cargo runs tests from the package directory; use an absolute path, or unset it for target/studyloop/runs/)"
    )]
    RelativeResultsDir {
        /// The value given.
        path: PathBuf,
    },
    /// A line is not a valid record.
    #[error(
        "{path}:{line}: not a valid record: {source} (the file was edited or truncated; re-run the trials)"
    )]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

/// What is known about one trial after reading the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialStatus {
    /// How it ended.
    pub outcome: TrialOutcome,
    /// The skip reason or failure message, if any.
    pub message: Option<String>,
    /// The evidence bundle, if any.
    pub bundle: Option<String>,
    /// When it was recorded.
    pub time: String,
    /// The run directory it came from.
    pub source: PathBuf,
}

/// Every trial's status in one run directory, or several merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRecords {
    trials: BTreeMap<String, TrialStatus>,
}

impl RunRecords {
    /// Reads `dir`'s skip ledger and results log (either may be absent; the
    /// directory may not). Within one run the last line per trial wins and a
    /// results line beats a skip-ledger line.
    pub fn read(dir: &Path) -> Result<Self, LedgerError> {
        if !dir.is_dir() {
            return Err(LedgerError::NoRunDir {
                path: dir.to_owned(),
            });
        }
        let mut trials = BTreeMap::new();
        for skip in read_lines::<SkipRecord>(&dir.join(SKIP_LEDGER))? {
            trials.insert(
                skip.trial,
                TrialStatus {
                    outcome: TrialOutcome::Skipped,
                    message: Some(skip.reason),
                    bundle: None,
                    time: skip.time,
                    source: dir.to_owned(),
                },
            );
        }
        let mut results: BTreeMap<String, ResultRecord> = BTreeMap::new();
        for result in read_lines::<ResultRecord>(&dir.join(RESULTS_LOG))? {
            results.insert(result.trial.clone(), result);
        }
        for (trial, r) in results {
            trials.insert(
                trial,
                TrialStatus {
                    outcome: r.outcome,
                    message: r.message,
                    bundle: r.bundle,
                    time: r.time,
                    source: dir.to_owned(),
                },
            );
        }
        Ok(Self { trials })
    }

    /// Reads and merges several run directories (one per nextest shard).
    pub fn read_all<P: AsRef<Path>>(dirs: &[P]) -> Result<Self, LedgerError> {
        let runs = dirs
            .iter()
            .map(|d| Self::read(d.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::merge(runs))
    }

    /// Merges runs; for a trial present in several, the worse outcome wins
    /// (failed, then skipped, then passed), so a shard can never hide another
    /// shard's failure or skip.
    pub fn merge(runs: impl IntoIterator<Item = RunRecords>) -> Self {
        let mut merged: BTreeMap<String, TrialStatus> = BTreeMap::new();
        for run in runs {
            for (trial, status) in run.trials {
                match merged.get(&trial) {
                    Some(existing) if existing.outcome.severity() >= status.outcome.severity() => {}
                    _ => {
                        merged.insert(trial, status);
                    }
                }
            }
        }
        Self { trials: merged }
    }

    /// Every trial, by name.
    pub fn trials(&self) -> &BTreeMap<String, TrialStatus> {
        &self.trials
    }

    /// One trial's status.
    pub fn get(&self, trial: &str) -> Option<&TrialStatus> {
        self.trials.get(trial)
    }

    /// Pass/skip/fail counts over every trial.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for status in self.trials.values() {
            match status.outcome {
                TrialOutcome::Passed => counts.passed += 1,
                TrialOutcome::Skipped => counts.skipped += 1,
                TrialOutcome::Failed => counts.failed += 1,
            }
        }
        counts
    }
}

fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, LedgerError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(LedgerError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|source| LedgerError::Malformed {
                path: path.to_owned(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
