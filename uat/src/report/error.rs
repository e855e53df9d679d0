//! [`ReportError`]: why no report was written. A leaf, so the builder and the files
//! it calls (exports, compare, latest) name it without importing the builder.

use std::path::PathBuf;

use studyloop_acceptance::ledger::LedgerError;

/// Why no report was written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// No run directory was given.
    #[error(
        "no run directory given; pass one or more (e.g. target/studyloop/runs/<run-key>), or run `just report` for the latest"
    )]
    NoRuns,
    /// `--latest` found no run directory with a shard record.
    #[error("no acceptance or UAT run under {}: no directory there holds shard-acceptance.json or shard-uat.json (run `just testacc` or `just testuat` first, or pass run directories)", .0.display())]
    NoLatest(PathBuf),
    /// A run directory could not be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The output directory is unusable.
    #[error("cannot write the report to {}: {detail} (pass --out with a new or empty directory that is not a symlink)", path.display())]
    Out {
        /// The path concerned.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
}
