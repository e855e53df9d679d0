//! How a trial's status, time and fidelity are said on the index: one glyph per
//! status (always beside or behind its word, so the glyph is never the only
//! carrier: a screen reader and a colour-blind reader get the word), and the
//! figures with unknowns said as `unknown` (never 0 or 1.0).

use super::html::duration;
use super::model::Cell;

/// The glyph of a status word (`Cell::status_word`).
pub(crate) fn glyph(word: &str) -> &'static str {
    match word {
        "failed" => "✗",
        "flaky" => "◐",
        "skipped" => "⊘",
        "passed" => "✓",
        _ => "?",
    }
}

/// The glyph, hidden from assistive technology, followed by the word.
pub(crate) fn badge(word: &str) -> String {
    format!(
        "<span class=\"icon\" aria-hidden=\"true\">{}</span> {word}",
        glyph(word)
    )
}

/// The trial's total time: `unknown` when it ran unmeasured, `not run` when
/// no attempt ran.
pub(crate) fn time(c: &Cell) -> String {
    match c.elapsed_ms() {
        Some(ms) => duration(Some(ms)),
        None if c.ran() => "unknown".to_owned(),
        None => "not run".to_owned(),
    }
}

/// The reply fidelity: three decimals, `unknown` when not scored, `not run`
/// when no attempt ran.
pub(crate) fn fidelity(c: &Cell) -> String {
    match c.fidelity() {
        Some(x) => format!("{x:.3}"),
        None if c.ran() => "unknown".to_owned(),
        None => "not run".to_owned(),
    }
}

/// `passed/ran` attempts, e.g. `1/2`; `0 run` when every line was a skip.
pub(crate) fn attempts(c: &Cell) -> String {
    let ran = c
        .attempts
        .iter()
        .filter(|a| a.outcome != studyloop_acceptance::ledger::TrialOutcome::Skipped)
        .count();
    let passed = c
        .attempts
        .iter()
        .filter(|a| a.outcome == studyloop_acceptance::ledger::TrialOutcome::Passed)
        .count();
    if ran == 0 {
        "0 run".to_owned()
    } else {
        format!("{passed}/{ran} passed")
    }
}
