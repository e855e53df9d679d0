//! Appending to a run directory's logs, and choosing that directory.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::caller_env::CallerEnv;
use crate::clock;
use crate::evidence::RunId;
use crate::ledger::reader::LedgerError;
use crate::ledger::records::{ResultRecord, SkipRecord, TrialOutcome};
use crate::selection::ACC_RESULTS_DIR;

/// The skip ledger's file name.
pub const SKIP_LEDGER: &str = "skip-ledger.jsonl";
/// The results log's file name.
pub const RESULTS_LOG: &str = "results.jsonl";

/// nextest's run id, shared by its list and run phases (nextest ≥ 0.9.138).
const NEXTEST_RUN_ID: &str = "NEXTEST_RUN_ID";

/// The run directory: `STUDYLOOP_ACC_RESULTS_DIR` when set and non-empty, else
/// `<target>/studyloop/runs/<key>` where key is `NEXTEST_RUN_ID` (so nextest's
/// list phase and every per-trial process share one directory) or a fresh run
/// id. A relative override is an error: cargo runs tests from the package
/// directory, so it would not land where the caller meant.
pub fn results_dir(env: &CallerEnv, target_dir: &Path) -> Result<PathBuf, LedgerError> {
    if let Some(dir) = env.var_os(ACC_RESULTS_DIR).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if !dir.is_absolute() {
            return Err(LedgerError::RelativeResultsDir { path: dir });
        }
        return Ok(dir);
    }
    let key = env
        .var(NEXTEST_RUN_ID)
        .filter(|id| is_safe_component(id))
        .unwrap_or_else(|| RunId::generate().to_string());
    Ok(target_dir.join("studyloop").join("runs").join(key))
}

fn is_safe_component(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Appends records to one run directory.
#[derive(Debug, Clone)]
pub struct RunLog {
    dir: PathBuf,
}

impl RunLog {
    /// Opens (creating, 0700) the run directory `dir`.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, LedgerError> {
        let dir = dir.into();
        crate::private_fs::create_dir(&dir).map_err(|source| LedgerError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(Self { dir })
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where acceptance bundles of this run go: `<dir>/evidence`.
    pub fn evidence_dir(&self) -> PathBuf {
        self.dir.join("evidence")
    }

    /// Appends a skip-ledger line.
    pub fn record_skip(&self, trial: &str, reason: &str) -> Result<(), LedgerError> {
        let record = SkipRecord {
            trial: trial.to_owned(),
            reason: reason.to_owned(),
            time: clock::now_rfc3339(),
        };
        self.append(SKIP_LEDGER, &record)
    }

    /// Appends a results line.
    pub fn record_result(
        &self,
        trial: &str,
        outcome: TrialOutcome,
        message: Option<&str>,
        bundle: Option<&Path>,
    ) -> Result<(), LedgerError> {
        let record = ResultRecord {
            trial: trial.to_owned(),
            outcome,
            time: clock::now_rfc3339(),
            message: message.map(str::to_owned),
            bundle: bundle.map(|b| b.display().to_string()),
        };
        self.append(RESULTS_LOG, &record)
    }

    fn append(&self, file: &str, record: &impl serde::Serialize) -> Result<(), LedgerError> {
        let path = self.dir.join(file);
        let io = |source| LedgerError::Io {
            path: path.clone(),
            source,
        };
        let mut line = serde_json::to_vec(record).map_err(|e| io(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        // One write on an O_APPEND fd: the kernel places it atomically at the
        // end, so lines from concurrent processes never interleave.
        let written = f.write(&line).map_err(io)?;
        if written != line.len() {
            return Err(io(std::io::Error::other(format!(
                "short write ({written} of {} bytes)",
                line.len()
            ))));
        }
        Ok(())
    }
}
