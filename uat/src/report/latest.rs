//! `studyloop-uat report --latest ROOT` (what `just report` runs): the newest
//! acceptance run and the newest UAT run under ROOT (`target/studyloop/runs`),
//! each known by the shard record its tier's runner writes in every run
//! directory (`shard-acceptance.json`, `shard-uat.json`), newest by that
//! record's modification time. One run directory may hold both records (one
//! nextest invocation runs both runners); it is then one report, not two.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use studyloop_acceptance::ledger::{SHARD_TIERS, shard_record_file};

use super::error::ReportError;

/// One run to report on, and the tiers it is the latest run of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestRun {
    /// The run directory.
    pub dir: PathBuf,
    /// `acceptance`, `uat`, or both.
    pub tiers: Vec<&'static str>,
}

/// The latest run of each tier under `root`, one entry per distinct directory.
///
/// # Errors
/// [`ReportError::NoLatest`] when `root` holds no run directory with a shard
/// record (nothing was run yet, or `root` is not a runs directory).
pub fn latest_runs(root: &Path) -> Result<Vec<LatestRun>, ReportError> {
    let entries: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    let mut out: Vec<LatestRun> = Vec::new();
    for tier in SHARD_TIERS {
        let record = shard_record_file(tier);
        let newest = entries
            .iter()
            // A symlinked run directory or record is not followed (as every read of the report).
            .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()))
            .filter_map(|d| {
                let m = std::fs::symlink_metadata(d.join(&record)).ok()?;
                m.is_file()
                    .then(|| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), d))
            })
            .max_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        let Some((_, dir)) = newest else { continue };
        match out.iter_mut().find(|r| &r.dir == dir) {
            Some(r) => r.tiers.push(tier),
            None => out.push(LatestRun {
                dir: dir.clone(),
                tiers: vec![tier],
            }),
        }
    }
    if out.is_empty() {
        return Err(ReportError::NoLatest(root.to_owned()));
    }
    Ok(out)
}
