//! `index.html`: the run at a glance. The verdict first, then the trials
//! table (what needs attention first, `attention`), the harness × surface
//! grid of status glyphs (each cell's outcome, time, fidelity, attempts with
//! pass^k / pass@k / flaky, and its skip reason on hover and focus), the UAT
//! sign-off verdict with every reason, and the run directories read.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use studyloop_acceptance::ledger::TrialOutcome;
use studyloop_acceptance::selection::HARNESS_ORDER;

use super::html::{Render, Scripts, page_with, slug};
use super::model::Cell;
use super::status;

/// The sign-off as the report shows it: the verdict word and every reason,
/// or why no verdict could be reached.
pub(crate) enum SignoffView {
    /// A verdict.
    Verdict {
        /// `PASS` or `FAIL`.
        word: &'static str,
        /// Every reason (empty on PASS).
        reasons: Vec<String>,
        /// The definition's per-cell notes.
        notes: Vec<String>,
        /// The sign-off definition's identity.
        definition: String,
    },
    /// No verdict: the sign-off could not read its inputs.
    NoVerdict(String),
    /// Every run directory is an acceptance run: the UAT sign-off is not asked.
    NotApplicable,
}

impl SignoffView {
    /// The word `Written::verdict` and the headline give.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Self::Verdict { word, .. } => word,
            Self::NoVerdict(_) => "none",
            Self::NotApplicable => "n/a",
        }
    }
}

/// Why an acceptance-only run gets no sign-off verdict.
const NOT_APPLICABLE: &str = "the UAT sign-off does not apply: every run directory read is an acceptance run, and the sign-off judges UAT journeys (build the report of a UAT run, or of both, for a verdict)";

/// The overview page.
pub(crate) fn render(
    cells: &[Cell],
    runs: &[PathBuf],
    signoff: &SignoffView,
    drift_runs: usize,
    r: &Render<'_>,
) -> String {
    let mut body = String::new();
    let counts = cells.iter().fold([0usize; 3], |mut c, cell| {
        c[match cell.status.outcome {
            TrialOutcome::Passed => 0,
            TrialOutcome::Skipped => 1,
            TrialOutcome::Failed => 2,
        }] += 1;
        c
    });
    let flaky = cells.iter().filter(|c| c.flaky()).count();
    body.push_str("<h1>StudyLoop run report</h1>\n");
    headline(&mut body, signoff, r);
    if r.redacted() {
        body.push_str("<p class=\"note\">Redacted variant: every recorded string passed the pinned redaction rules; screenshots are left out.</p>\n");
    }
    let _ = writeln!(
        body,
        "<p>{} trial(s): {} passed, {} skipped, {} failed; {flaky} flaky. Each trial links to its page. Outcomes are the worst of every attempt and log line.</p>",
        cells.len(),
        counts[0],
        counts[1],
        counts[2]
    );
    super::attention::section(&mut body, cells, r);
    matrix(&mut body, cells, r);
    signoff_section(&mut body, signoff, r);
    body.push_str("<section aria-labelledby=\"h-runs\"><h2 id=\"h-runs\"><a id=\"runs\"></a>Run directories</h2><ul>");
    for d in runs {
        let _ = write!(
            body,
            "<li><code>{}</code></li>",
            r.t(&d.display().to_string())
        );
    }
    body.push_str("</ul></section>\n");
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"h-drift\"><h2 id=\"h-drift\"><a id=\"drift\"></a>Drift runs</h2><p>{}: <a href=\"{}\">the drift page</a>.</p></section>",
        match drift_runs {
            0 => "No drift run".to_owned(),
            n => format!("{n} <code>just drift</code> run(s)"),
        },
        super::drift::PAGE
    );
    page_with(
        "StudyLoop run report",
        None,
        &[
            ("trials", "Trials"),
            ("matrix", "Matrix"),
            ("signoff", "Sign-off"),
            ("runs", "Run directories"),
            ("drift", "Drift runs"),
        ],
        &body,
        Scripts::Filter,
    )
}

/// The harness × surface overview as a compact grid of status glyphs: a row
/// per surface, a column per harness, one small cell each. A cell's details
/// (trial id, outcome, time, attempts, fidelity, a skip's reason or a
/// failure's category) are its link's text, shown on hover and on keyboard
/// focus (CSS only, so without scripts too); a pair not in this run is an
/// empty cell whose text alternative says so.
fn matrix(body: &mut String, cells: &[Cell], r: &Render<'_>) {
    let surfaces: BTreeSet<&str> = cells.iter().map(|c| c.surface.as_str()).collect();
    let mut harnesses: Vec<&str> = HARNESS_ORDER
        .iter()
        .map(|h| h.as_str())
        .filter(|h| cells.iter().any(|c| c.harness == *h))
        .collect();
    if cells.iter().any(|c| c.harness == "–") {
        harnesses.push("–");
    }
    let by: BTreeMap<(&str, &str), &Cell> = cells
        .iter()
        .map(|c| ((c.harness.as_str(), c.surface.as_str()), c))
        .collect();
    body.push_str("<section aria-labelledby=\"h-matrix\"><h2 id=\"h-matrix\"><a id=\"matrix\"></a>Matrix: harness × surface</h2>\n");
    body.push_str("<p>One glyph per trial: <span aria-hidden=\"true\">✗</span> failed, <span aria-hidden=\"true\">◐</span> flaky, <span aria-hidden=\"true\">⊘</span> skipped, <span aria-hidden=\"true\">✓</span> passed; an empty cell is not in this run. Hover or focus (Tab) a glyph for its trial, time, attempts and fidelity; follow it for the trial's page.</p>\n");
    body.push_str("<div class=\"wide\"><table class=\"grid tokens\"><caption>Trials by surface (rows) and harness (columns); – = no harness</caption><thead><tr><th scope=\"col\">Surface</th>");
    for h in &harnesses {
        let _ = write!(
            body,
            "<th scope=\"col\"><span class=\"up\">{}</span></th>",
            r.t(h)
        );
    }
    body.push_str("</tr></thead><tbody>\n");
    for s in &surfaces {
        let _ = write!(body, "<tr><th scope=\"row\"><code>{}</code></th>", r.t(s));
        for h in &harnesses {
            match by.get(&(*h, *s)) {
                None => body
                    .push_str("<td class=\"none\"><span class=\"sr\">not in this run</span></td>"),
                Some(c) => grid_cell(body, c, r),
            }
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</tbody></table></div></section>\n");
}

fn grid_cell(body: &mut String, c: &Cell, r: &Render<'_>) {
    let word = c.status_word();
    let mut tip = format!(
        "{}: {word}; time {}; attempts {}; fidelity {}",
        r.t(&c.trial),
        status::time(c),
        status::attempts(c),
        status::fidelity(c),
    );
    let ran = c
        .attempts
        .iter()
        .filter(|a| a.outcome != TrialOutcome::Skipped)
        .count();
    if ran > 1 {
        let yes = |x: Option<bool>| if x == Some(true) { "yes" } else { "no" };
        let _ = write!(
            tip,
            "; pass^{ran} {}; pass@{ran} {}",
            yes(c.pass_all()),
            yes(c.pass_any())
        );
    }
    match c.status.outcome {
        TrialOutcome::Skipped => {
            // The whole reason is on the cell's page; the tip keeps its start.
            let reason = c.status.message.as_deref().unwrap_or("no reason recorded");
            let short: String = reason.chars().take(90).collect();
            let more = if short.len() < reason.len() {
                "…"
            } else {
                ""
            };
            let _ = write!(tip, "; skipped: {}{more}", r.md(&short));
        }
        TrialOutcome::Failed => {
            let category = c
                .attempts
                .iter()
                .rev()
                .find_map(|a| a.category)
                .map_or("uncategorised", |x| x.as_str());
            let _ = write!(tip, "; category: {category}");
        }
        TrialOutcome::Passed => {}
    }
    let _ = write!(
        body,
        "<td class=\"{word}\"><a class=\"g\" href=\"cells/{}.html\"><span aria-hidden=\"true\">{}</span><span class=\"tip\">{tip}</span></a></td>",
        slug(&c.trial),
        status::glyph(word),
    );
}

/// The verdict first, before any count: what a release manager reads first.
fn headline(body: &mut String, s: &SignoffView, r: &Render<'_>) {
    match s {
        SignoffView::Verdict { word, reasons, .. } if reasons.is_empty() => {
            let _ = writeln!(
                body,
                "<p class=\"headline\">Sign-off: <strong class=\"{word}\">{word}</strong>.</p>"
            );
        }
        SignoffView::Verdict { word, reasons, .. } => {
            let _ = writeln!(
                body,
                "<p class=\"headline\">Sign-off: <strong class=\"{word}\">{word}</strong>, {} reason(s); the first: {} (<a href=\"#signoff\">every reason</a>).</p>",
                reasons.len(),
                reasons.first().map_or_else(String::new, |x| r.md(x))
            );
        }
        SignoffView::NoVerdict(why) => {
            let _ = writeln!(
                body,
                "<p class=\"headline\">Sign-off: <strong class=\"failed\">no verdict</strong>: {}.</p>",
                r.md(why)
            );
        }
        SignoffView::NotApplicable => {
            let _ = writeln!(
                body,
                "<p class=\"headline\">Sign-off: not applicable: {NOT_APPLICABLE}.</p>"
            );
        }
    }
}

fn signoff_section(body: &mut String, s: &SignoffView, r: &Render<'_>) {
    body.push_str("<section aria-labelledby=\"h-signoff\"><h2 id=\"h-signoff\"><a id=\"signoff\"></a>UAT sign-off verdict</h2>\n");
    match s {
        SignoffView::NotApplicable => {
            let _ = writeln!(body, "<p>Not applicable: {NOT_APPLICABLE}.</p>");
        }
        SignoffView::NoVerdict(why) => {
            let _ = writeln!(body, "<p class=\"failed\">No verdict: {}</p>", r.md(why));
        }
        SignoffView::Verdict {
            word,
            reasons,
            notes,
            definition,
        } => {
            let _ = writeln!(
                body,
                "<p>Verdict: <strong class=\"{word}\">{word}</strong> against {} (the same verdict <code>studyloop-uat signoff</code> gives these run directories).</p>",
                r.t(definition)
            );
            if reasons.is_empty() {
                body.push_str("<p>Reasons: none.</p>\n");
            } else {
                let _ = writeln!(body, "<h3>Every reason ({})</h3><ol>", reasons.len());
                for reason in reasons {
                    let _ = write!(body, "<li>{}</li>", r.md(reason));
                }
                body.push_str("</ol>\n");
            }
            if !notes.is_empty() {
                body.push_str("<h3>Notes per definition cell</h3><ul>");
                for n in notes {
                    let _ = write!(body, "<li>{}</li>", r.md(n));
                }
                body.push_str("</ul>\n");
            }
        }
    }
    body.push_str("</section>\n");
}
