//! Appending to a run directory's logs, and choosing that directory.
//!
//! A run directory belongs to one run: the first open writes the run marker
//! (`run.json`, the run key), every later open must carry the same key (nextest's
//! list phase and each per-trial process of one run share `NEXTEST_RUN_ID`), and
//! every line is stamped with the key, so a second run can neither append to it
//! unnoticed nor be merged into it by hand.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::caller_env::CallerEnv;
use crate::clock;
use crate::evidence::RunId;
use crate::fidelity::CellFidelity;
use crate::ledger::error::LedgerError;
use crate::ledger::layout::{RESULTS_LOG, RUN_MARKER, SHARD_TIERS, SKIP_LEDGER, shard_record_file};
use crate::ledger::reader::{read_marker, read_shard};
use crate::ledger::records::{
    ResultMeta, ResultRecord, RunMarker, ShardRecord, SkipRecord, TrialOutcome,
};
use crate::selection::ACC_RESULTS_DIR;

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
    Ok(target_dir.join("studyloop").join("runs").join(run_key(env)))
}

/// This run's key: `NEXTEST_RUN_ID` when set (one run spans nextest's list
/// phase and every per-trial process), else one fresh run id per process.
pub fn run_key(env: &CallerEnv) -> String {
    static PROCESS: OnceLock<String> = OnceLock::new();
    env.var(NEXTEST_RUN_ID)
        .filter(|id| is_safe_component(id))
        .unwrap_or_else(|| {
            PROCESS
                .get_or_init(|| RunId::generate().to_string())
                .clone()
        })
}

/// Opens this run's directory ([`results_dir`]) as this run ([`run_key`]).
pub fn open_run(env: &CallerEnv, target_dir: &Path) -> Result<RunLog, LedgerError> {
    RunLog::open_as(results_dir(env, target_dir)?, &run_key(env))
}

fn is_safe_component(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Appends records to one run directory.
#[derive(Debug, Clone)]
pub struct RunLog {
    dir: PathBuf,
    key: String,
}

impl RunLog {
    /// Opens (creating, 0700) the run directory `dir` as a new run with a fresh
    /// key; see [`RunLog::open_as`]. The runner opens its directory with
    /// [`open_run`], whose key every process of one run shares.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, LedgerError> {
        Self::open_as(dir, RunId::generate().as_str())
    }

    /// Opens (creating, 0700) the run directory `dir` as run `key`. The first
    /// open writes the run marker; a directory whose marker names another run,
    /// or which holds logs but no marker, is refused ([`LedgerError::Taken`]).
    pub(crate) fn open_as(dir: impl Into<PathBuf>, key: &str) -> Result<Self, LedgerError> {
        let dir = dir.into();
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| LedgerError::Io { path, source }
        };
        crate::private_fs::create_dir(&dir).map_err(io(&dir))?;
        let taken = |owner: String| LedgerError::Taken {
            dir: dir.clone(),
            owner,
            this: key.to_owned(),
        };
        loop {
            if let Some(marker) = read_marker(&dir)? {
                if marker.run != key {
                    return Err(taken(marker.run));
                }
                break;
            }
            if [SKIP_LEDGER, RESULTS_LOG]
                .iter()
                .any(|f| std::fs::symlink_metadata(dir.join(f)).is_ok())
            {
                return Err(taken("unmarked (logs written before run markers)".into()));
            }
            let marker = RunMarker {
                run: key.to_owned(),
                time: clock::now_rfc3339(),
            };
            let mut bytes =
                serde_json::to_vec(&marker).map_err(|e| io(&dir)(std::io::Error::other(e)))?;
            bytes.push(b'\n');
            // Written whole under a temporary name, then hard-linked into place:
            // link(2) fails when the marker exists, so of several processes of a
            // run starting at once exactly one creates it and none reads it half
            // written; the others loop and check it names their run.
            let tmp = dir.join(format!(".{RUN_MARKER}.{}.tmp", crate::hex::random(4)));
            crate::evidence::atomic_write(&tmp, &bytes)
                .map_err(|e| io(&tmp)(std::io::Error::other(e.to_string())))?;
            let linked = std::fs::hard_link(&tmp, dir.join(RUN_MARKER));
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(&dir.join(RUN_MARKER))(e)),
            }
        }
        Ok(Self {
            dir,
            key: key.to_owned(),
        })
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run key this log stamps on every line.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Where acceptance bundles of this run go: `<dir>/evidence`.
    pub(crate) fn evidence_dir(&self) -> PathBuf {
        self.dir.join("evidence")
    }

    /// Writes this run's shard record once: the first process of a run creates
    /// it (whole, hard-linked into place like the run marker); every later one
    /// must describe the same shard, else [`LedgerError::ShardMismatch`].
    pub fn record_shard(&self, record: &ShardRecord) -> Result<(), LedgerError> {
        if !SHARD_TIERS.contains(&record.tier.as_str()) {
            return Err(LedgerError::Io {
                path: self.dir.clone(),
                source: std::io::Error::other(format!(
                    "shard record of unknown tier `{}` (known: {})",
                    record.tier,
                    SHARD_TIERS.join(", ")
                )),
            });
        }
        let name = shard_record_file(&record.tier);
        let path = self.dir.join(&name);
        let io = |source| LedgerError::Io {
            path: path.clone(),
            source,
        };
        loop {
            if let Some(existing) = read_shard(&self.dir, &record.tier)? {
                if &existing != record {
                    return Err(LedgerError::ShardMismatch {
                        path,
                        existing: Box::new(existing),
                        this: Box::new(record.clone()),
                    });
                }
                return Ok(());
            }
            let mut bytes = serde_json::to_vec(record).map_err(|e| io(std::io::Error::other(e)))?;
            bytes.push(b'\n');
            let tmp = self
                .dir
                .join(format!(".{name}.{}.tmp", crate::hex::random(4)));
            crate::evidence::atomic_write(&tmp, &bytes)
                .map_err(|e| io(std::io::Error::other(e.to_string())))?;
            let linked = std::fs::hard_link(&tmp, &path);
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io(e)),
            }
        }
    }

    /// Appends a skip-ledger line.
    pub fn record_skip(&self, trial: &str, reason: &str) -> Result<(), LedgerError> {
        let record = SkipRecord {
            trial: trial.to_owned(),
            reason: reason.to_owned(),
            time: clock::now_rfc3339(),
            run: Some(self.key.clone()),
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
        fidelity: Option<&CellFidelity>,
    ) -> Result<(), LedgerError> {
        let meta = ResultMeta::default();
        self.record_result_meta(trial, outcome, message, bundle, fidelity, meta)
    }

    /// Appends a results line with its attempt, wall time and failure category.
    pub fn record_result_meta(
        &self,
        trial: &str,
        outcome: TrialOutcome,
        message: Option<&str>,
        bundle: Option<&Path>,
        fidelity: Option<&CellFidelity>,
        meta: ResultMeta,
    ) -> Result<(), LedgerError> {
        let record = ResultRecord {
            attempt: meta.attempt,
            elapsed_ms: meta.elapsed_ms,
            category: meta.category,
            trial: trial.to_owned(),
            outcome,
            time: clock::now_rfc3339(),
            message: message.map(str::to_owned),
            bundle: bundle.map(|b| b.display().to_string()),
            run: Some(self.key.clone()),
            fidelity: fidelity.cloned(),
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
        // O_NOFOLLOW | O_NONBLOCK: a symlink or FIFO planted in place of a log
        // is an error, never a redirect or a hang.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc_flags())
            .open(&path)
            .map_err(io)?;
        if !f.metadata().map_err(io)?.is_file() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
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

fn libc_flags() -> i32 {
    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC)
        .bits() as i32
}
