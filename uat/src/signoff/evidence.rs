//! Which bundle is each cell's evidence, and whether it agrees with the results.
//!
//! Every record of a cell (every line of every shard, not the last one) and every bundle
//! passed directly is a claim. A required cell needs exactly one bundle of its own: none
//! (`bundle: null`), several, or one shared with another cell is a FAIL. The bundle's
//! manifest is cross-checked against the results (cell, tier, surface, outcome, counts,
//! run id) and must name the commit it was built from on a clean tree. Every line that
//! names a bundle must record its manifest's sha256 and the manifest must still have it:
//! the inventory does not cover the manifest, so only this digest, written when the
//! bundle was sealed, catches a manifest edited afterwards.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use studyloop_acceptance::evidence::{Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{RunRecords, TrialOutcome};

use super::rule::{CellResult, Results};
use crate::bundle::Bundle;
use crate::definition::SignoffDefinition;

/// Each cell's one bundle, and every reason found on the way.
pub(crate) struct Collected {
    /// Cell id → its bundle (only cells with exactly one readable bundle).
    pub(crate) bundles: BTreeMap<String, Bundle>,
    /// Every problem, named.
    pub(crate) reasons: Vec<String>,
}

/// The word a manifest outcome is written as.
pub(crate) fn outcome_word(outcome: Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// How a manifest's outcome reads as a trial outcome (`budget-exhausted` is how an
/// LLM-driven conversation normally ends, not a failure).
pub(crate) fn as_trial(outcome: Outcome) -> TrialOutcome {
    match outcome {
        Outcome::Completed | Outcome::BudgetExhausted => TrialOutcome::Passed,
        Outcome::Skipped => TrialOutcome::Skipped,
        Outcome::Cancelled | Outcome::Errored => TrialOutcome::Failed,
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// Finds each definition cell's bundle from `records` and the bundles passed directly,
/// adds a direct bundle's own outcome for a cell no log recorded, and cross-checks.
pub(crate) fn collect(
    definition: &SignoffDefinition,
    records: &RunRecords,
    direct: Vec<Bundle>,
    results: &mut Results,
) -> Collected {
    let mut reasons = Vec::new();
    let wanted: BTreeSet<&str> = definition
        .cell_specs()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    // Cell → (canonical dir → where it was named).
    let mut claims: BTreeMap<String, BTreeMap<PathBuf, (PathBuf, String)>> = BTreeMap::new();
    let mut opened: BTreeMap<PathBuf, Bundle> = BTreeMap::new();
    // Canonical dir → every (line, digest it recorded) that names it.
    let mut recorded: BTreeMap<PathBuf, Vec<(String, Option<String>)>> = BTreeMap::new();
    for spec in definition.cell_specs() {
        let Some(status) = records.get(&spec.id) else {
            continue;
        };
        for r in &status.records {
            match &r.bundle {
                Some(b) => {
                    let dir = r.dir.join(b);
                    recorded
                        .entry(canonical(&dir))
                        .or_default()
                        .push((r.origin.to_string(), r.manifest_sha256.clone()));
                    claims
                        .entry(spec.id.clone())
                        .or_default()
                        .entry(canonical(&dir))
                        .or_insert((dir, r.origin.to_string()));
                }
                None if spec.required && r.outcome == TrialOutcome::Passed => {
                    reasons.push(format!(
                        "{} records required cell `{}` passed with no evidence bundle (bundle: null): every required cell needs its own bundle",
                        r.origin, spec.id
                    ));
                }
                None => {}
            }
        }
    }
    for b in direct {
        let cell = b.manifest().cell.clone();
        if !wanted.contains(cell.as_str()) {
            reasons.push(format!(
                "bundle {} was passed directly but records cell `{cell}`, which the sign-off definition does not name",
                b.manifest().run_id
            ));
            continue;
        }
        if results.get(&cell).is_none() {
            // A bundle passed without its run directory still recorded how its run ended.
            results.record(&cell, manifest_result(&b));
        }
        let key = canonical(b.dir());
        claims
            .entry(cell)
            .or_default()
            .entry(key.clone())
            .or_insert((b.dir().to_owned(), "passed directly".to_owned()));
        opened.insert(key, b);
    }
    let mut bundles = BTreeMap::new();
    let mut owner: BTreeMap<PathBuf, String> = BTreeMap::new();
    for spec in definition.cell_specs() {
        let id = &spec.id;
        let claimed = claims.remove(id).unwrap_or_default();
        if claimed.len() > 1 {
            let list: Vec<String> = claimed
                .values()
                .map(|(dir, from)| format!("{} ({from})", dir.display()))
                .collect();
            reasons.push(format!(
                "cell `{id}` has {} bundles ({}): the sources disagree; sign off one run per cell",
                claimed.len(),
                list.join(", ")
            ));
            continue;
        }
        let Some((key, (dir, from))) = claimed.into_iter().next() else {
            // A cell with no result is already missing; a graded one is reported as
            // having nothing to grade.
            if spec.required && !spec.graded && results.get(id).is_some() {
                reasons.push(format!(
                    "required cell `{id}` has no evidence bundle: every required cell needs its own bundle, verified by its inventory"
                ));
            }
            continue;
        };
        if let Some(other) = owner.get(&key) {
            reasons.push(format!(
                "cells `{other}` and `{id}` share one bundle ({}): every cell needs its own bundle",
                dir.display()
            ));
            continue;
        }
        owner.insert(key.clone(), id.clone());
        let bundle = match opened.remove(&key) {
            Some(b) => b,
            None => match Bundle::open(&dir) {
                Ok(b) => b,
                Err(e) => {
                    reasons.push(format!(
                        "the bundle recorded for `{id}` ({from}) cannot be read: {e}"
                    ));
                    continue;
                }
            },
        };
        reasons.extend(cross_check(id, &bundle, results.get(id)));
        let lines = recorded.get(&key).map_or(&[][..], Vec::as_slice);
        reasons.extend(digest_check(id, &bundle, lines));
        bundles.insert(id.clone(), bundle);
    }
    let mut ids: BTreeMap<&str, &str> = BTreeMap::new();
    for (cell, b) in &bundles {
        if let Some(other) = ids.insert(b.manifest().run_id.as_str(), cell) {
            reasons.push(format!(
                "cells `{other}` and `{cell}` have bundles with one run id {}: a copied bundle is not its own evidence",
                b.manifest().run_id
            ));
        }
    }
    Collected { bundles, reasons }
}

/// How a bundle's own manifest says its run ended, as a cell result.
fn manifest_result(bundle: &Bundle) -> CellResult {
    let m = bundle.manifest();
    let notes = if m.notes.is_empty() {
        String::new()
    } else {
        format!(": {}", m.notes.join("; "))
    };
    CellResult {
        outcome: as_trial(m.outcome),
        message: Some(format!(
            "bundle {} records outcome `{}`{notes}",
            m.run_id,
            outcome_word(m.outcome)
        )),
        bundle: Some(bundle.dir().to_owned()),
    }
}

/// Every line naming `bundle` that records no manifest digest, or one its manifest no
/// longer has.
fn digest_check(id: &str, bundle: &Bundle, lines: &[(String, Option<String>)]) -> Vec<String> {
    let now = bundle.digest();
    let run = &bundle.manifest().run_id;
    lines
        .iter()
        .filter_map(|(origin, digest)| match digest {
            None => Some(format!(
                "{origin} names bundle {run} of `{id}` but records no manifest_sha256: a bundle the sign-off relies on needs the digest its run recorded (run the cell again with this runner)"
            )),
            Some(d) if *d != now => Some(format!(
                "bundle {run} of `{id}`: its manifest is {now} but {origin} recorded manifest_sha256 {d}: the manifest was edited after its run; run the cell again"
            )),
            Some(_) => None,
        })
        .collect()
}

/// Every way `bundle`'s manifest disagrees with cell `id`'s result or a release.
fn cross_check(id: &str, bundle: &Bundle, result: Option<&CellResult>) -> Vec<String> {
    let m = bundle.manifest();
    let run = &m.run_id;
    let mut reasons = Vec::new();
    if m.cell != id {
        reasons.push(format!(
            "the bundle recorded for `{id}` ({run}) is cell `{}`'s bundle by its manifest: a cell's evidence is its own bundle",
            m.cell
        ));
    }
    if m.tier != Tier::Uat {
        reasons.push(format!(
            "bundle {run} of `{id}` has tier `acceptance`: a UAT sign-off takes tier `uat` bundles only"
        ));
    }
    if m.surface != Surface::Journey {
        let word = serde_json::to_value(m.surface)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        reasons.push(format!(
            "bundle {run} of `{id}` has surface `{word}`: a UAT journey's bundle has surface `journey`"
        ));
    }
    let dir_name = bundle
        .dir()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if RunId::parse(run).is_err() || *run != dir_name {
        reasons.push(format!(
            "bundle `{dir_name}` of `{id}` has manifest run id `{run}`: a bundle's run id is its directory name"
        ));
    }
    if let Some(result) = result {
        let says = as_trial(m.outcome);
        if says != result.outcome {
            reasons.push(format!(
                "sources disagree about `{id}`: the results say `{}` but bundle {run}'s manifest records outcome `{}`",
                result.outcome.as_str(),
                outcome_word(m.outcome)
            ));
        }
        if result.outcome == TrialOutcome::Passed && (m.counts.failed > 0 || m.counts.skipped > 0) {
            reasons.push(format!(
                "sources disagree about `{id}`: the results say `passed` but bundle {run}'s manifest counts {} failed and {} skipped check(s)",
                m.counts.failed, m.counts.skipped
            ));
        }
    }
    if m.repo_sha.is_none() {
        reasons.push(format!(
            "bundle {run} of `{id}` records no repo_sha: a release is signed off against one known commit (run from a git checkout with git on PATH)"
        ));
    }
    match m.dirty {
        Some(false) => {}
        Some(true) => reasons.push(format!(
            "bundle {run} of `{id}` was built from a dirty tree (dirty: true): commit the changes and run again"
        )),
        None => reasons.push(format!(
            "bundle {run} of `{id}` does not record whether its tree was dirty (dirty: null): a release needs a known clean tree"
        )),
    }
    reasons
}
