//! `reject_if`: the rubric's veto rules, each machine-checkable from facts the
//! arbitrator has (scored seats, the bundle, the cell's record), so arbitration applies
//! them mechanically and before any average.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The run outcomes a bundle manifest can record (see
/// `docs/evidence-format.md#evidence-bundles-acceptanceevidence-one-schema-for-every-tier`); `bundle_outcome_in` may only name these. The UAT crate checks this list
/// against the evidence schema's own enum so the two cannot drift.
pub const BUNDLE_OUTCOMES: &[&str] = &[
    "completed",
    "budget-exhausted",
    "cancelled",
    "errored",
    "skipped",
];

/// One machine-checkable condition. In YAML a rule without parameters is a bare word
/// (`rule: required_cell_skipped`); one with parameters is a one-key map
/// (`rule: {criterion_score_at_most: {criterion: accuracy, score: 1}}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Rule {
    /// Fires when any scored seat gave `criterion` a score of `score` or lower.
    CriterionScoreAtMost {
        /// The criterion id.
        criterion: String,
        /// The highest score that still fires.
        score: u8,
    },
    /// Fires when the graded cell is required and was recorded as skipped.
    RequiredCellSkipped,
    /// Fires when the bundle has no manifest or a file its inventory names is missing or
    /// altered.
    BundleMissingInventoryFile,
    /// Fires when the manifest's `outcome` is one of `outcomes`.
    BundleOutcomeIn {
        /// Outcomes that reject.
        outcomes: Vec<String>,
    },
    /// Fires when fewer than `seats` seats returned a valid, cited score.
    ScoredSeatsBelow {
        /// The minimum number of scored seats.
        seats: usize,
    },
}

/// A named rule from the rubric's `reject_if` list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RejectRule {
    /// Stable id, e.g. `confidently-wrong`.
    pub id: String,
    /// Why this rejects, in words.
    pub description: String,
    /// The check.
    pub rule: Rule,
}

/// What the arbitrator knows when it applies `reject_if`.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Scores per criterion id, from scored seats only.
    pub scores: BTreeMap<String, Vec<u8>>,
    /// How many seats returned a valid, cited score.
    pub scored_seats: usize,
    /// Whether the sign-off definition requires the graded cell.
    pub cell_required: bool,
    /// Whether the cell was recorded as skipped (results or skip ledger).
    pub cell_skipped: bool,
    /// Every problem found verifying the bundle (missing manifest, missing, altered or
    /// extra file); empty means the bundle verified clean.
    pub bundle_problems: Vec<String>,
    /// The manifest's `outcome`, when there is a manifest.
    pub outcome: Option<String>,
}

/// A rule that fired, with the facts that made it fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The rule's id.
    pub id: String,
    /// The rule's description.
    pub description: String,
    /// What, concretely, fired it.
    pub detail: String,
}

impl RejectRule {
    /// Applies the rule; `Some` when it fires.
    #[must_use]
    pub fn check(&self, facts: &Facts) -> Option<Rejection> {
        let detail = match &self.rule {
            Rule::CriterionScoreAtMost { criterion, score } => {
                let low: Vec<String> = facts
                    .scores
                    .get(criterion)
                    .into_iter()
                    .flatten()
                    .filter(|s| **s <= *score)
                    .map(u8::to_string)
                    .collect();
                (!low.is_empty()).then(|| {
                    format!(
                        "{criterion} scored {} by a seat (at most {score} rejects)",
                        low.join(", ")
                    )
                })
            }
            Rule::RequiredCellSkipped => (facts.cell_required && facts.cell_skipped).then(|| {
                "the required cell was skipped, and a sign-off cannot pass through skips".to_owned()
            }),
            Rule::BundleMissingInventoryFile => {
                (!facts.bundle_problems.is_empty()).then(|| facts.bundle_problems.join("; "))
            }
            Rule::BundleOutcomeIn { outcomes } => facts
                .outcome
                .as_ref()
                .filter(|o| outcomes.contains(o))
                .map(|o| format!("the run's outcome is `{o}`")),
            Rule::ScoredSeatsBelow { seats } => (facts.scored_seats < *seats)
                .then(|| format!("{} seat(s) scored, fewer than {seats}", facts.scored_seats)),
        }?;
        Some(Rejection {
            id: self.id.clone(),
            description: self.description.clone(),
            detail,
        })
    }
}
