//! Parsing and checking one seat's reply: `{"scores": {criterion: {score, citations,
//! rationale}}}` with every rubric criterion present, each score on its scale, and every
//! score cited with files from the bundle's inventory, at least one of them evidence the
//! criterion names.
//!
//! Any problem makes the whole seat unscored, with every problem listed: an unparseable or
//! uncited answer is a seat that did not grade, never a silent minimum.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use studyloop_rubrics::Rubric;

/// One criterion's score from one seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionScore {
    /// The score, on the criterion's scale.
    pub score: u8,
    /// Bundle-relative paths supporting it.
    pub citations: Vec<String>,
    /// Why, in a sentence or two.
    pub rationale: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    scores: BTreeMap<String, CriterionScore>,
}

/// Parses `text` and checks it against `rubric` and the bundle's citable paths.
///
/// # Errors
/// [`ReplyError`]: not the JSON object, or every problem found (its message joins them
/// into the one reason recorded for the seat).
pub fn parse(
    text: &str,
    rubric: &Rubric,
    citable: &BTreeSet<String>,
) -> Result<BTreeMap<String, CriterionScore>, ReplyError> {
    let json = extract_json(text);
    let reply: Reply = serde_json::from_str(json).map_err(|e| ReplyError::NotJson {
        detail: e.to_string(),
        began: excerpt(text),
    })?;
    let mut problems = Vec::new();
    for criterion in rubric.criteria() {
        let Some(score) = reply.scores.get(&criterion.id) else {
            problems.push(format!("`{}` was not scored", criterion.id));
            continue;
        };
        if !(criterion.min()..=criterion.max()).contains(&score.score) {
            problems.push(format!(
                "`{}` scored {}, outside its scale [{}, {}]",
                criterion.id,
                score.score,
                criterion.min(),
                criterion.max()
            ));
        }
        if score.citations.is_empty() {
            problems.push(format!("`{}` cites nothing", criterion.id));
        }
        let unknown: Vec<&str> = score
            .citations
            .iter()
            .filter(|c| !citable.contains(*c))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            problems.push(format!(
                "`{}` cites files not in the bundle inventory: {}",
                criterion.id,
                unknown.join(", ")
            ));
        }
        if !score.citations.is_empty()
            && !score
                .citations
                .iter()
                .any(|c| citable.contains(c) && criterion.accepts_evidence(c))
        {
            problems.push(format!(
                "`{}` cites none of its evidence ({})",
                criterion.id,
                criterion.evidence.join(", ")
            ));
        }
        if score.rationale.trim().is_empty() {
            problems.push(format!("`{}` has no rationale", criterion.id));
        }
    }
    for extra in reply
        .scores
        .keys()
        .filter(|k| rubric.criterion(k).is_none())
    {
        problems.push(format!("`{extra}` is not a rubric criterion"));
    }
    if problems.is_empty() {
        Ok(reply.scores)
    } else {
        Err(ReplyError::Problems(problems))
    }
}

/// The JSON Schema of a usable reply for `rubric` and a bundle whose citable files are
/// `citable`: every criterion required, each score an integer on its scale, at least one
/// citation drawn from the inventory, a rationale; nothing else. Sent to seats that ask
/// for structured output, so a grammar-constrained model can only cite real files.
#[must_use]
pub fn json_schema(rubric: &Rubric, citable: &BTreeSet<String>) -> serde_json::Value {
    let criterion = |c: &studyloop_rubrics::Criterion| {
        serde_json::json!({
            "type": "object",
            "properties": {
                // An enum, not minimum/maximum: llama.cpp's schema-to-grammar step does
                // not enforce integer bounds (a constrained 135M seat scored 0 on 1-5).
                "score": {"type": "integer", "enum": (c.min()..=c.max()).collect::<Vec<u8>>()},
                "citations": {
                    "type": "array",
                    "items": {"type": "string", "enum": citable},
                    "minItems": 1,
                },
                "rationale": {"type": "string"},
            },
            "required": ["score", "citations", "rationale"],
            "additionalProperties": false,
        })
    };
    let properties: serde_json::Map<String, serde_json::Value> = rubric
        .criteria()
        .iter()
        .map(|c| (c.id.clone(), criterion(c)))
        .collect();
    let required: Vec<&str> = rubric.criteria().iter().map(|c| c.id.as_str()).collect();
    serde_json::json!({
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }
        },
        "required": ["scores"],
        "additionalProperties": false,
    })
}

/// Why a seat's reply was not a usable score sheet. The message is the reason recorded
/// for the unscored seat (and compared again when a sign-off rechecks the arbitration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// Not the JSON object the prompt asks for.
    #[error("the reply is not the required JSON object ({detail}); it began {began:?}")]
    NotJson {
        /// The JSON parser's message.
        detail: String,
        /// The reply's first characters (already redacted).
        began: String,
    },
    /// The JSON parsed but breaks the rubric: every problem, in criterion order.
    #[error("{}", .0.join("; "))]
    Problems(Vec<String>),
}

/// The JSON inside `text`: the whole text, or the body of its first fenced code block
/// (models often wrap JSON in ```json fences even when told not to).
fn extract_json(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(start) = trimmed.find("```") else {
        return trimmed;
    };
    let after = &trimmed[start + 3..];
    let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
    let body = &after[body_start..];
    body.find("```").map_or(trimmed, |end| body[..end].trim())
}

fn excerpt(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::extract_json;

    #[test]
    fn fenced_json_is_unwrapped() {
        assert_eq!(extract_json(" {\"a\":1} "), "{\"a\":1}");
        assert_eq!(
            extract_json("Here:\n```json\n{\"a\":1}\n```\n"),
            "{\"a\":1}"
        );
        assert_eq!(extract_json("```\n{}\n```"), "{}");
        assert_eq!(extract_json("``` unterminated"), "``` unterminated");
    }
}
