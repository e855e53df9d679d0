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
/// Every problem found, joined into one reason.
pub fn parse(
    text: &str,
    rubric: &Rubric,
    citable: &BTreeSet<String>,
) -> Result<BTreeMap<String, CriterionScore>, String> {
    let json = extract_json(text);
    let reply: Reply = serde_json::from_str(json).map_err(|e| {
        format!(
            "the reply is not the required JSON object ({e}); it began {:?}",
            excerpt(text)
        )
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
        Err(problems.join("; "))
    }
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
