//! The strict runner's verdict: which cells a sign-off needs and whether the recorded
//! results (merged across every shard's results log and skip ledger) satisfy them.
//!
//! Strictness is the point: zero cells selected is a FAIL, and a required cell that is
//! missing, skipped or failed is a FAIL, each with a reason naming the cell. Outcomes are
//! compared as enum values (the reference compared by identity, so a plain "skipped"
//! string passed). Non-required cells never change the verdict. This module does not read
//! files; `RunRecords` (the acceptance crate's one ledger reader and merger) does, and
//! [`Results`] adds what a bundle's own manifest recorded, worst outcome winning.
//! No source is trusted over another: when the lines about a required cell (in one run
//! directory or across shards, skip ledger or results log) do not all say the same,
//! [`disagreements`] makes it a FAIL naming every `file:line`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use studyloop_acceptance::ledger::{LogLine, RunRecords, TrialOutcome};

// The cell type belongs to the definition that lists the cells; the rule judges them.
pub use crate::definition::Cell;

/// PASS or FAIL, with every reason for a FAIL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Every reason the sign-off cannot pass; empty means PASS.
    pub reasons: Vec<String>,
}

impl Verdict {
    /// Whether there is no reason to fail.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.reasons.is_empty()
    }

    /// `PASS` or `FAIL`.
    #[must_use]
    pub fn word(&self) -> &'static str {
        if self.passed() { "PASS" } else { "FAIL" }
    }
}

/// One cell's recorded result, from whichever source recorded the worst outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellResult {
    /// How it ended (an enum: compared by value, never by identity or string).
    pub outcome: TrialOutcome,
    /// The skip reason or failure message, if any.
    pub message: Option<String>,
    /// The evidence bundle the runner recorded, if any.
    pub bundle: Option<PathBuf>,
}

/// Recorded results per cell, merged from every source.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Results {
    cells: BTreeMap<String, CellResult>,
}

impl Results {
    /// The results and skip ledgers of every shard, as the acceptance crate's one
    /// reader merged them (the worst outcome of every line, in a run and across shards).
    /// A relative bundle path is taken relative to the shard directory that recorded it.
    #[must_use]
    pub fn from_records(records: &RunRecords) -> Self {
        let cells = records
            .trials()
            .iter()
            .map(|(trial, status)| {
                let bundle = status.bundle.as_ref().map(|b| status.source.join(b));
                (
                    trial.clone(),
                    CellResult {
                        outcome: status.outcome,
                        message: status.message.clone(),
                        bundle,
                    },
                )
            })
            .collect();
        Self { cells }
    }

    /// Adds a result from another source (a bundle's own manifest); it replaces the
    /// existing one only when its outcome is worse, so no source can hide another's
    /// failure or skip.
    pub fn record(&mut self, cell: &str, result: CellResult) {
        match self.cells.get(cell) {
            Some(existing) if rank(existing.outcome) >= rank(result.outcome) => {}
            _ => {
                self.cells.insert(cell.to_owned(), result);
            }
        }
    }

    /// Every recorded bundle path with its cell, in cell order.
    pub fn bundles(&self) -> impl Iterator<Item = (String, PathBuf)> + '_ {
        self.cells
            .iter()
            .filter_map(|(cell, r)| Some((cell.clone(), r.bundle.clone()?)))
    }

    /// One cell's result.
    #[must_use]
    pub fn get(&self, cell: &str) -> Option<&CellResult> {
        self.cells.get(cell)
    }
}

/// Worse outcomes rank higher: failed, then skipped, then passed.
fn rank(outcome: TrialOutcome) -> u8 {
    match outcome {
        TrialOutcome::Passed => 0,
        TrialOutcome::Skipped => 1,
        TrialOutcome::Failed => 2,
    }
}

/// Applies the strict rules to `results` for `cells`.
#[must_use]
pub fn evaluate(cells: &[Cell], results: &Results) -> Verdict {
    let mut reasons = Vec::new();
    if cells.is_empty() {
        reasons.push(
            "zero cells selected: the sign-off definition names no cells, so nothing was signed off".to_owned(),
        );
    } else if cells.iter().all(|cell| results.get(&cell.id).is_none()) {
        reasons.push(format!(
            "zero cells selected: none of the {} cell(s) has a recorded result (pass every shard's run directory)",
            cells.len()
        ));
    }
    for cell in cells.iter().filter(|c| c.required) {
        let reason = match results.get(&cell.id) {
            None => Some(format!(
                "required cell `{}` has no recorded result: it never ran, or its shard's run directory was not passed",
                cell.id
            )),
            Some(result) => match result.outcome {
                TrialOutcome::Passed => None,
                TrialOutcome::Skipped => Some(format!(
                    "required cell `{}` was skipped ({}): a sign-off cannot pass through skips",
                    cell.id,
                    result.message.as_deref().unwrap_or("no reason recorded")
                )),
                TrialOutcome::Failed => Some(format!(
                    "required cell `{}` failed: {}",
                    cell.id,
                    result.message.as_deref().unwrap_or("no message recorded")
                )),
            },
        };
        reasons.extend(reason);
    }
    Verdict { reasons }
}

/// One reason per required cell whose recorded lines disagree: different outcomes (a
/// `failed` then a `passed`, a skip-ledger skip and a results pass) or different bundles,
/// naming each source as `file:line`.
#[must_use]
pub(crate) fn disagreements(cells: &[Cell], records: &RunRecords) -> Vec<String> {
    let mut reasons = Vec::new();
    for cell in cells.iter().filter(|c| c.required) {
        let Some(status) = records.get(&cell.id) else {
            continue;
        };
        let all = &status.records;
        let differs =
            |f: fn(&LogLine) -> Option<&str>| all.windows(2).any(|w| f(&w[0]) != f(&w[1]));
        let outcomes = differs(|r| Some(r.outcome.as_str()));
        // Skip-ledger lines name no bundle; compare the bundles of result lines.
        let bundles = {
            let named: Vec<Option<&str>> = all
                .iter()
                .filter(|r| r.outcome != TrialOutcome::Skipped)
                .map(|r| r.bundle.as_deref())
                .collect();
            named.windows(2).any(|w| w[0] != w[1])
        };
        if !outcomes && !bundles {
            continue;
        }
        let said: Vec<String> = all
            .iter()
            .map(|r| {
                let bundle = r
                    .bundle
                    .as_deref()
                    .map_or_else(|| "no bundle".to_owned(), |b| format!("bundle {b}"));
                format!("{} says {} ({bundle})", r.origin, r.outcome.as_str())
            })
            .collect();
        reasons.push(format!(
            "sources disagree about required cell `{}`: {}; a sign-off needs every record of a cell to agree (re-run it in a fresh run directory)",
            cell.id,
            said.join(", ")
        ));
    }
    reasons
}
