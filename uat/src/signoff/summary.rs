//! The sign-off summary: the only artefact that leaves the private evidence, written to
//! `releases/`. Built from allow-listed fields only (the same run facts as a bundle's
//! summary) and then scanned by the redaction rules; `releases/uat-signoff-template.md`
//! documents its shape.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use studyloop_acceptance::ledger::TrialOutcome;

use super::rule::CellResult;
use crate::bundle::Bundle;
use crate::bundle_summary::{SUMMARY_SCHEMA, run_facts};
use crate::council::Arbitration;
use crate::definition::CellSpec;

/// Everything the sign-off summary is assembled from.
pub(crate) struct SignoffParts<'a> {
    /// The sign-off's own run id.
    pub run_id: &'a str,
    /// When the sign-off ran (RFC 3339 UTC).
    pub date: &'a str,
    /// `PASS` or `FAIL`.
    pub verdict: &'a str,
    /// Every FAIL reason, already redacted.
    pub reasons: &'a [String],
    /// The definition's cells.
    pub cells: &'a [CellSpec],
    /// Recorded result per cell.
    pub results: BTreeMap<&'a str, &'a CellResult>,
    /// The bundle signed off for each cell.
    pub bundles: BTreeMap<&'a str, &'a Bundle>,
    /// The arbitration of each graded cell that has one.
    pub arbitrations: BTreeMap<&'a str, &'a Arbitration>,
    /// Criterion → floor.
    pub floors: &'a BTreeMap<String, u8>,
    /// The note on what was and was not graded, already redacted.
    pub arbitration_note: &'a str,
    /// `(version, sha256)` of the rubric, redaction rules, sign-off definition, roster.
    pub pins: [(u32, &'a str); 4],
}

/// The candidate sign-off summary (before the redaction scan).
#[must_use]
pub(crate) fn signoff_summary(p: &SignoffParts<'_>) -> Value {
    let mut journeys = Map::new();
    for cell in p.cells {
        let mut entry = run_facts(p.bundles.get(cell.id.as_str()).map(|b| b.manifest()));
        entry.insert("required".into(), Value::from(cell.required));
        entry.insert("graded".into(), Value::from(cell.graded));
        let outcome = p.results.get(cell.id.as_str()).map(|r| r.outcome);
        entry.insert(
            "outcome".into(),
            outcome.map_or(Value::Null, |o: TrialOutcome| Value::from(o.as_str())),
        );
        journeys.insert(cell.id.clone(), Value::Object(entry));
    }
    let mut scores = Map::new();
    for (cell, arbitration) in &p.arbitrations {
        let mut per = Map::new();
        for (criterion, result) in &arbitration.criteria {
            per.insert(
                criterion.clone(),
                json!({
                    "median": result.median,
                    "spread": result.spread,
                    "floor": p.floors.get(criterion),
                    "seats_scored": result.scores.len(),
                    "disagreeing": result.disagreeing,
                }),
            );
        }
        scores.insert((*cell).to_owned(), Value::Object(per));
    }
    let digests: Map<String, Value> = p
        .bundles
        .values()
        .map(|b| (b.manifest().run_id.clone(), Value::from(b.digest())))
        .collect();
    let shas: Vec<&str> = p
        .bundles
        .values()
        .filter_map(|b| b.manifest().repo_sha.as_deref())
        .collect();
    let repo_sha = match shas.first() {
        Some(first) if shas.iter().all(|s| s == first) => Value::from(*first),
        _ => Value::Null,
    };
    let dirty: Vec<Option<bool>> = p.bundles.values().map(|b| b.manifest().dirty).collect();
    let dirty = if dirty.contains(&Some(true)) {
        Value::from(true)
    } else if !dirty.is_empty() && dirty.iter().all(|d| *d == Some(false)) {
        Value::from(false)
    } else {
        Value::Null
    };
    let [rubric, redaction, signoff, council] = p.pins;
    json!({
        "schema_version": SUMMARY_SCHEMA,
        "run_id": p.run_id,
        "date": p.date,
        "verdict": p.verdict,
        "reasons": p.reasons,
        "repo_sha": repo_sha,
        "dirty": dirty,
        "journeys": journeys,
        "per_criterion_scores": scores,
        "arbitration_note": p.arbitration_note,
        "private_bundle_digest": digests,
        "rubric_version": rubric.0.to_string(),
        "rubric_hash": rubric.1,
        "redaction_version": redaction.0.to_string(),
        "redaction_hash": redaction.1,
        "signoff_version": signoff.0.to_string(),
        "signoff_hash": signoff.1,
        "council_version": council.0.to_string(),
        "council_hash": council.1,
    })
}
