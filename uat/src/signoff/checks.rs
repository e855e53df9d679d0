//! The sign-off's checks beyond the strict runner: every signed-off bundle verifies
//! against its own inventory, all come from one commit, and every graded cell has a
//! current arbitration from the right council and pins, nothing rejected, and each
//! criterion's median at or above its floor.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use studyloop_actors::llm::cassette::CassetteMode;

use studyloop_acceptance::ledger::{RUN_MARKER, RunRecords};
use studyloop_acceptance::selection::AuthMode;

use crate::bundle::Bundle;
use crate::council::Arbitration;
use crate::definition::SignoffDefinition;
use crate::signoff::Pins;

/// Reasons a run directory is not one run's: no run marker, lines stamped by another
/// run, or two directories of one run (a copy is not another shard).
pub(crate) fn run_reasons(records: &RunRecords) -> Vec<String> {
    let mut reasons = Vec::new();
    let mut keys: BTreeMap<&str, &Path> = BTreeMap::new();
    for run in records.runs() {
        let dir = run.dir.display();
        let Some(key) = run.key.as_deref() else {
            reasons.push(format!(
                "run directory {dir} has no run marker ({RUN_MARKER}): it was not written by one run of the runner (re-run the trials into a fresh directory)"
            ));
            continue;
        };
        if let Some(other) = keys.insert(key, &run.dir) {
            reasons.push(format!(
                "run directories {} and {dir} both belong to run `{key}`: a copy of a run is not another shard",
                other.display()
            ));
        }
        let foreign: Vec<String> = records
            .trials()
            .values()
            .flat_map(|t| &t.records)
            .filter(|r| r.dir == run.dir && r.run.as_deref() != Some(key))
            .map(|r| {
                format!(
                    "{} (run `{}`)",
                    r.origin,
                    r.run.as_deref().unwrap_or("none")
                )
            })
            .collect();
        if !foreign.is_empty() {
            reasons.push(format!(
                "run directory {dir} belongs to run `{key}` but holds lines of another run: {}; a run directory is never merged into",
                foreign.join(", ")
            ));
        }
    }
    reasons
}

/// Reasons found in the bundles themselves.
pub(crate) fn bundle_reasons(bundles: &BTreeMap<&str, &Bundle>) -> Vec<String> {
    let mut reasons = Vec::new();
    for (cell, bundle) in bundles {
        if !bundle.problems().is_empty() {
            reasons.push(format!(
                "bundle {} of cell `{cell}` does not match its own inventory ({}): it was altered after it was written",
                bundle.manifest().run_id,
                bundle.problems().join("; ")
            ));
        }
    }
    for (cell, bundle) in bundles {
        let m = bundle.manifest();
        if let Some(c) = m
            .cassette
            .as_ref()
            .filter(|c| c.mode == CassetteMode::Replay)
        {
            reasons.push(format!(
                "bundle {} of cell `{cell}` was replayed from cassette (sha256 {}): no model answered it live, so it cannot certify a real-auth run; run the cell live (unset STUDYLOOP_ACC_CASSETTE)",
                m.run_id,
                c.sha256.as_deref().unwrap_or("unknown")
            ));
        }
    }
    let shas: BTreeSet<&str> = bundles
        .values()
        .filter_map(|b| b.manifest().repo_sha.as_deref())
        .collect();
    if shas.len() > 1 {
        reasons.push(format!(
            "the bundles come from different commits ({}): sign off runs of one build",
            shas.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    reasons
}

/// Reasons a graded cell does not meet the definition, and one note line per cell.
pub(crate) fn grading_reasons(
    definition: &SignoffDefinition,
    pins: &Pins,
    bundles: &BTreeMap<&str, &Bundle>,
    arbitrations: &BTreeMap<&str, &Arbitration>,
) -> (Vec<String>, Vec<String>) {
    let mut reasons = Vec::new();
    let mut notes = Vec::new();
    for cell in definition.cell_specs() {
        let id = cell.id.as_str();
        if !cell.graded {
            notes.push(format!(
                "`{id}`: not graded: a mechanics check that grades nothing (the definition marks it ungraded)"
            ));
            continue;
        }
        let Some(bundle) = bundles.get(id) else {
            reasons.push(format!(
                "graded cell `{id}` has no evidence bundle to grade"
            ));
            notes.push(format!("`{id}`: no bundle, so no arbitration"));
            continue;
        };
        let Some(a) = arbitrations.get(id) else {
            reasons.push(format!(
                "graded cell `{id}` was never graded: run `studyloop-uat grade` on bundle {}",
                bundle.manifest().run_id
            ));
            notes.push(format!("`{id}`: no arbitration"));
            continue;
        };
        let before = reasons.len();
        // Whatever council graded it, a conversation with a stub model (or an unknown
        // one) is not the product teaching: the definition names the mode that counts.
        let mode = bundle.manifest().auth_mode;
        let wanted = definition.graded_auth_mode();
        if mode != Some(wanted) {
            let word = mode.map_or("unknown", AuthMode::as_str);
            reasons.push(format!(
                "`{id}` ran with auth mode `{word}`, not `{wanted}` (sign-off definition `graded_auth_mode`): the mentor's model was not a real one (stub-provider = studyloop-stub-provider), so it cannot sign off a release; run `just testuat` with STUDYLOOP_ACC_REAL_AUTH=1"
            ));
        }
        if a.manifest_digest != bundle.digest() {
            reasons.push(format!(
                "the arbitration of `{id}` graded manifest {} but the bundle's manifest is now {}: grade it again",
                a.manifest_digest,
                bundle.digest()
            ));
        }
        if a.council != definition.council() {
            reasons.push(format!(
                "`{id}` was graded by council `{}`, but this sign-off accepts only council `{}`",
                a.council,
                definition.council()
            ));
        }
        let stale = [
            (
                "council roster",
                &a.council_pin,
                pins.roster.version(),
                pins.roster.sha256(),
            ),
            (
                "rubric",
                &a.rubric_pin,
                pins.rubric.version(),
                pins.rubric.sha256(),
            ),
            (
                "redaction rules",
                &a.redaction_pin,
                pins.rules.version(),
                pins.rules.sha256(),
            ),
        ];
        for (what, pin, version, sha) in stale {
            if pin.version != version || pin.sha256 != sha {
                reasons.push(format!(
                    "`{id}` was graded against {what} v{} ({}) but the pinned {what} is v{version} ({sha}): grade it again",
                    pin.version, pin.sha256
                ));
            }
        }
        for r in &a.rejections {
            reasons.push(format!(
                "`{id}` is rejected by reject_if `{}`: {} ({})",
                r.id, r.description, r.detail
            ));
        }
        for (criterion, floor) in definition.floors() {
            match a.criteria.get(criterion).and_then(|c| c.median) {
                None => reasons.push(format!(
                    "`{id}`: no seat scored `{criterion}`, so its floor {floor} is not met"
                )),
                Some(median) if median < f64::from(*floor) => {
                    reasons.push(format!(
                        "`{id}`: `{criterion}` median {median} is below its floor {floor}"
                    ));
                }
                Some(_) => {}
            }
        }
        let verdict = if reasons.len() == before {
            "meets every floor"
        } else {
            "does not meet the definition"
        };
        notes.push(format!(
            "`{id}`: graded by council `{}`, {} of {} seat(s) scored, {} reject_if fired; {verdict} (figures: {})",
            a.council,
            a.scored_seats(),
            a.seats.len(),
            a.rejections.len(),
            crate::council::figures_line(a)
        ));
    }
    (reasons, notes)
}
