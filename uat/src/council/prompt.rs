//! What every seat is sent: the rubric (criteria and grading instructions) as the system
//! prompt, and one user message holding the bundle's redacted summary, its inventory and
//! the text of the evidence files the criteria name, rewritten by the redaction rules.
//!
//! Nothing raw leaves the bundle: every file's text passes through the [`Redactor`]
//! (patterns plus the caller's known secret values) before it is put in a prompt.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};
use studyloop_redaction::Redactor;
use studyloop_rubrics::Rubric;

use crate::bundle::Bundle;
use crate::council::roster::EvidenceLimits;

/// The most text taken from one evidence file; the rest is cut with a marker.
pub const MAX_FILE_CHARS: usize = 48_000;
/// The most evidence text in one prompt; later files are listed as omitted.
pub const MAX_TOTAL_CHARS: usize = 160_000;

/// The caps a council without its own `evidence` key gets.
pub const DEFAULT_LIMITS: EvidenceLimits = EvidenceLimits {
    max_file_chars: MAX_FILE_CHARS,
    max_total_chars: MAX_TOTAL_CHARS,
};

/// A seat's prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatPrompt {
    /// The system prompt: role, rubric criteria and the rubric body.
    pub system: String,
    /// The single user message (JSON).
    pub user: String,
}

/// Builds the prompt every seat receives for `bundle`, with the default evidence caps.
#[must_use]
pub fn build(
    rubric: &Rubric,
    summary: &Map<String, Value>,
    bundle: &Bundle,
    redactor: &Redactor,
) -> SeatPrompt {
    build_within(rubric, summary, bundle, redactor, DEFAULT_LIMITS)
}

/// [`build`] with a council's own evidence caps.
#[must_use]
pub fn build_within(
    rubric: &Rubric,
    summary: &Map<String, Value>,
    bundle: &Bundle,
    redactor: &Redactor,
    limits: EvidenceLimits,
) -> SeatPrompt {
    let mut system = String::from(
        "You are one seat of the StudyLoop UAT council. Grade the evidence bundle in the next \
         message against the rubric below, exactly as its instructions say, and reply with the \
         JSON object it specifies and nothing else.\n\n## Criteria\n\n",
    );
    for c in rubric.criteria() {
        let _ = writeln!(
            system,
            "### {} (scale {}-{})\n{}",
            c.id,
            c.min(),
            c.max(),
            c.prompt
        );
        for (score, anchor) in &c.anchors {
            let _ = writeln!(system, "- {score}: {anchor}");
        }
        let _ = writeln!(
            system,
            "Evidence to cite (at least one): {}\n",
            c.evidence.join(", ")
        );
    }
    system.push_str(rubric.body());

    let citable = bundle.citable();
    let mut evidence = Map::new();
    let mut omitted = Vec::new();
    let mut total = 0usize;
    for path in citable
        .iter()
        .filter(|p| rubric.criteria().iter().any(|c| c.accepts_evidence(p)))
    {
        let text = read_redacted(bundle, path, redactor, limits.max_file_chars);
        let len = text.chars().count();
        if total + len > limits.max_total_chars {
            omitted.push(Value::from(path.as_str()));
            continue;
        }
        total += len;
        evidence.insert(path.clone(), Value::from(text));
    }
    let user = json!({
        "summary": summary,
        "inventory": citable,
        "evidence": evidence,
        "evidence_omitted_for_length": omitted,
    });
    SeatPrompt {
        system,
        // A `Value` prints infallibly (alternate `Display` = `to_string_pretty`'s bytes).
        user: format!("{user:#}"),
    }
}

/// The most bytes of one evidence file read for a prompt (its text is cut far shorter).
const MAX_FILE_BYTES: u64 = 64 << 20;

/// A file's text, redacted and cut to `max_chars`; a binary or unreadable file is
/// described instead of included.
fn read_redacted(bundle: &Bundle, rel: &str, redactor: &Redactor, max_chars: usize) -> String {
    // A regular file only (a FIFO planted in a bundle must not hang grading), bounded.
    let bytes = match studyloop_acceptance::private_fs::read_regular(
        &bundle.dir().join(rel),
        MAX_FILE_BYTES,
    ) {
        Ok(bytes) => bytes,
        Err(e) => return format!("[unreadable: {}]", e.kind()),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return "[binary file, not shown]".to_owned();
    };
    // Redact first, then cut, so a secret straddling the cut is still caught.
    let redacted = redactor.redact(&text);
    match redacted.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}\n[cut: the file continues]", &redacted[..at]),
        None => redacted,
    }
}
