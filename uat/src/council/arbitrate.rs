//! Arbitration: from every seat's result to per-criterion medians, spreads and flagged
//! disagreements, with the rubric's `reject_if` applied first, before any average.
//!
//! Mechanical on purpose: the coordinator's judgement is the rubric, not code paths.
//! Unscored and absent seats are listed with their reasons and never enter a median.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use studyloop_rubrics::{Facts, Rejection, Rubric};

use crate::council::reply::CriterionScore;
use crate::council::roster::Backend;

/// The arbitration file's format version.
pub const ARBITRATION_SCHEMA: u32 = 1;

/// What became of one seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SeatStatus {
    /// A valid, cited score for every criterion.
    Scored {
        /// Criterion id → score.
        scores: BTreeMap<String, CriterionScore>,
    },
    /// Asked, but the answer (or the request) did not produce a valid score.
    Unscored {
        /// Every problem, in one line.
        reason: String,
    },
    /// Never asked: its credential or URL is missing.
    Absent {
        /// What is missing.
        reason: String,
    },
}

/// One seat's line in the arbitration. Read strictly (through [`SeatWire`]): serde
/// cannot refuse unknown fields beside a flattened enum, and an edited seat must not
/// pass as a graded one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SeatWire")]
pub struct SeatResult {
    /// The seat id from the roster.
    pub id: String,
    /// How it was reached.
    pub backend: Backend,
    /// The model asked.
    pub model: String,
    /// Output tokens the seat's answer used; `null` when unknown or never asked.
    pub output_tokens: Option<u64>,
    /// The seat's request, send to last byte, in milliseconds; absent when it was never
    /// asked (and in arbitrations written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// Scored, unscored or absent.
    #[serde(flatten)]
    pub status: SeatStatus,
}

/// A seat line as written, every field named (unknown ones refused).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeatWire {
    id: String,
    backend: Backend,
    model: String,
    output_tokens: Option<u64>,
    #[serde(default)]
    elapsed_ms: Option<u64>,
    status: StatusWord,
    #[serde(default)]
    scores: Option<BTreeMap<String, CriterionScore>>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StatusWord {
    Scored,
    Unscored,
    Absent,
}

impl TryFrom<SeatWire> for SeatResult {
    type Error = String;

    fn try_from(w: SeatWire) -> Result<Self, String> {
        let status = match (w.status, w.scores, w.reason) {
            (StatusWord::Scored, Some(scores), None) => SeatStatus::Scored { scores },
            (StatusWord::Unscored, None, Some(reason)) => SeatStatus::Unscored { reason },
            (StatusWord::Absent, None, Some(reason)) => SeatStatus::Absent { reason },
            _ => {
                return Err(format!(
                    "seat `{}`: a scored seat has `scores` and no `reason`; an unscored or absent one has a `reason` and no `scores`",
                    w.id
                ));
            }
        };
        Ok(Self {
            id: w.id,
            backend: w.backend,
            model: w.model,
            output_tokens: w.output_tokens,
            elapsed_ms: w.elapsed_ms,
            status,
        })
    }
}

/// One criterion over the scored seats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionResult {
    /// Median of the scored seats (mean of the middle two for an even count); `null`
    /// when no seat scored.
    pub median: Option<f64>,
    /// Highest minus lowest; `null` when no seat scored.
    pub spread: Option<u8>,
    /// Seat id → score.
    pub scores: BTreeMap<String, u8>,
    /// Seats more than one point from the median.
    pub disagreeing: Vec<String>,
}

/// A pinned file's identity as used for this grading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Its version.
    pub version: u32,
    /// Its sha256 (hex).
    pub sha256: String,
}

/// The whole arbitration of one bundle (`arbitration.json`; `ARBITRATION.md` renders it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arbitration {
    /// [`ARBITRATION_SCHEMA`].
    pub schema_version: u32,
    /// The graded bundle's run id.
    pub bundle_run_id: String,
    /// The graded cell.
    pub cell: String,
    /// `sha256:` of the bundle's manifest bytes when graded; a sign-off refuses an
    /// arbitration whose bundle has changed since.
    pub manifest_digest: String,
    /// When it was graded (RFC 3339 UTC).
    pub date: String,
    /// The council's name in the roster.
    pub council: String,
    /// The roster file's pin.
    pub council_pin: Pin,
    /// The rubric's pin.
    pub rubric_pin: Pin,
    /// The redaction rules' pin (the seats saw text rewritten by them).
    pub redaction_pin: Pin,
    /// Every seat, in roster order.
    pub seats: Vec<SeatResult>,
    /// Every `reject_if` rule that fired; any entry rejects the bundle.
    pub rejections: Vec<RejectionRecord>,
    /// Criterion id → result, in rubric order of ids.
    pub criteria: BTreeMap<String, CriterionResult>,
    /// Judge requests sent.
    pub judge_turns: u32,
    /// Judge output tokens counted (unknown counts are not added).
    pub judge_output_tokens: u64,
}

/// A fired `reject_if` rule, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RejectionRecord {
    /// Rule id.
    pub id: String,
    /// Rule description.
    pub description: String,
    /// What fired it.
    pub detail: String,
}

impl From<Rejection> for RejectionRecord {
    fn from(r: Rejection) -> Self {
        Self {
            id: r.id,
            description: r.description,
            detail: r.detail,
        }
    }
}

impl Arbitration {
    /// Whether any `reject_if` rule fired.
    #[must_use]
    pub fn rejected(&self) -> bool {
        !self.rejections.is_empty()
    }
    /// How many seats scored.
    #[must_use]
    pub fn scored_seats(&self) -> usize {
        self.seats
            .iter()
            .filter(|s| matches!(s.status, SeatStatus::Scored { .. }))
            .count()
    }
}

/// Applies `reject_if` (first) and computes each criterion's median, spread and
/// disagreements. `facts` carries what the caller knows about the bundle and cell; the
/// score-derived fields are filled in here from `seats`.
#[must_use]
pub fn arbitrate(
    rubric: &Rubric,
    seats: &[SeatResult],
    mut facts: Facts,
) -> (Vec<RejectionRecord>, BTreeMap<String, CriterionResult>) {
    let scored: Vec<(&str, &BTreeMap<String, CriterionScore>)> = seats
        .iter()
        .filter_map(|s| match &s.status {
            SeatStatus::Scored { scores } => Some((s.id.as_str(), scores)),
            _ => None,
        })
        .collect();
    facts.scored_seats = scored.len();
    facts.scores = rubric
        .criteria()
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                scored
                    .iter()
                    .filter_map(|(_, s)| s.get(&c.id).map(|x| x.score))
                    .collect(),
            )
        })
        .collect();
    // reject_if first: a veto never depends on what an average would have said.
    let rejections = rubric
        .rejections(&facts)
        .into_iter()
        .map(RejectionRecord::from)
        .collect();
    let criteria = rubric
        .criteria()
        .iter()
        .map(|c| {
            let by_seat: BTreeMap<String, u8> = scored
                .iter()
                .filter_map(|(id, s)| s.get(&c.id).map(|x| ((*id).to_owned(), x.score)))
                .collect();
            (c.id.clone(), summarise(by_seat))
        })
        .collect();
    (rejections, criteria)
}

fn summarise(scores: BTreeMap<String, u8>) -> CriterionResult {
    let mut sorted: Vec<u8> = scores.values().copied().collect();
    sorted.sort_unstable();
    let median = match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(f64::from(sorted[n / 2])),
        n => Some((f64::from(sorted[n / 2 - 1]) + f64::from(sorted[n / 2])) / 2.0),
    };
    let spread = sorted.first().zip(sorted.last()).map(|(lo, hi)| hi - lo);
    let disagreeing = median
        .map(|m| {
            scores
                .iter()
                .filter(|(_, s)| (f64::from(**s) - m).abs() > 1.0)
                .map(|(id, _)| id.clone())
                .collect()
        })
        .unwrap_or_default();
    CriterionResult {
        median,
        spread,
        scores,
        disagreeing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(scores: &[(&str, u8)]) -> CriterionResult {
        summarise(scores.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
    }

    #[test]
    fn median_spread_and_disagreement() {
        let r = result(&[("a", 4), ("b", 4), ("c", 1)]);
        assert_eq!(
            (r.median, r.spread, r.disagreeing.clone()),
            (Some(4.0), Some(3), vec!["c".to_owned()])
        );
        let r = result(&[("a", 3), ("b", 4)]);
        assert_eq!((r.median, r.spread), (Some(3.5), Some(1)));
        assert!(
            r.disagreeing.is_empty(),
            "half a point from the median is not more than one point"
        );
        let r = result(&[]);
        assert_eq!((r.median, r.spread), (None, None));
    }
}
