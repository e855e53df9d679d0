//! What `studyloop-uat signoff` was given: run directories (one per nextest shard, holding
//! `results.jsonl` and/or `skip-ledger.jsonl`) and evidence bundles (holding
//! `manifest.json`), told apart by their contents, never by their names.

use std::path::{Path, PathBuf};

use studyloop_acceptance::evidence::MANIFEST_NAME;
use studyloop_acceptance::ledger::{RESULTS_LOG, RUN_MARKER, SKIP_LEDGER};

/// One sign-off input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A run directory: its results log and skip ledger.
    Shard(PathBuf),
    /// An evidence bundle.
    Bundle(PathBuf),
}

/// Why a path is not a sign-off input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// Nothing was passed.
    #[error(
        "no inputs: pass one or more run directories (target/studyloop/runs/<run-key>) or evidence bundles"
    )]
    Empty,
    /// The path is not a directory.
    #[error("`{}` is not a directory; pass a run directory or an evidence bundle directory", .0.display())]
    NotADirectory(PathBuf),
    /// The same directory was passed twice (under any spelling).
    #[error(
        "`{}` was passed more than once: a run directory holds one run and a bundle one cell's run; pass each once",
        .0.display()
    )]
    Duplicate(PathBuf),
    /// The directory holds neither a manifest nor a results log or skip ledger.
    #[error(
        "`{}` is neither an evidence bundle (no {MANIFEST_NAME}) nor a run directory (no {RESULTS_LOG} or {SKIP_LEDGER}); \
         pass the directory the runner wrote",
        .0.display()
    )]
    Unrecognised(PathBuf),
}

/// Classifies every path; the first unusable one is an error.
///
/// # Errors
/// [`InputError`] naming the path and what was expected.
pub(crate) fn classify(paths: &[PathBuf]) -> Result<Vec<Input>, InputError> {
    if paths.is_empty() {
        return Err(InputError::Empty);
    }
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !seen.insert(key) {
            return Err(InputError::Duplicate(path.clone()));
        }
    }
    paths.iter().map(|p| classify_one(p)).collect()
}

/// Whether `dir` has an entry called `name`, of any type: a FIFO or symlink planted in
/// place of a file still decides what the directory is, and its reader then names it.
fn has(dir: &Path, name: &str) -> bool {
    std::fs::symlink_metadata(dir.join(name)).is_ok()
}

fn classify_one(path: &Path) -> Result<Input, InputError> {
    if !path.is_dir() {
        return Err(InputError::NotADirectory(path.to_owned()));
    }
    if has(path, MANIFEST_NAME) {
        Ok(Input::Bundle(path.to_owned()))
    } else if has(path, RESULTS_LOG) || has(path, SKIP_LEDGER) || has(path, RUN_MARKER) {
        Ok(Input::Shard(path.to_owned()))
    } else {
        Err(InputError::Unrecognised(path.to_owned()))
    }
}
