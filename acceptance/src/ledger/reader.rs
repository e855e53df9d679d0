//! Reading run directories back, one or several merged: every line of both
//! logs is kept with the `file:line` it came from, so a sign-off can see and
//! name every source that disagrees about a trial.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::evidence::Counts;
use crate::ledger::error::LedgerError;
use crate::ledger::layout::{RESULTS_LOG, RUN_MARKER, SHARD_TIERS, SKIP_LEDGER, shard_record_file};
use crate::ledger::records::{
    ResultMeta, ResultRecord, RunMarker, ShardRecord, SkipRecord, TrialOutcome,
};

/// The most bytes a results log or skip ledger may hold: far above any real run
/// (a line is a few hundred bytes), and a bound on what a planted file costs.
pub const MAX_LOG_BYTES: u64 = 64 << 20;

/// Where a record was read: `file:line`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Origin {
    /// The log file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// One line of either log, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// How it ended (`skipped` for every skip-ledger line).
    pub outcome: TrialOutcome,
    /// The skip reason or failure message, if any.
    pub message: Option<String>,
    /// The evidence bundle the line names, as written.
    pub bundle: Option<String>,
    /// When it was recorded.
    pub time: String,
    /// The run key the writer stamped; `None` for a line written without one.
    pub run: Option<String>,
    /// The run directory it came from.
    pub dir: PathBuf,
    /// Where exactly.
    pub origin: Origin,
    /// Attempt, wall time and failure category (results lines only).
    pub meta: ResultMeta,
    /// The cell's reply fidelity the line recorded (results lines only; `None` when
    /// the line records none).
    pub fidelity: Option<crate::fidelity::CellFidelity>,
}

/// What is known about one trial after reading the logs.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialStatus {
    /// The worst outcome any record gives (failed, then skipped, then passed):
    /// no line, in any log or run, can hide another's failure or skip.
    pub outcome: TrialOutcome,
    /// The message of the last record with that outcome.
    pub message: Option<String>,
    /// The bundle of the last record with that outcome.
    pub bundle: Option<String>,
    /// When that record was written.
    pub time: String,
    /// The run directory that record came from.
    pub source: PathBuf,
    /// Every record of the trial, skip ledger first then results, in file order.
    pub records: Vec<LogLine>,
}

/// One run directory as read: where, and which run its marker names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerDir {
    /// The directory.
    pub dir: PathBuf,
    /// The run key of its marker; `None` when it has no marker.
    pub key: Option<String>,
    /// When its marker says the run opened it (RFC 3339 UTC); `None` without a marker.
    pub started: Option<String>,
    /// Its shard records, one per tier whose runner wrote here (empty for a
    /// directory written before shard records).
    pub shards: Vec<ShardRecord>,
}

/// Every trial's status in one run directory, or several merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRecords {
    trials: BTreeMap<String, TrialStatus>,
    runs: Vec<LedgerDir>,
}

impl RunRecords {
    /// Reads `dir`'s run marker, skip ledger and results log (any may be absent;
    /// the directory may not). Every line is kept; each file is opened as a
    /// regular file only (a FIFO or symlink is an error, never a hang).
    pub fn read(dir: &Path) -> Result<Self, LedgerError> {
        if !dir.is_dir() {
            return Err(LedgerError::NoRunDir {
                path: dir.to_owned(),
            });
        }
        let marker = read_marker(dir)?;
        let (key, started) = marker.map_or((None, None), |m| (Some(m.run), Some(m.time)));
        let mut records: Vec<(String, LogLine)> = Vec::new();
        for (origin, skip) in read_lines::<SkipRecord>(&dir.join(SKIP_LEDGER))? {
            let record = LogLine {
                outcome: TrialOutcome::Skipped,
                message: Some(skip.reason),
                bundle: None,
                time: skip.time,
                run: skip.run,
                dir: dir.to_owned(),
                origin,
                meta: ResultMeta::default(),
                fidelity: None,
            };
            records.push((skip.trial, record));
        }
        for (origin, r) in read_lines::<ResultRecord>(&dir.join(RESULTS_LOG))? {
            let record = LogLine {
                outcome: r.outcome,
                message: r.message,
                bundle: r.bundle,
                time: r.time,
                run: r.run,
                dir: dir.to_owned(),
                origin,
                meta: ResultMeta {
                    attempt: r.attempt,
                    elapsed_ms: r.elapsed_ms,
                    category: r.category,
                },
                fidelity: r.fidelity,
            };
            records.push((r.trial, record));
        }
        let mut by_trial: BTreeMap<String, Vec<LogLine>> = BTreeMap::new();
        for (trial, record) in records {
            by_trial.entry(trial).or_default().push(record);
        }
        let trials = by_trial
            .into_iter()
            .map(|(trial, records)| (trial, status(records)))
            .collect();
        Ok(Self {
            trials,
            runs: vec![LedgerDir {
                dir: dir.to_owned(),
                key,
                started,
                shards: SHARD_TIERS
                    .iter()
                    .filter_map(|tier| read_shard(dir, tier).transpose())
                    .collect::<Result<_, _>>()?,
            }],
        })
    }

    /// Reads and merges several run directories (one per nextest shard).
    pub fn read_all<P: AsRef<Path>>(dirs: &[P]) -> Result<Self, LedgerError> {
        let runs = dirs
            .iter()
            .map(|d| Self::read(d.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::merge(runs))
    }

    /// Merges runs: every record is kept, and a trial's outcome is the worst of
    /// all (failed, then skipped, then passed), so a shard can never hide
    /// another shard's failure or skip.
    pub fn merge(runs: impl IntoIterator<Item = RunRecords>) -> Self {
        let mut by_trial: BTreeMap<String, Vec<LogLine>> = BTreeMap::new();
        let mut dirs = Vec::new();
        for run in runs {
            dirs.extend(run.runs);
            for (trial, status) in run.trials {
                by_trial.entry(trial).or_default().extend(status.records);
            }
        }
        let trials = by_trial
            .into_iter()
            .map(|(trial, records)| (trial, status(records)))
            .collect();
        Self { trials, runs: dirs }
    }

    /// Every trial, by name.
    pub fn trials(&self) -> &BTreeMap<String, TrialStatus> {
        &self.trials
    }

    /// One trial's status.
    pub fn get(&self, trial: &str) -> Option<&TrialStatus> {
        self.trials.get(trial)
    }

    /// The run directories read, with the run their marker names.
    pub fn runs(&self) -> &[LedgerDir] {
        &self.runs
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

/// The status of a non-empty list of records: the worst outcome wins; among
/// records with it, the last one read.
fn status(records: Vec<LogLine>) -> TrialStatus {
    let worst = records
        .iter()
        .map(|r| r.outcome)
        .max_by_key(|o| o.severity())
        .unwrap_or(TrialOutcome::Failed);
    let last = records
        .iter()
        .rev()
        .find(|r| r.outcome == worst)
        .cloned()
        .unwrap_or_else(|| records[records.len() - 1].clone());
    TrialStatus {
        outcome: worst,
        message: last.message,
        bundle: last.bundle,
        time: last.time,
        source: last.dir,
        records,
    }
}

/// The run marker of `dir`, if it has one.
pub(crate) fn read_marker(dir: &Path) -> Result<Option<RunMarker>, LedgerError> {
    read_record(&dir.join(RUN_MARKER), 4096)
}

/// The shard record `tier`'s runner wrote in `dir`, if any.
pub(crate) fn read_shard(dir: &Path, tier: &str) -> Result<Option<ShardRecord>, LedgerError> {
    read_record(&dir.join(shard_record_file(tier)), MAX_LOG_BYTES)
}

/// One JSON record file, `None` when absent; a regular file of at most `limit` bytes.
fn read_record<T: serde::de::DeserializeOwned>(
    path: &Path,
    limit: u64,
) -> Result<Option<T>, LedgerError> {
    let bytes = match crate::private_fs::read_regular(path, limit) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LedgerError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    crate::evidence::unique_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| LedgerError::Malformed {
            path: path.to_owned(),
            line: 1,
            source,
        })
}

fn read_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Vec<(Origin, T)>, LedgerError> {
    let io = |source| LedgerError::Io {
        path: path.to_owned(),
        source,
    };
    let bytes = match crate::private_fs::read_regular(path, MAX_LOG_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(io(source)),
    };
    let text = String::from_utf8(bytes)
        .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let origin = Origin {
                path: path.to_owned(),
                line: i + 1,
            };
            crate::evidence::unique_json::from_str(line)
                .map(|record| (origin, record))
                .map_err(|source| LedgerError::Malformed {
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
