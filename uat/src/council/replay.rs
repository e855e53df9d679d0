//! What makes a seat's question "the same question" for a cassette: the council, the
//! seat, the cell, the rubric's pin, the bundle's outcome and the conversation graded
//! (each turn's learner and mentor text from `transcript.jsonl`).
//!
//! The seat's prompt itself cannot be the key: it carries the bundle's run id, date,
//! commit and timings, which a replayed journey writes afresh. Keyed by this identity a
//! replayed journey whose conversation came out the same gets the grades recorded for
//! it, and one whose conversation differs misses loudly.

use serde_json::{Value, json};

use crate::bundle::Bundle;

/// The journey's transcript file (`journey::record::TRANSCRIPT`; not imported, since
/// `journey` imports `council` and the crate's modules form no circles).
const TRANSCRIPT: &str = "transcript.jsonl";

/// The largest transcript read for the identity (a journey's is a few KB).
const MAX_TRANSCRIPT_BYTES: u64 = 16 << 20;

/// The identity of `seat`'s question about `bundle`.
pub(crate) fn identity(council: &str, seat: &str, rubric_sha256: &str, bundle: &Bundle) -> Value {
    let manifest = bundle.manifest();
    json!({
        "council": council,
        "seat": seat,
        "cell": manifest.cell,
        "rubric": rubric_sha256,
        "outcome": serde_json::to_value(manifest.outcome).unwrap_or(Value::Null),
        "conversation": conversation(bundle),
    })
}

/// `[{learner, mentor_reply}]` per turn; `null` when the bundle holds no readable
/// transcript (its absence is then part of the identity).
fn conversation(bundle: &Bundle) -> Value {
    let path = bundle.dir().join(TRANSCRIPT);
    let Ok(bytes) = studyloop_acceptance::private_fs::read_regular(&path, MAX_TRANSCRIPT_BYTES)
    else {
        return Value::Null;
    };
    let turns: Vec<Value> = String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(turn) => json!({"learner": turn["learner"], "mentor_reply": turn["mentor_reply"]}),
            // An unparsable line stays in the identity as it is.
            Err(_) => Value::from(l),
        })
        .collect();
    Value::Array(turns)
}
