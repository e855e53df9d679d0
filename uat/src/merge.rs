//! `studyloop-uat merge`: one cell table from the run directories of a
//! partitioned run (one per shard, any number of harness groups), for the
//! hermetic matrix the sign-off's definition does not list cell by cell.
//!
//! The table and its problems come from `acceptance::ledger::merge_shards` (the
//! same merge the sign-off adds to its reasons); `--expect DIR` also compares it
//! with an unsharded run's table, naming every cell missing, extra or with
//! another outcome. It passes only with no problem, no difference and no failed
//! cell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use studyloop_acceptance::ledger::{LedgerError, RunRecords, TrialOutcome, merge_shards};

/// What `merge` found: the lines to print and whether it passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeReport {
    /// The table, the counts and every problem, one per line.
    pub lines: Vec<String>,
    /// No problem, no difference from `--expect`, no failed cell.
    pub passed: bool,
    /// The merged cells.
    pub cells: BTreeMap<String, TrialOutcome>,
}

/// Merges `dirs`; with `expect`, compares the table with that run's.
///
/// # Errors
/// A run directory that cannot be read ([`LedgerError`]).
pub fn merge(dirs: &[PathBuf], expect: Option<&Path>) -> Result<MergeReport, LedgerError> {
    let records = RunRecords::read_all(dirs)?;
    let merged = merge_shards(&records);
    let mut problems = merged.problems.clone();
    if merged.shards < dirs.len() {
        problems.push(format!(
            "{} of {} run director(ies) have no shard record (shard-<tier>.json): they were written before partitioned runs, or not by a runner; re-run them",
            dirs.len() - merged.shards,
            dirs.len()
        ));
    }
    if let Some(base) = expect {
        let base = merge_shards(&RunRecords::read(base)?);
        for (cell, want) in &base.cells {
            match merged.cells.get(cell) {
                None => problems.push(format!(
                    "cell `{cell}` is {} in the unsharded run but absent from the shards",
                    want.as_str()
                )),
                Some(got) if got != want => problems.push(format!(
                    "cell `{cell}` is {} in the shards but {} in the unsharded run",
                    got.as_str(),
                    want.as_str()
                )),
                Some(_) => {}
            }
        }
        for cell in merged.cells.keys().filter(|c| !base.cells.contains_key(*c)) {
            problems.push(format!(
                "cell `{cell}` is in the shards but not in the unsharded run"
            ));
        }
    }
    let failed: Vec<&str> = merged
        .cells
        .iter()
        .filter(|(_, o)| **o == TrialOutcome::Failed)
        .map(|(c, _)| c.as_str())
        .collect();
    let count = |want| merged.cells.values().filter(|o| **o == want).count();
    let mut lines = vec![format!(
        "inputs: {} run director(ies), {} with a shard record",
        dirs.len(),
        merged.shards
    )];
    lines.extend(
        merged
            .cells
            .iter()
            .map(|(cell, o)| format!("  {cell:<40} {}", o.as_str())),
    );
    lines.push(format!(
        "cells: {} ({} passed, {} skipped, {} failed)",
        merged.cells.len(),
        count(TrialOutcome::Passed),
        count(TrialOutcome::Skipped),
        count(TrialOutcome::Failed)
    ));
    if !failed.is_empty() {
        problems.push(format!("failed cell(s): {}", failed.join(", ")));
    }
    lines.push(format!("problems ({}):", problems.len()));
    lines.extend(problems.iter().map(|p| format!("  - {p}")));
    Ok(MergeReport {
        lines,
        passed: problems.is_empty(),
        cells: merged.cells,
    })
}
