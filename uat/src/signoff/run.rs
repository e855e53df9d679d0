//! [`run`]: one sign-off from run directories and bundles to a verdict, and on PASS the
//! redacted summary written atomically into the release directory.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use studyloop_acceptance::evidence::RunId;
use studyloop_acceptance::ledger::{RunRecords, TrialOutcome};
use studyloop_redaction::Redactor;
use studyloop_rubrics::Facts;

use super::rule::{Results, Verdict, disagreements, evaluate};
use super::summary::{SignoffParts, signoff_summary};
use super::{Pins, SignoffError, arbitration, billing, checks, claims, evidence};
use crate::bundle::Bundle;
use crate::bundle_summary::rewritten;
use crate::council::Arbitration;
use crate::inputs::{Input, classify};

/// One definition cell as the sign-off saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellLine {
    /// The cell id.
    pub id: String,
    /// Required by the definition.
    pub required: bool,
    /// Graded by the definition.
    pub graded: bool,
    /// The recorded outcome; `None` = no record.
    pub outcome: Option<TrialOutcome>,
    /// The signed-off bundle's run id.
    pub bundle: Option<String>,
}

/// A sign-off's result.
#[derive(Debug, Clone)]
pub struct SignoffReport {
    /// The sign-off's own run id.
    pub run_id: String,
    /// PASS or FAIL with every (redacted) reason.
    pub verdict: Verdict,
    /// Each definition cell.
    pub cells: Vec<CellLine>,
    /// Inputs read: (run directories, bundles).
    pub inputs: (usize, usize),
    /// One redacted note per definition cell: what was graded, by whom, or why not.
    pub notes: Vec<String>,
    /// The redacted summary (built and scanned on every verdict).
    pub summary: serde_json::Map<String, serde_json::Value>,
    /// Where the summary was written (PASS only).
    pub written: Option<PathBuf>,
    /// The directory of the bundle signed off for each cell (cell id → bundle dir):
    /// what a signed release record hashes beside the summary (the arbitrations).
    pub bundle_dirs: BTreeMap<String, PathBuf>,
}

/// Runs a sign-off over `paths`; on PASS writes the summary into `out_dir`.
///
/// # Errors
/// [`SignoffError`] when no verdict can be reached (bad input, unreadable run directory
/// or bundle, a summary that would leak, a failed write). A FAIL is not an error.
pub fn run(
    pins: &Pins,
    paths: &[PathBuf],
    redactor: &Redactor,
    out_dir: &Path,
) -> Result<SignoffReport, SignoffError> {
    let mut report = assess(pins, paths, redactor)?;
    if report.verdict.passed() {
        report.written = Some(write_summary(out_dir, &report.run_id, &report.summary)?);
    }
    Ok(report)
}

/// A sign-off over `paths` that writes nothing: the verdict and the summary as
/// [`run`] would produce them (`written` is `None`). `studyloop-uat sign` and
/// `verify --signed` recompute a run's release record through it.
///
/// # Errors
/// As [`run`], less the write.
pub fn assess(
    pins: &Pins,
    paths: &[PathBuf],
    redactor: &Redactor,
) -> Result<SignoffReport, SignoffError> {
    let inputs = classify(paths)?;
    let shards: Vec<&PathBuf> = inputs
        .iter()
        .filter_map(|i| {
            if let Input::Shard(p) = i {
                Some(p)
            } else {
                None
            }
        })
        .collect();
    let definition = &pins.definition;
    let wanted: BTreeSet<&str> = definition
        .cell_specs()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    let runs = shards
        .iter()
        .map(|d| RunRecords::read(d))
        .collect::<Result<Vec<_>, _>>()?;
    // Every line of every shard is kept: the sign-off sees all records, not a winner.
    let records = RunRecords::merge(runs);
    let mut results = Results::from_records(&records);
    let mut reasons_extra = checks::run_reasons(&records);
    // Shards of a partitioned run must add up: no cell missing, none recorded
    // differently by two shards (every cell of every shard, not only the
    // definition's: a release is not signed off over a hole in the matrix).
    reasons_extra.extend(studyloop_acceptance::ledger::merge_shards(&records).problems);
    reasons_extra.extend(disagreements(&definition.cells(), &records));
    reasons_extra.extend(claims::shard_reasons(definition, &records));

    let mut direct = Vec::new();
    for input in &inputs {
        if let Input::Bundle(dir) = input {
            direct.push(Bundle::open(dir)?);
        }
    }
    let collected = evidence::collect(definition, &records, direct, &mut results);
    reasons_extra.extend(collected.reasons);
    let bundles: BTreeMap<&str, &Bundle> = collected
        .bundles
        .iter()
        .map(|(c, b)| (c.as_str(), b))
        .collect();
    let mut loaded: BTreeMap<&str, Arbitration> = BTreeMap::new();
    for spec in definition.cell_specs().iter().filter(|c| c.graded) {
        let Some(b) = bundles.get(spec.id.as_str()) else {
            continue;
        };
        let facts = Facts {
            cell_required: spec.required,
            cell_skipped: results
                .get(&spec.id)
                .is_some_and(|r| r.outcome == TrialOutcome::Skipped),
            bundle_problems: b.problems().to_vec(),
            outcome: Some(evidence::outcome_word(b.manifest().outcome)),
            ..Facts::default()
        };
        match arbitration::read(pins, b, facts) {
            Ok(Some(checked)) => {
                for p in checked.problems {
                    reasons_extra.push(format!(
                        "the arbitration of `{}` does not match its seat replies: {p}; grade the bundle again",
                        spec.id
                    ));
                }
                loaded.insert(spec.id.as_str(), checked.effective);
            }
            Ok(None) => {}
            Err(e) => reasons_extra.push(format!(
                "the arbitration of `{}` cannot be read: {e}",
                spec.id
            )),
        }
    }
    let arbitrations: BTreeMap<&str, &Arbitration> = loaded.iter().map(|(c, a)| (*c, a)).collect();

    let mut verdict = evaluate(&definition.cells(), &results);
    verdict.reasons.extend(reasons_extra);
    verdict.reasons.extend(checks::bundle_reasons(&bundles));
    verdict
        .reasons
        .extend(billing::billing_reasons(&bundles, &arbitrations));
    // Every claim against independent evidence (issue 33 §1).
    let now = jiff::Timestamp::now();
    verdict
        .reasons
        .extend(claims::unrecorded_reasons(definition, &records, &bundles));
    verdict.reasons.extend(claims::cassette_reasons(&bundles));
    verdict
        .reasons
        .extend(claims::fidelity_reasons(&records, &bundles));
    verdict
        .reasons
        .extend(claims::real_reasons(definition, &bundles));
    verdict.reasons.extend(claims::order_reasons(
        &records,
        &bundles,
        &arbitrations,
        now,
    ));
    verdict.reasons.extend(claims::count_reasons(&arbitrations));
    let (grading, notes) = checks::grading_reasons(definition, pins, &bundles, &arbitrations);
    verdict.reasons.extend(grading);
    // Reasons and notes quote recorded messages and paths: rewrite them, then scan all.
    verdict.reasons = verdict.reasons.iter().map(|r| redactor.redact(r)).collect();
    let notes: Vec<String> = notes.iter().map(|n| redactor.redact(n)).collect();
    let note = notes.join("; ");

    let run_id = RunId::generate().to_string();
    let date = studyloop_acceptance::clock::now_rfc3339();
    let parts = SignoffParts {
        run_id: &run_id,
        date: &date,
        verdict: verdict.word(),
        reasons: &verdict.reasons,
        cells: definition.cell_specs(),
        results: wanted
            .iter()
            .filter_map(|c| results.get(c).map(|r| (*c, r)))
            .collect(),
        bundles: bundles.clone(),
        arbitrations,
        floors: definition.floors(),
        arbitration_note: &note,
        pins: [
            (pins.rubric.version(), pins.rubric.sha256()),
            (pins.rules.version(), pins.rules.sha256()),
            (definition.version(), definition.sha256()),
            (pins.roster.version(), pins.roster.sha256()),
        ],
    };
    // Manifest fields (a harness version line, a model name) are rewritten first, then
    // the allow-list and the scan prove nothing leaks.
    let summary = redactor.summary(&rewritten(signoff_summary(&parts), redactor))?;
    let cells = definition
        .cell_specs()
        .iter()
        .map(|c| CellLine {
            id: redactor.redact(&c.id),
            required: c.required,
            graded: c.graded,
            outcome: results.get(&c.id).map(|r| r.outcome),
            bundle: bundles
                .get(c.id.as_str())
                .map(|b| redactor.redact(&b.manifest().run_id)),
        })
        .collect();
    let bundle_dirs = bundles
        .iter()
        .map(|(cell, b)| ((*cell).to_owned(), b.dir().to_owned()))
        .collect();
    Ok(SignoffReport {
        run_id,
        verdict,
        cells,
        inputs: (shards.len(), inputs.len() - shards.len()),
        notes,
        summary,
        written: None,
        bundle_dirs,
    })
}

fn write_summary(
    out_dir: &Path,
    run_id: &str,
    summary: &serde_json::Map<String, serde_json::Value>,
) -> Result<PathBuf, SignoffError> {
    let fail = |path: &Path| {
        let path = path.to_owned();
        move |source| SignoffError::Write { path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(fail(out_dir))?;
    let path = out_dir.join(format!("uat-signoff-{run_id}.json"));
    // Sorted keys whatever serde_json's `preserve_order` says: the file is compared and
    // diffed by people, so its bytes must not depend on the build.
    let value = studyloop_acceptance::evidence::sorted(serde_json::Value::Object(summary.clone()));
    // A `Value` prints infallibly (alternate `Display` = `to_string_pretty`'s bytes).
    let text = format!("{value:#}\n");
    // The summary is the shareable artefact: world-readable like any release note.
    crate::atomic::write(&path, text.as_bytes(), 0o644).map_err(fail(&path))?;
    Ok(path)
}
