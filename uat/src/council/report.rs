//! `ARBITRATION.md`: the human-readable rendering of an [`Arbitration`], written beside
//! the private bundle. Seat-supplied text (rationales, reasons) has already been
//! redacted when the arbitration was built.

use std::fmt::Write as _;

use crate::council::arbitrate::{Arbitration, SeatStatus};

/// Renders the arbitration as markdown.
#[must_use]
pub fn render(a: &Arbitration) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Arbitration: `{}` ({})\n", a.cell, a.bundle_run_id);
    let verdict = if a.rejected() { "REJECTED" } else { "GRADED" };
    let _ = writeln!(
        md,
        "- Result: **{verdict}**, {} of {} seat(s) scored",
        a.scored_seats(),
        a.seats.len()
    );
    let _ = writeln!(md, "- Graded: {} by council `{}`", a.date, a.council);
    let _ = writeln!(
        md,
        "- Pins: council v{} `{}`, rubric v{} `{}`, redaction v{} `{}`",
        a.council_pin.version,
        a.council_pin.sha256,
        a.rubric_pin.version,
        a.rubric_pin.sha256,
        a.redaction_pin.version,
        a.redaction_pin.sha256
    );
    let _ = writeln!(md, "- Bundle manifest: `{}`", a.manifest_digest);
    let _ = writeln!(
        md,
        "- Judge spend: {} request(s), {} output token(s) counted\n",
        a.judge_turns, a.judge_output_tokens
    );

    md.push_str("## reject_if (applied before any average)\n\n");
    if a.rejections.is_empty() {
        md.push_str("None fired.\n\n");
    } else {
        for r in &a.rejections {
            let _ = writeln!(md, "- `{}`: {} ({})", r.id, r.description, r.detail);
        }
        md.push_str("\nA rejected bundle fails whatever its medians say; they are shown for the record only.\n\n");
    }

    md.push_str("## Per criterion\n\n| criterion | median | spread | scores | disagreeing (> 1 point from the median) |\n|---|---|---|---|---|\n");
    for (id, c) in &a.criteria {
        let median = c
            .median
            .map_or_else(|| "none (no seat scored)".to_owned(), |m| m.to_string());
        let spread = c.spread.map_or_else(|| "-".to_owned(), |s| s.to_string());
        let scores = if c.scores.is_empty() {
            "-".to_owned()
        } else {
            c.scores
                .iter()
                .map(|(seat, s)| format!("{seat} {s}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let flagged = if c.disagreeing.is_empty() {
            "-".to_owned()
        } else {
            c.disagreeing.join(", ")
        };
        let _ = writeln!(md, "| {id} | {median} | {spread} | {scores} | {flagged} |");
    }

    md.push_str(
        "\n## Seats\n\n| seat | backend | model | status | reason |\n|---|---|---|---|---|\n",
    );
    for s in &a.seats {
        let (status, reason) = match &s.status {
            SeatStatus::Scored { .. } => ("scored", "-".to_owned()),
            SeatStatus::Unscored { reason } => ("unscored", cell(reason)),
            SeatStatus::Absent { reason } => ("absent", cell(reason)),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {status} | {reason} |",
            s.id,
            s.backend.as_str(),
            s.model
        );
    }

    md.push_str("\n## Rationales\n");
    for s in &a.seats {
        if let SeatStatus::Scored { scores } = &s.status {
            let _ = writeln!(md, "\n### {}\n", s.id);
            for (criterion, score) in scores {
                let _ = writeln!(
                    md,
                    "- {criterion}: {} (cites {}): {}",
                    score.score,
                    score.citations.join(", "),
                    score.rationale.trim()
                );
            }
        }
    }
    md
}

/// Text safe inside a markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
