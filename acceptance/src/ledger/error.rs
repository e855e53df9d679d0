//! Why a run directory could not be read or written: one error for the writer, the
//! reader and the shard merge, in a leaf of its own.

use std::path::PathBuf;

use crate::ledger::records::ShardRecord;

/// Why a run directory could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A file or directory could not be read or written (or is not a regular
    /// file, or is too large).
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
    /// The run directory belongs to another run.
    #[error(
        "run directory {dir} belongs to run `{owner}`, not to this run `{this}`: a run directory holds one run, never a merge (point STUDYLOOP_ACC_RESULTS_DIR at a new directory, or unset it for a fresh target/studyloop/runs/<run-key>)"
    )]
    Taken {
        /// The directory.
        dir: PathBuf,
        /// The run key its marker records (`unmarked` for logs with no marker).
        owner: String,
        /// This run's key.
        this: String,
    },
    /// A run directory's shard record describes another shard than this process's.
    #[error(
        "{path} records shard {existing_part} of {existing_n} cell(s), but this process of the same run is shard {this_part} of {this_n} cell(s): every process of one run must see the same partition, selection and catalogue (do not change STUDYLOOP_ACC_PARTITION or the selection between nextest's list and run phases)",
        existing_part = existing.partition.as_deref().unwrap_or("unsharded"),
        existing_n = existing.catalogue.len(),
        this_part = this.partition.as_deref().unwrap_or("unsharded"),
        this_n = this.catalogue.len()
    )]
    ShardMismatch {
        /// The shard record.
        path: PathBuf,
        /// What it says.
        existing: Box<ShardRecord>,
        /// What this process would write.
        this: Box<ShardRecord>,
    },
}
