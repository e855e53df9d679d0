//! Merging the run directories of a partitioned run (one per shard, one set per
//! harness group) into one cell table, and naming what does not add up.
//!
//! Each directory's `shard-<tier>.json` (one per runner that wrote there: one
//! nextest invocation runs both runners under one run id) says which cells the
//! whole run answers for
//! (`catalogue`) and which are this shard's (`owned`). Shards with the same tier,
//! partition kind and total, and catalogue form one group; within it:
//! - a shard given twice, or a catalogue cell no present shard owns (its shard is
//!   missing), or an owned cell its shard recorded nothing for (cut short), is a
//!   problem naming the cells;
//! - across every group, a cell whose shards recorded different outcomes is a
//!   problem naming each shard and outcome. A cell recorded with the same
//!   outcome by two shards (a re-run shard) counts once.
//! - a rerun of failed trials (`rerun_of` names a run given here) adds later
//!   attempts: its outcomes join the cell's worst outcome (an earlier failure is
//!   never hidden) without being a conflicting verdict; a rerun given without
//!   its earlier run is a problem (alone it would hide that run's failures).
//!
//! Only an owning shard's records count, plus a results line from a shard that
//! ran a cell it does not own (that is a partition fault and must show); the
//! skip-ledger lines of cells a shard does not own (e.g. "not selected" in a
//! harness group) are display only. Directories without a shard record (written
//! before shard records) take no part.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::ledger::layout::RESULTS_LOG;
use crate::ledger::reader::{LedgerDir, RunRecords};
use crate::ledger::records::{ShardRecord, TrialOutcome};

/// The merged view of several shards.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergedCells {
    /// Each cell any shard answered for, with its outcome (the worst when shards
    /// disagree, which is also a problem).
    pub cells: BTreeMap<String, TrialOutcome>,
    /// Every way the shards do not add up, each naming cells and directories.
    pub problems: Vec<String>,
    /// How many run directories carried a shard record.
    pub shards: usize,
}

/// Shards of one partitioned run: tier, `kind:*/total`, catalogue.
type GroupKey = (String, String, Vec<String>);

/// Merges the shard records and logs that `records` read.
pub fn merge(records: &RunRecords) -> MergedCells {
    let sharded: Vec<(&LedgerDir, &ShardRecord)> = records
        .runs()
        .iter()
        .flat_map(|run| run.shards.iter().map(move |shard| (run, shard)))
        .collect();
    let mut problems = Vec::new();
    let keys: BTreeSet<&str> = records
        .runs()
        .iter()
        .filter_map(|r| r.key.as_deref())
        .collect();
    // A rerun of a run given here adds attempts to that run's cells; it is no
    // shard of any partition (its catalogue is the earlier run's failures).
    let linked = |shard: &ShardRecord| shard.rerun_of.as_deref().is_some_and(|k| keys.contains(k));
    let mut groups: BTreeMap<GroupKey, Vec<(&LedgerDir, &ShardRecord)>> = BTreeMap::new();
    for (run, shard) in sharded.iter().filter(|(_, s)| !linked(s)) {
        let kind_total = shard
            .partition
            .as_deref()
            .map(|p| format!("{}:*/{}", p.split_once(':').map_or(p, |(k, _)| k), total(p)))
            .unwrap_or_else(|| "unsharded".to_owned());
        groups
            .entry((shard.tier.clone(), kind_total, shard.catalogue.clone()))
            .or_default()
            .push((run, shard));
    }
    for ((tier, kind_total, catalogue), runs) in &groups {
        let mut by_part: BTreeMap<&str, Vec<&PathBuf>> = BTreeMap::new();
        let mut owned: BTreeSet<&str> = BTreeSet::new();
        for (run, shard) in runs {
            by_part
                .entry(shard.partition.as_deref().unwrap_or("unsharded"))
                .or_default()
                .push(&run.dir);
            owned.extend(shard.owned.iter().map(String::as_str));
        }
        for (part, dirs) in by_part.iter().filter(|(_, d)| d.len() > 1) {
            problems.push(format!(
                "{tier} shard {part} was given {} times ({}); pass each shard's run directory once",
                dirs.len(),
                join_dirs(dirs)
            ));
        }
        let missing: Vec<&str> = catalogue
            .iter()
            .map(String::as_str)
            .filter(|c| !owned.contains(c))
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{tier} ({kind_total}, {} cell(s)): {} cell(s) were run by no shard given (shards present: {}): {}; download or re-run the missing shard(s)",
                catalogue.len(),
                missing.len(),
                by_part.keys().copied().collect::<Vec<_>>().join(", "),
                quote(&missing)
            ));
        }
    }
    // Per cell, each shard's own outcome. A rerun of a run given here
    // (`rerun_of`) holds later attempts of that run's cells: they count towards
    // the cell's worst outcome but are no second verdict to conflict with.
    for (run, shard) in &sharded {
        if let Some(earlier) = shard.rerun_of.as_deref().filter(|k| !keys.contains(k)) {
            problems.push(format!(
                "{} ({}) reruns the failed trials of run {earlier}, which is not given: alone it would hide that run's failures; give the earlier run's directory too",
                shard.tier,
                run.dir.display()
            ));
        }
    }
    let mut per_cell: BTreeMap<&str, Vec<(TrialOutcome, &PathBuf)>> = BTreeMap::new();
    let mut later: BTreeMap<&str, Vec<TrialOutcome>> = BTreeMap::new();
    for (run, shard) in &sharded {
        let attempts_of_another = linked(shard);
        let mut silent = Vec::new();
        for cell in &shard.owned {
            match worst(records, cell, run, false) {
                Some(o) if attempts_of_another => later.entry(cell).or_default().push(o),
                Some(o) => per_cell.entry(cell).or_default().push((o, &run.dir)),
                None => silent.push(cell.as_str()),
            }
        }
        if !silent.is_empty() {
            problems.push(format!(
                "{} shard {} ({}) recorded nothing for {} cell(s) it owns (cut short or killed?): {}",
                shard.tier,
                shard.partition.as_deref().unwrap_or("unsharded"),
                run.dir.display(),
                silent.len(),
                quote(&silent)
            ));
        }
    }
    // A cell a directory ran although none of its records owns it.
    for run in records.runs().iter().filter(|r| !r.shards.is_empty()) {
        let owns: BTreeSet<&str> = run
            .shards
            .iter()
            .flat_map(|s| s.owned.iter().map(String::as_str))
            .collect();
        for cell in records
            .trials()
            .keys()
            .filter(|c| !owns.contains(c.as_str()))
        {
            if let Some(o) = worst(records, cell, run, true) {
                per_cell.entry(cell).or_default().push((o, &run.dir));
            }
        }
    }
    let mut cells = BTreeMap::new();
    for (cell, seen) in per_cell {
        let outcomes: BTreeSet<TrialOutcome> = seen.iter().map(|(o, _)| *o).collect();
        if outcomes.len() > 1 {
            let each: Vec<String> = seen
                .iter()
                .map(|(o, d)| format!("{} in {}", o.as_str(), d.display()))
                .collect();
            problems.push(format!(
                "cell `{cell}` has different outcomes in different shards: {}; a cell belongs to one shard (check every job used the same partition and commit)",
                each.join(", ")
            ));
        }
        let worst = outcomes
            .into_iter()
            .chain(later.remove(cell).unwrap_or_default())
            .max_by_key(|o| o.severity())
            .unwrap_or(TrialOutcome::Failed);
        cells.insert(cell.to_owned(), worst);
    }
    // A rerun's cell its earlier run does not answer for (never in this set).
    for (cell, outcomes) in later {
        let worst = outcomes
            .into_iter()
            .max_by_key(|o| o.severity())
            .unwrap_or(TrialOutcome::Failed);
        cells.insert(cell.to_owned(), worst);
    }
    MergedCells {
        cells,
        problems,
        shards: records
            .runs()
            .iter()
            .filter(|r| !r.shards.is_empty())
            .count(),
    }
}

/// The worst outcome `run`'s own lines give `cell` (only results lines when
/// `results_only`).
fn worst(
    records: &RunRecords,
    cell: &str,
    run: &LedgerDir,
    results_only: bool,
) -> Option<TrialOutcome> {
    records
        .get(cell)?
        .records
        .iter()
        .filter(|r| r.dir == run.dir)
        .filter(|r| {
            !results_only
                || r.origin.path.ends_with(RESULTS_LOG) && r.outcome != TrialOutcome::Skipped
        })
        .map(|r| r.outcome)
        .max_by_key(|o| o.severity())
}

fn total(partition: &str) -> &str {
    partition.rsplit_once('/').map_or("", |(_, n)| n)
}

fn join_dirs(dirs: &[&PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn quote(cells: &[&str]) -> String {
    cells
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
