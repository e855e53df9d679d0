//! `studyloop-uat signoff`: merges every shard's results and skip ledger (and what
//! bundles passed directly recorded), applies the strict runner, checks the bundles and
//! the graded cells' arbitrations against the pinned definition, and produces the
//! redacted summary, written atomically to the release directory on PASS only (a failed
//! sign-off is not a release record).

mod checks;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use studyloop_acceptance::evidence::{self, Outcome, RunId};
use studyloop_acceptance::ledger::{LedgerError, RunRecords, TrialOutcome};
use studyloop_redaction::{RedactionError, RedactionRules, Redactor};
use studyloop_rubrics::{Rubric, RubricError};

use crate::bundle::{Bundle, BundleError, arbitration_dir_for};
use crate::council::{ARBITRATION_JSON, Arbitration, Roster};
use crate::definition::SignoffDefinition;
use crate::inputs::{Input, InputError, classify};
use crate::pinned_yaml::PinnedFileError;
use crate::strict::{CellResult, Results, Verdict, evaluate};
use crate::summary::{SignoffParts, signoff_summary};

/// Why a sign-off could not reach a verdict at all (distinct from a FAIL verdict).
#[derive(Debug, thiserror::Error)]
pub enum SignoffError {
    /// A pinned file is malformed, unregistered or tampered.
    #[error(transparent)]
    Pinned(#[from] PinnedFileError),
    /// The rubric could not be loaded.
    #[error(transparent)]
    Rubric(#[from] RubricError),
    /// The redaction rules could not be loaded, or the summary still leaks.
    #[error(transparent)]
    Redaction(#[from] RedactionError),
    /// The definition names a council the roster lacks.
    #[error(
        "the sign-off definition names council `{name}`, which the roster does not declare (known: {known})"
    )]
    UnknownCouncil {
        /// The name in the definition.
        name: String,
        /// The roster's council names.
        known: String,
    },
    /// An input path is unusable.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A run directory could not be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// A bundle passed directly could not be read.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// The summary could not be written.
    #[error("cannot write the summary to `{}`: {source}; check --out is a writable directory", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Every pinned file a sign-off depends on, loaded and cross-checked.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The redaction rules.
    pub rules: RedactionRules,
    /// The rubric.
    pub rubric: Rubric,
    /// The sign-off definition.
    pub definition: SignoffDefinition,
    /// The council roster.
    pub roster: Roster,
}

impl Pins {
    /// The files shipped with the crates, each checked against its pin.
    ///
    /// # Errors
    /// The first file that fails to load, by name.
    pub fn load_default() -> Result<Self, SignoffError> {
        Self::new(
            RedactionRules::load_default()?,
            Rubric::load_default()?,
            SignoffDefinition::load_default()?,
            Roster::load_default()?,
        )
    }

    /// Cross-checks the definition against the rubric and roster.
    ///
    /// # Errors
    /// [`SignoffError`] when a floor does not fit the rubric or the council is unknown.
    pub fn new(
        rules: RedactionRules,
        rubric: Rubric,
        definition: SignoffDefinition,
        roster: Roster,
    ) -> Result<Self, SignoffError> {
        definition.check_against(&rubric)?;
        roster
            .council(definition.council())
            .map_err(|known| SignoffError::UnknownCouncil {
                name: definition.council().to_owned(),
                known,
            })?;
        Ok(Self {
            rules,
            rubric,
            definition,
            roster,
        })
    }
}

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
    // Each shard is read on its own first so that every bundle any shard recorded is
    // checked, even for a cell whose merged outcome came from another shard.
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
    let recorded: Vec<PathBuf> = runs
        .iter()
        .flat_map(|run| {
            Results::from_records(run)
                .bundles()
                .filter(|(cell, _)| wanted.contains(cell.as_str()))
                .map(|(_, dir)| dir)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut results = Results::from_records(&RunRecords::merge(runs));

    // Bundles: those passed directly, and those the results log names for our cells.
    let mut found: Vec<(PathBuf, Result<Bundle, BundleError>)> = Vec::new();
    for input in &inputs {
        if let Input::Bundle(dir) = input {
            found.push((dir.clone(), Ok(Bundle::open(dir)?)));
        }
    }
    for dir in recorded {
        let bundle = Bundle::open(&dir);
        found.push((dir, bundle));
    }
    let mut reasons_extra = Vec::new();
    let mut by_cell: BTreeMap<String, Vec<Bundle>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (dir, bundle) in found {
        match bundle {
            Ok(b) => {
                let key = std::fs::canonicalize(&dir).unwrap_or(dir);
                if wanted.contains(b.manifest().cell.as_str()) && seen.insert(key) {
                    by_cell
                        .entry(b.manifest().cell.clone())
                        .or_default()
                        .push(b);
                }
            }
            Err(e) => reasons_extra.push(format!("a recorded bundle cannot be read: {e}")),
        }
    }
    // A bundle passed without its run directory still recorded how its run ended.
    for (cell, list) in &by_cell {
        if results.get(cell).is_none() {
            for b in list {
                results.record(cell, manifest_result(b));
            }
        }
    }
    let mut bundles: BTreeMap<&str, &Bundle> = BTreeMap::new();
    for (cell, list) in &by_cell {
        if let [one] = list.as_slice() {
            bundles.insert(cell.as_str(), one);
        } else {
            let ids: Vec<&str> = list.iter().map(|b| b.manifest().run_id.as_str()).collect();
            reasons_extra.push(format!(
                "cell `{cell}` has {} bundles ({}): sign off one run per cell",
                ids.len(),
                ids.join(", ")
            ));
        }
    }
    let mut loaded: BTreeMap<&str, Arbitration> = BTreeMap::new();
    for (cell, b) in &bundles {
        match read_arbitration(b.dir()) {
            Ok(Some(a)) => {
                loaded.insert(cell, a);
            }
            Ok(None) => {}
            Err(e) => {
                reasons_extra.push(format!("the arbitration of `{cell}` cannot be read: {e}"))
            }
        }
    }
    let arbitrations: BTreeMap<&str, &Arbitration> = loaded.iter().map(|(c, a)| (*c, a)).collect();

    let mut verdict = evaluate(&definition.cells(), &results);
    verdict.reasons.extend(reasons_extra);
    verdict.reasons.extend(checks::bundle_reasons(&bundles));
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
    let summary = redactor.summary(&signoff_summary(&parts))?;
    let cells = definition
        .cell_specs()
        .iter()
        .map(|c| CellLine {
            id: c.id.clone(),
            required: c.required,
            graded: c.graded,
            outcome: results.get(&c.id).map(|r| r.outcome),
            bundle: bundles
                .get(c.id.as_str())
                .map(|b| b.manifest().run_id.clone()),
        })
        .collect();
    let written = if verdict.passed() {
        Some(write_summary(out_dir, &run_id, &summary)?)
    } else {
        None
    };
    Ok(SignoffReport {
        run_id,
        verdict,
        cells,
        inputs: (shards.len(), inputs.len() - shards.len()),
        notes,
        summary,
        written,
    })
}

/// How a bundle's own manifest says its run ended, as a cell result.
fn manifest_result(bundle: &Bundle) -> CellResult {
    let m = bundle.manifest();
    // `budget-exhausted` is how an LLM-driven conversation normally ends, not a failure.
    let outcome = match m.outcome {
        Outcome::Completed | Outcome::BudgetExhausted => TrialOutcome::Passed,
        Outcome::Skipped => TrialOutcome::Skipped,
        Outcome::Cancelled | Outcome::Errored => TrialOutcome::Failed,
    };
    let word = serde_json::to_value(m.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    CellResult {
        outcome,
        message: Some(format!(
            "bundle {} records outcome `{word}`{}",
            m.run_id,
            notes_suffix(&m.notes)
        )),
        bundle: Some(bundle.dir().to_owned()),
    }
}

fn notes_suffix(notes: &[String]) -> String {
    if notes.is_empty() {
        String::new()
    } else {
        format!(": {}", notes.join("; "))
    }
}

/// The arbitration beside the bundle at `dir`, if it was graded.
fn read_arbitration(dir: &Path) -> Result<Option<Arbitration>, String> {
    let path = arbitration_dir_for(dir).join(ARBITRATION_JSON);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("{e} (it was edited; grade the bundle again)"))
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
    let value = evidence::sorted(serde_json::Value::Object(summary.clone()));
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    // The summary is the shareable artefact: world-readable like any release note.
    crate::atomic::write(&path, text.as_bytes(), 0o644).map_err(fail(&path))?;
    Ok(path)
}
