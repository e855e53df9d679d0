//! The index's "Trials, what needs attention first" table: one row per trial,
//! failed, then flaky, then skipped (with the reason), then passed, as
//! Playwright's HTML report orders its list, so a reader of a failed run meets
//! the failures before the passes; each row: status (glyph and word), trial,
//! harness, surface, time, attempts, fidelity, why. Plain HTML, complete
//! without scripts; `filter.js` adds the filters and the search.

use std::fmt::Write as _;

use studyloop_acceptance::ledger::TrialOutcome;

use super::html::{Render, slug};
use super::model::Cell;
use super::status::{self, badge};

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

/// Writes the section: the table (`#trials-table`), each row carrying its
/// status, harness and surface as `data-` attributes for `filter.js`.
pub(crate) fn section(body: &mut String, cells: &[Cell], r: &Render<'_>) {
    let mut order: Vec<&Cell> = cells.iter().collect();
    order.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.trial.cmp(&b.trial)));
    body.push_str("<section aria-labelledby=\"h-trials\"><h2 id=\"h-trials\"><a id=\"trials\"></a>Trials, what needs attention first</h2>\n");
    // filter.js puts its controls here; without scripts the table is whole.
    body.push_str("<div id=\"filters\"></div>\n");
    body.push_str("<div class=\"wide\"><table id=\"trials-table\" class=\"tokens\"><caption>Failed, flaky, skipped, then passed trials</caption><thead><tr><th scope=\"col\">Status</th><th scope=\"col\">Trial</th><th scope=\"col\">Harness</th><th scope=\"col\">Surface</th><th scope=\"col\">Time</th><th scope=\"col\">Attempts</th><th scope=\"col\">Fidelity</th><th scope=\"col\">Why</th></tr></thead><tbody>\n");
    for c in order {
        let word = c.status_word();
        let why = match c.status.outcome {
            TrialOutcome::Passed => String::new(),
            _ => r.md(c.status.message.as_deref().unwrap_or("no reason recorded")),
        };
        let harness = r.t(&c.harness_shown());
        let surface = r.t(&c.surface);
        let _ = writeln!(
            body,
            "<tr data-status=\"{word}\" data-harness=\"{harness}\" data-surface=\"{surface}\"><td class=\"{word} n\" data-label=\"Status\">{}</td><td data-label=\"Trial\"><a href=\"cells/{}.html\"><code>{}</code></a></td><td data-label=\"Harness\">{harness}</td><td data-label=\"Surface\">{surface}</td><td class=\"n\" data-label=\"Time\">{}</td><td class=\"n\" data-label=\"Attempts\">{}</td><td class=\"n\" data-label=\"Fidelity\">{}</td><td data-label=\"Why\">{why}</td></tr>",
            badge(word),
            slug(&c.trial),
            r.t(&c.trial),
            status::time(c),
            status::attempts(c),
            status::fidelity(c),
        );
    }
    body.push_str("</tbody></table></div></section>\n");
}
