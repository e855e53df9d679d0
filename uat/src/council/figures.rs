//! The figures of one grading, on one line: seats scored, each unscored or absent seat
//! with its reason, how many replies were JSON objects at all, each criterion's spread
//! and each seat's call latency. Printed by the journey after grading and by the
//! sign-off beside its verdict, so a run on a local model (or any council) shows how
//! its judges behaved, not only whether the cell passed.
//!
//! Everything comes from the arbitration itself: JSON validity follows from each seat's
//! recorded status (scored and rubric-problem replies parsed; a [`ReplyError::NotJson`]
//! reason did not; a failed request has no reply), so the figures need no other file.

use std::fmt::Write as _;

use crate::council::arbitrate::{Arbitration, SeatStatus};
#[cfg(test)]
use crate::council::reply::ReplyError;

/// The start of every [`ReplyError::NotJson`] message, as recorded for the seat.
const NOT_JSON: &str = "the reply is not the required JSON object";
/// The start of a failed request's recorded reason (no reply came back).
const REQUEST_FAILED: &str = "the request failed:";
/// The start of a seat not asked because the judge budget was spent.
const NOT_ASKED: &str = "not asked:";

/// How far a recorded reason is quoted in the figures line.
const REASON_CHARS: usize = 120;

/// The figures line for `a`.
#[must_use]
pub fn line(a: &Arbitration) -> String {
    let asked = a.seats.len();
    let mut replies = 0usize;
    let mut json_valid = 0usize;
    let mut unscored = Vec::new();
    let mut latency = Vec::new();
    for seat in &a.seats {
        match &seat.status {
            SeatStatus::Scored { .. } => {
                replies += 1;
                json_valid += 1;
            }
            SeatStatus::Unscored { reason } => {
                let replied = !reason.starts_with(REQUEST_FAILED) && !reason.starts_with(NOT_ASKED);
                if replied {
                    replies += 1;
                    if !reason.starts_with(NOT_JSON) {
                        json_valid += 1;
                    }
                }
                unscored.push(format!("{} unscored ({})", seat.id, cut(reason)));
            }
            SeatStatus::Absent { reason } => {
                unscored.push(format!("{} absent ({})", seat.id, cut(reason)));
            }
        }
        if let Some(ms) = seat.elapsed_ms {
            latency.push(format!("{} {:.1} s", seat.id, ms as f64 / 1000.0));
        }
    }
    let mut out = format!(
        "council `{}`: {} of {asked} seat(s) scored; JSON valid {json_valid} of {replies} repl{}",
        a.council,
        a.scored_seats(),
        if replies == 1 { "y" } else { "ies" }
    );
    let spreads: Vec<String> = a
        .criteria
        .iter()
        .map(|(id, c)| match c.spread {
            Some(s) => format!("{id} {s}"),
            None => format!("{id} -"),
        })
        .collect();
    let _ = write!(out, "; spread {}", spreads.join(", "));
    let _ = write!(
        out,
        "; latency {}",
        if latency.is_empty() {
            "none measured".to_owned()
        } else {
            latency.join(", ")
        }
    );
    if !unscored.is_empty() {
        let _ = write!(out, "; {}", unscored.join("; "));
    }
    out
}

fn cut(reason: &str) -> String {
    match reason.char_indices().nth(REASON_CHARS) {
        Some((at, _)) => format!("{}…", &reason[..at]),
        None => reason.to_owned(),
    }
}

/// Keeps [`NOT_JSON`] in step with the error it recognises.
#[cfg(test)]
fn recognises_not_json(e: &ReplyError) -> bool {
    e.to_string().starts_with(NOT_JSON)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::council::arbitrate::{ARBITRATION_SCHEMA, CriterionResult, Pin, SeatResult};
    use crate::council::roster::Backend;

    fn seat(id: &str, elapsed_ms: Option<u64>, status: SeatStatus) -> SeatResult {
        SeatResult {
            id: id.into(),
            backend: Backend::Gateway,
            model: format!("m-{id}"),
            output_tokens: None,
            elapsed_ms,
            status,
        }
    }

    #[test]
    fn the_not_json_prefix_is_the_reply_errors() {
        let e = ReplyError::NotJson {
            detail: "x".into(),
            began: "y".into(),
        };
        assert!(recognises_not_json(&e));
        assert!(!recognises_not_json(&ReplyError::Problems(vec![
            "p".into()
        ])));
    }

    #[test]
    fn the_line_counts_scored_valid_json_spread_latency_and_reasons() {
        let pin = Pin {
            version: 1,
            sha256: "0".into(),
        };
        let mut criteria = BTreeMap::new();
        criteria.insert(
            "accuracy".to_owned(),
            CriterionResult {
                median: Some(3.0),
                spread: Some(2),
                scores: BTreeMap::new(),
                disagreeing: vec![],
            },
        );
        let a = Arbitration {
            schema_version: ARBITRATION_SCHEMA,
            bundle_run_id: "r".into(),
            cell: "journey::study_session".into(),
            manifest_digest: "d".into(),
            date: "now".into(),
            council: "local".into(),
            council_pin: pin.clone(),
            rubric_pin: pin.clone(),
            redaction_pin: pin,
            seats: vec![
                seat(
                    "a",
                    Some(2100),
                    SeatStatus::Scored {
                        scores: BTreeMap::new(),
                    },
                ),
                seat(
                    "b",
                    Some(1500),
                    SeatStatus::Unscored {
                        reason: "`accuracy` cites nothing".into(),
                    },
                ),
                seat(
                    "c",
                    Some(900),
                    SeatStatus::Unscored {
                        reason: format!("{NOT_JSON} (eof); it began \"Sure\""),
                    },
                ),
                seat(
                    "d",
                    Some(300_000),
                    SeatStatus::Unscored {
                        reason: format!("{REQUEST_FAILED} timed out"),
                    },
                ),
                seat(
                    "e",
                    None,
                    SeatStatus::Absent {
                        reason: "LITELLM_API_KEY is unset".into(),
                    },
                ),
            ],
            rejections: vec![],
            criteria,
            judge_turns: 4,
            judge_output_tokens: 10,
        };
        let line = line(&a);
        for want in [
            "council `local`: 1 of 5 seat(s) scored",
            "JSON valid 2 of 3 replies",
            "spread accuracy 2",
            "latency a 2.1 s, b 1.5 s, c 0.9 s, d 300.0 s",
            "b unscored (`accuracy` cites nothing)",
            "e absent (LITELLM_API_KEY is unset)",
        ] {
            assert!(line.contains(want), "missing {want:?} in {line}");
        }
    }
}
