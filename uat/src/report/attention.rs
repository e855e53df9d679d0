//! The index's "Trials, what needs attention first" table: one row per trial,
//! failed, then flaky, then skipped (with the reason), then passed, as
//! Playwright's HTML report orders its list, so a reader of a failed run meets
//! the failures before the passes. Plain HTML: complete without scripts.

use std::fmt::Write as _;

use studyloop_acceptance::ledger::TrialOutcome;

use super::html::{Render, duration, slug};
use super::model::Cell;

/// Attention rank: lower comes first.
fn rank(c: &Cell) -> u8 {
    match c.status.outcome {
        TrialOutcome::Failed if !c.flaky() => 0,
        TrialOutcome::Failed => 1,
        _ if c.flaky() => 1,
        TrialOutcome::Skipped => 2,
        TrialOutcome::Passed => 3,
    }
}

/// Writes the section.
pub(crate) fn section(body: &mut String, cells: &[Cell], r: &Render<'_>) {
    let mut order: Vec<&Cell> = cells.iter().collect();
    order.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.trial.cmp(&b.trial)));
    body.push_str("<section aria-labelledby=\"h-trials\"><h2 id=\"h-trials\"><a id=\"trials\"></a>Trials, what needs attention first</h2>\n");
    body.push_str("<table><caption>Failed, flaky, skipped, then passed trials</caption><thead><tr><th scope=\"col\">Status</th><th scope=\"col\">Trial</th><th scope=\"col\">Harness</th><th scope=\"col\">Time</th><th scope=\"col\">Attempts</th><th scope=\"col\">Why</th></tr></thead><tbody>\n");
    for c in order {
        let word = if c.flaky() {
            "flaky"
        } else {
            c.status.outcome.as_str()
        };
        let why = match c.status.outcome {
            TrialOutcome::Passed => String::new(),
            _ => r.md(c.status.message.as_deref().unwrap_or("no reason recorded")),
        };
        let _ = writeln!(
            body,
            "<tr><td class=\"{word}\">{word}</td><td><a href=\"cells/{}.html\"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td>{why}</td></tr>",
            slug(&c.trial),
            r.t(&c.trial),
            r.t(&c.harness_shown()),
            duration(c.elapsed_ms()),
            c.attempts.len(),
        );
    }
    body.push_str("</tbody></table></section>\n");
}
