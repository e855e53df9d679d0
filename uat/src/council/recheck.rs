//! Re-deriving an arbitration at sign-off: `arbitration.json` is a record of what the
//! council said, not a verdict to trust. Every derived field (each seat's status, the
//! `reject_if` hits, each criterion's median, spread and disagreements) is rebuilt from
//! the seat replies kept beside it (`seats/<id>.txt`) with the pinned rubric and the one
//! arbitration function ([`arbitrate`]), and every field that differs is named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use studyloop_rubrics::{Facts, Rubric};

use crate::council::arbitrate::{
    Arbitration, CriterionResult, RejectionRecord, SeatResult, SeatStatus, arbitrate,
};
use crate::council::reply;
use crate::council::roster::{Backend, Council};

/// The most bytes a seat reply or `arbitration.json` may hold (a reply is capped by the
/// council's `max_reply_tokens`, far below this).
pub const MAX_ARBITRATION_BYTES: u64 = 4 << 20;

/// What the sign-off recomputed.
#[derive(Debug, Clone)]
pub struct Rechecked {
    /// Every way the stored arbitration differs from its seat replies (empty = none).
    pub problems: Vec<String>,
    /// The stored arbitration with its seats, `reject_if` hits and criteria replaced by
    /// what the replies give: the only one a verdict may use.
    pub effective: Arbitration,
}

/// Reads `dir/seats/<id>.txt` for every seat of `council` (a regular file only; a
/// missing one is `None`).
///
/// # Errors
/// [`ReplyReadError`]: a reply that exists but cannot be read (a FIFO, a symlink, too
/// large) or is not UTF-8, named.
pub fn read_replies(
    dir: &Path,
    council: &Council,
) -> Result<BTreeMap<String, String>, ReplyReadError> {
    let mut out = BTreeMap::new();
    for seat in &council.seats {
        let path = dir.join("seats").join(format!("{}.txt", seat.id));
        match studyloop_acceptance::private_fs::read_regular(&path, MAX_ARBITRATION_BYTES) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| ReplyReadError::NotUtf8 { path: path.clone() })?;
                out.insert(seat.id.clone(), text);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(ReplyReadError::Read { path, source }),
        }
    }
    Ok(out)
}

/// A stored seat reply that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ReplyReadError {
    /// Not a readable regular file within the size bound (a FIFO, a symlink, too large).
    #[error("seat reply {} cannot be read: {source}; grade the bundle again", path.display())]
    Read {
        /// The reply file.
        path: std::path::PathBuf,
        /// The refusal or I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Not UTF-8: not a reply this crate wrote.
    #[error("seat reply {} is not UTF-8 (it was edited); grade the bundle again", path.display())]
    NotUtf8 {
        /// The reply file.
        path: std::path::PathBuf,
    },
}

/// Rebuilds `stored`'s derived fields from `replies` (seat id → reply text) for the
/// seats of `council`, scoring against `rubric` with `citable` the bundle's paths.
#[must_use]
pub fn recheck(
    rubric: &Rubric,
    council: &Council,
    stored: &Arbitration,
    replies: &BTreeMap<String, String>,
    citable: &BTreeSet<String>,
    facts: Facts,
) -> Rechecked {
    let mut problems = Vec::new();
    let line =
        |id: &str, backend: Backend, model: &str| format!("{id} ({} {model})", backend.as_str());
    let want: Vec<String> = council
        .seats
        .iter()
        .map(|s| line(&s.id, s.backend, &s.model))
        .collect();
    let have: Vec<String> = stored
        .seats
        .iter()
        .map(|s| line(&s.id, s.backend, &s.model))
        .collect();
    if want != have {
        problems.push(format!(
            "its seats are [{}], not the council's seats [{}]",
            have.join(", "),
            want.join(", ")
        ));
    }
    let mut rebuilt = Vec::new();
    for seat in &council.seats {
        let recorded = stored.seats.iter().find(|s| s.id == seat.id);
        let status = match replies.get(&seat.id) {
            Some(text) => match reply::parse(text, rubric, citable) {
                Ok(scores) => {
                    let same = matches!(
                        recorded.map(|r| &r.status),
                        Some(SeatStatus::Scored { scores: s }) if same_scores(s, &scores)
                    );
                    if !same {
                        problems.push(format!(
                            "seat `{}` is recorded as {} but its reply scores {}",
                            seat.id,
                            recorded.map_or("missing".to_owned(), |r| describe(&r.status)),
                            describe(&SeatStatus::Scored {
                                scores: scores.clone()
                            })
                        ));
                    }
                    SeatStatus::Scored { scores }
                }
                Err(reason) => {
                    if !matches!(
                        recorded.map(|r| &r.status),
                        Some(SeatStatus::Unscored { .. })
                    ) {
                        problems.push(format!(
                            "seat `{}` is recorded as {} but its reply does not score: {reason}",
                            seat.id,
                            recorded.map_or("missing".to_owned(), |r| describe(&r.status)),
                        ));
                    }
                    SeatStatus::Unscored {
                        reason: reason.to_string(),
                    }
                }
            },
            None => match recorded.map(|r| &r.status) {
                Some(SeatStatus::Scored { .. }) | None => {
                    if let Some(r) = recorded {
                        problems.push(format!(
                            "seat `{}` is recorded as {} but its reply seats/{}.txt is missing",
                            seat.id,
                            describe(&r.status),
                            seat.id
                        ));
                    }
                    SeatStatus::Absent {
                        reason: "no reply kept beside the arbitration".to_owned(),
                    }
                }
                Some(other) => other.clone(),
            },
        };
        rebuilt.push(SeatResult {
            id: seat.id.clone(),
            backend: seat.backend,
            model: seat.model.clone(),
            output_tokens: recorded.and_then(|r| r.output_tokens),
            elapsed_ms: recorded.and_then(|r| r.elapsed_ms),
            status,
        });
    }
    let (rejections, criteria) = arbitrate(rubric, &rebuilt, facts);
    let ids = |r: &[RejectionRecord]| r.iter().map(|x| x.id.clone()).collect::<BTreeSet<_>>();
    if ids(&rejections) != ids(&stored.rejections) {
        problems.push(format!(
            "it records reject_if hits [{}] but the seat replies give [{}]",
            ids(&stored.rejections)
                .into_iter()
                .collect::<Vec<_>>()
                .join(", "),
            ids(&rejections).into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let keys: BTreeSet<&String> = criteria.keys().chain(stored.criteria.keys()).collect();
    for key in keys {
        let (got, want) = (stored.criteria.get(key), criteria.get(key));
        let field = |f: fn(&CriterionResult) -> String| {
            (
                got.map_or("absent".to_owned(), f),
                want.map_or("absent".to_owned(), f),
            )
        };
        for (name, (a, b)) in [
            ("median", field(|c| format!("{:?}", c.median))),
            ("spread", field(|c| format!("{:?}", c.spread))),
            ("scores", field(|c| format!("{:?}", c.scores))),
            ("disagreeing", field(|c| format!("{:?}", c.disagreeing))),
        ] {
            if a != b {
                problems.push(format!(
                    "its `{key}` {name} is {a} but the seat replies give {b}"
                ));
            }
        }
    }
    let effective = Arbitration {
        seats: rebuilt,
        rejections,
        criteria,
        ..stored.clone()
    };
    Rechecked {
        problems,
        effective,
    }
}

fn same_scores(
    a: &BTreeMap<String, reply::CriterionScore>,
    b: &BTreeMap<String, reply::CriterionScore>,
) -> bool {
    a.len() == b.len()
        && a.iter().all(|(k, x)| {
            b.get(k)
                .is_some_and(|y| x.score == y.score && x.citations == y.citations)
        })
}

fn describe(status: &SeatStatus) -> String {
    match status {
        SeatStatus::Scored { scores } => {
            let s: Vec<String> = scores
                .iter()
                .map(|(k, v)| format!("{k} {}", v.score))
                .collect();
            format!("scored ({})", s.join(", "))
        }
        SeatStatus::Unscored { .. } => "unscored".to_owned(),
        SeatStatus::Absent { .. } => "absent".to_owned(),
    }
}
