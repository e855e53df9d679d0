//! `studyloop-uat report --compare OLD_RUN NEW_RUN`: one page of what changed
//! between two runs, what a release manager asks after a rerun: new failures,
//! fixed trials, newly flaky ones, each trial's time and fidelity change,
//! trials in only one run (added / removed), changed pins (harness
//! versions, rubric, redaction rules, as the runs' bundle manifests record
//! them), and broken steps: per trial, the first step of the new run's bundle
//! that failed although the old run's bundle passed a step of that name (after
//! a harness upgrade, the adapter fact that no longer holds: `just drift`). Both runs are read the way the report reads one (`model::cells`),
//! so a status here is the status the report shows.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use studyloop_acceptance::ledger::{
    LedgerError, RESULTS_LOG, RUN_MARKER, RunRecords, SKIP_LEDGER, TrialOutcome,
};

use super::build::{make_dir, write};
use super::compare_facts::{
    BrokenStep, FactDiff, NOT_RECORDED, StoreRecord, VersionFact, fact_diffs, unparsable_records,
    versions,
};
use super::drift::COMPARE_JSON;
use super::error::ReportError;
use super::html::{Render, duration, page};
use super::model::Cell;
use super::status;

/// What to compare.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// The earlier run directory.
    pub old: PathBuf,
    /// The later run directory.
    pub new: PathBuf,
    /// Where the page goes (`index.html` inside).
    pub out: PathBuf,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The page.
    pub index: PathBuf,
    /// Trials that failed in NEW and did not in OLD.
    pub new_failures: usize,
    /// Trials that failed in OLD and passed in NEW.
    pub fixed: usize,
    /// Trials flaky in NEW and not in OLD.
    pub newly_flaky: usize,
    /// Pins whose recorded values differ.
    pub changed_pins: usize,
    /// Trials whose new bundle failed a step the old bundle passed.
    pub broken_steps: usize,
    /// The same written as JSON (`compare.json` beside the page): every
    /// list, the broken steps with their rows to change, the adapter facts.
    pub json: PathBuf,
    /// Per broken step or check: (trial, the rows to change).
    pub rows: Vec<(
        String,
        studyloop_acceptance::harness_spec::drift_rows::RowsToChange,
    )>,
}

/// Why no comparison was written.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// An argument is not a run directory.
    #[error("{which} {} is not a run directory: {detail} (pass a directory under target/studyloop/runs/ that holds {RUN_MARKER}, {RESULTS_LOG} or {SKIP_LEDGER})", path.display())]
    NotARun {
        /// `OLD_RUN` or `NEW_RUN`.
        which: &'static str,
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// Both arguments name one directory.
    #[error("OLD_RUN {} and NEW_RUN {} are the same directory; pass two different runs (the earlier first)", old.display(), new.display())]
    Same {
        /// As given.
        old: PathBuf,
        /// As given.
        new: PathBuf,
    },
    /// A run directory could not be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The page could not be written.
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// Checks that `path` is a run directory itself (not a symlink to one).
fn run_dir(which: &'static str, path: &Path) -> Result<PathBuf, CompareError> {
    let bad = |detail: &str| CompareError::NotARun {
        which,
        path: path.to_owned(),
        detail: detail.to_owned(),
    };
    let meta = std::fs::symlink_metadata(path).map_err(|e| bad(&e.to_string()))?;
    if meta.file_type().is_symlink() {
        // A link could point anywhere; the run is named by its own path.
        return Err(bad("it is a symlink; pass the directory it points to"));
    }
    if !meta.is_dir() {
        return Err(bad("it is not a directory"));
    }
    if ![RUN_MARKER, RESULTS_LOG, SKIP_LEDGER]
        .iter()
        .any(|f| path.join(f).is_file())
    {
        return Err(bad("it holds no run record"));
    }
    std::fs::canonicalize(path).map_err(|e| bad(&e.to_string()))
}

/// Compares the two runs of `options` and writes the page.
///
/// # Errors
/// [`CompareError`]: an argument that is not a run directory (or a symlink),
/// the same directory twice, an unreadable run, an unwritable output.
pub fn compare(options: &CompareOptions) -> Result<Compared, CompareError> {
    let old_dir = run_dir("OLD_RUN", &options.old)?;
    let new_dir = run_dir("NEW_RUN", &options.new)?;
    if old_dir == new_dir {
        return Err(CompareError::Same {
            old: options.old.clone(),
            new: options.new.clone(),
        });
    }
    let old = super::model::cells(&RunRecords::read_all(&[&old_dir])?);
    let new = super::model::cells(&RunRecords::read_all(&[&new_dir])?);
    let diff = Diff::of(&old, &new);
    let render = Render { redactor: None };
    let html = diff.render(&old_dir, &new_dir, &render);
    let out = &options.out;
    if std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ReportError::Out {
            path: out.clone(),
            detail: "it is a symlink".into(),
        }
        .into());
    }
    make_dir(out)?;
    let index = out.join("index.html");
    write(&index, html.as_bytes())?;
    let json = out.join(COMPARE_JSON);
    let text = serde_json::to_string_pretty(&diff.json(&old_dir, &new_dir))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    write(&json, text.as_bytes())?;
    Ok(Compared {
        index,
        new_failures: diff.new_failures.len(),
        fixed: diff.fixed.len(),
        newly_flaky: diff.newly_flaky.len(),
        changed_pins: diff.pins.len(),
        broken_steps: diff.broken.len(),
        json,
        rows: diff
            .broken
            .iter()
            .flat_map(|b| b.rows.iter().map(|r| (b.trial.clone(), r.clone())))
            .collect(),
    })
}

/// One trial in both runs.
struct Pair<'a> {
    old: &'a Cell,
    new: &'a Cell,
}

/// A pin whose recorded values differ: (name, old values, new values).
type PinChange = (String, BTreeSet<String>, BTreeSet<String>);

struct Diff<'a> {
    both: Vec<Pair<'a>>,
    new_failures: Vec<&'a str>,
    fixed: Vec<&'a str>,
    newly_flaky: Vec<&'a str>,
    added: Vec<&'a Cell>,
    removed: Vec<&'a Cell>,
    pins: Vec<PinChange>,
    broken: Vec<BrokenStep>,
    facts: Vec<FactDiff>,
    versions: Vec<VersionFact>,
    unparsable: Vec<StoreRecord>,
}

impl<'a> Diff<'a> {
    fn of(old: &'a [Cell], new: &'a [Cell]) -> Self {
        let old_by: BTreeMap<&str, &Cell> = old.iter().map(|c| (c.trial.as_str(), c)).collect();
        let new_by: BTreeMap<&str, &Cell> = new.iter().map(|c| (c.trial.as_str(), c)).collect();
        let mut d = Diff {
            both: Vec::new(),
            new_failures: Vec::new(),
            fixed: Vec::new(),
            newly_flaky: Vec::new(),
            added: new
                .iter()
                .filter(|c| !old_by.contains_key(c.trial.as_str()))
                .collect(),
            removed: old
                .iter()
                .filter(|c| !new_by.contains_key(c.trial.as_str()))
                .collect(),
            pins: Vec::new(),
            broken: Vec::new(),
            facts: fact_diffs(old, new),
            versions: versions(old, new),
            unparsable: unparsable_records(new),
        };
        for (trial, n) in &new_by {
            let Some(o) = old_by.get(trial) else { continue };
            let (was, is) = (o.status_word(), n.status_word());
            // A flaky trial failed an attempt too, but it is its own list.
            if is == "failed" && was != "failed" {
                d.new_failures.push(trial);
            }
            if was == "failed" && is == "passed" {
                d.fixed.push(trial);
            }
            if is == "flaky" && was != "flaky" {
                d.newly_flaky.push(trial);
            }
            if let Some((step, error, checks)) = broken_step(o, n) {
                d.broken.push(BrokenStep::new(n, step, error, checks));
            }
            d.both.push(Pair { old: o, new: n });
        }
        let (po, pn) = (pins(old), pins(new));
        let names: BTreeSet<&String> = po.keys().chain(pn.keys()).collect();
        for name in names {
            let a = po.get(name).cloned().unwrap_or_default();
            let b = pn.get(name).cloned().unwrap_or_default();
            if a != b {
                d.pins.push((name.clone(), a, b));
            }
        }
        d
    }

    fn render(&self, old_dir: &Path, new_dir: &Path, r: &Render<'_>) -> String {
        let mut body = String::new();
        body.push_str("<h1>StudyLoop run comparison</h1>\n");
        let _ = writeln!(
            body,
            "<p class=\"headline\">{} new failure(s), {} fixed, {} newly flaky; {} trial(s) added, {} removed; {} changed pin(s); {} broken step(s).</p>",
            self.new_failures.len(),
            self.fixed.len(),
            self.newly_flaky.len(),
            self.added.len(),
            self.removed.len(),
            self.pins.len(),
            self.broken.len()
        );
        let _ = writeln!(
            body,
            "<p>Old run: <code>{}</code><br>New run: <code>{}</code></p>",
            r.t(&old_dir.display().to_string()),
            r.t(&new_dir.display().to_string())
        );
        self.list(
            &mut body,
            "new-failures",
            "New failures",
            &self.new_failures,
            r,
        );
        self.list(&mut body, "fixed", "Fixed", &self.fixed, r);
        self.list(
            &mut body,
            "newly-flaky",
            "Newly flaky",
            &self.newly_flaky,
            r,
        );
        only(
            &mut body,
            "added",
            "Added (only in the new run)",
            &self.added,
            r,
        );
        only(
            &mut body,
            "removed",
            "Removed (only in the old run)",
            &self.removed,
            r,
        );
        self.pins_section(&mut body, r);
        self.broken_section(&mut body, r);
        self.rows_section(&mut body, r);
        self.facts_section(&mut body, r);
        self.trials_section(&mut body, r);
        page(
            "StudyLoop run comparison",
            None,
            &[
                ("new-failures", "New failures"),
                ("fixed", "Fixed"),
                ("newly-flaky", "Newly flaky"),
                ("added", "Added"),
                ("removed", "Removed"),
                ("pins", "Changed pins"),
                ("broken-steps", "Broken steps"),
                ("rows-to-change", "Rows to change"),
                ("adapter-facts", "Adapter facts"),
                ("per-trial", "Per trial"),
            ],
            &body,
            false,
        )
    }

    fn pair(&self, trial: &str) -> Option<&Pair<'a>> {
        self.both.iter().find(|p| p.new.trial == trial)
    }

    fn list(&self, body: &mut String, id: &str, title: &str, trials: &[&str], r: &Render<'_>) {
        if !open_section(body, id, title, trials.len()) {
            return;
        }
        body.push_str("<ul>");
        for t in trials {
            let Some(p) = self.pair(t) else { continue };
            let why = match p.new.status.outcome {
                TrialOutcome::Passed => String::new(),
                _ => format!(
                    ": {}",
                    r.md(p
                        .new
                        .status
                        .message
                        .as_deref()
                        .unwrap_or("no reason recorded"))
                ),
            };
            let _ = write!(
                body,
                "<li><code>{}</code>: {} → {}{why}</li>",
                r.t(t),
                status::badge(p.old.status_word()),
                status::badge(p.new.status_word()),
            );
        }
        body.push_str("</ul></section>\n");
    }

    fn pins_section(&self, body: &mut String, r: &Render<'_>) {
        let _ = writeln!(
            body,
            "<section aria-labelledby=\"h-pins\"><h2 id=\"h-pins\"><a id=\"pins\"></a>Changed pins ({})</h2>",
            self.pins.len()
        );
        body.push_str("<p>As each run's bundle manifests record them: harness versions, rubric, redaction rules, actor model. The sign-off definition is not recorded by a run; the report judges both against the checked-in one.</p>\n");
        if self.pins.is_empty() {
            body.push_str("<p>None changed.</p></section>\n");
            return;
        }
        body.push_str("<div class=\"wide\"><table class=\"tokens\"><caption>Pins whose recorded values differ</caption><thead><tr><th scope=\"col\">Pin</th><th scope=\"col\">Old run</th><th scope=\"col\">New run</th></tr></thead><tbody>\n");
        let show = |set: &BTreeSet<String>| {
            if set.is_empty() {
                "not recorded".to_owned()
            } else {
                set.iter()
                    .map(|v| format!("<code>{}</code>", r.t(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        for (name, a, b) in &self.pins {
            let _ = writeln!(
                body,
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td></tr>",
                r.t(name),
                show(a),
                show(b)
            );
        }
        body.push_str("</tbody></table></div></section>\n");
    }

    fn broken_section(&self, body: &mut String, r: &Render<'_>) {
        if !open_section(body, "broken-steps", "Broken steps", self.broken.len()) {
            return;
        }
        body.push_str("<p>Per trial, the first step the new run's bundle failed although the old run's bundle passed a step of that name: after a harness upgrade, the adapter fact that no longer holds.</p>\n<ul>");
        for b in &self.broken {
            let _ = write!(
                body,
                "<li><code>{}</code>: step <strong>{}</strong>: {}</li>",
                r.t(&b.trial),
                r.t(&b.step),
                r.md(&b.error)
            );
        }
        body.push_str("</ul></section>\n");
    }

    fn rows_section(&self, body: &mut String, r: &Render<'_>) {
        let n = self.broken.iter().map(|b| b.rows.len()).sum();
        if !open_section(body, "rows-to-change", "Rows to change", n) {
            return;
        }
        body.push_str("<p>For each broken step and each of its failed checks: the adapter fact it proves, the harness-table entry and the product's row that would have to change (the mapping: <code>acceptance/src/harness_spec/drift_rows.rs</code>).</p>\n");
        rows_table(body, &self.broken, r);
        body.push_str("</section>\n");
    }

    fn facts_section(&self, body: &mut String, r: &Render<'_>) {
        let _ = writeln!(
            body,
            "<section aria-labelledby=\"h-adapter-facts\"><h2 id=\"h-adapter-facts\"><a id=\"adapter-facts\"></a>Adapter facts ({})</h2>",
            self.facts.len()
        );
        body.push_str("<p>Per harness, each adapter fact the recorded steps and checks prove: held, broke, or unknown when no step proving it was recorded (never held).</p>\n");
        body.push_str("<div class=\"wide\"><table class=\"tokens\"><caption>Adapter facts, old → new</caption><thead><tr><th scope=\"col\">Harness</th><th scope=\"col\">Fact</th><th scope=\"col\">Old run</th><th scope=\"col\">New run</th><th scope=\"col\">Evidence</th></tr></thead><tbody>\n");
        for f in &self.facts {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                r.t(&f.harness),
                r.t(f.fact.label()),
                f.old.unwrap_or("unknown"),
                f.new.unwrap_or("unknown"),
                f.evidence.as_deref().map_or_else(String::new, |e| r.md(e)),
            );
        }
        for v in &self.versions {
            let show = |line: &Option<String>, parsed: &Option<String>| match (line, parsed) {
                (None, _) => "unknown (not recorded)".to_owned(),
                (Some(l), Some(p)) => format!("<code>{}</code> → {}", r.t(l), r.t(p)),
                (Some(l), None) => format!("<code>{}</code> → does not parse", r.t(l)),
            };
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>version string parse</td><td>{}</td><td>{}</td><td></td></tr>",
                r.t(&v.harness),
                show(&v.old, &v.old_parsed),
                show(&v.new, &v.new_parsed),
            );
        }
        for u in &self.unparsable {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>session store: first record that no longer parses</td><td></td><td>broke</td><td><code>{}</code>: <code>{}</code></td></tr>",
                r.t(&u.harness),
                r.t(&u.trial),
                r.t(&u.record)
            );
        }
        for (fact, why) in NOT_RECORDED {
            let _ = writeln!(
                body,
                "<tr><td>every</td><td>{fact}</td><td>unknown</td><td>unknown</td><td>{}</td></tr>",
                r.t(why)
            );
        }
        body.push_str("</tbody></table></div></section>\n");
    }

    fn json(&self, old_dir: &Path, new_dir: &Path) -> serde_json::Value {
        let both = |p: &Pair<'_>| {
            serde_json::json!({
                "trial": p.new.trial,
                "old": p.old.status_word(),
                "new": p.new.status_word(),
                "old_ms": p.old.elapsed_ms(),
                "new_ms": p.new.elapsed_ms(),
            })
        };
        serde_json::json!({
            "old": old_dir,
            "new": new_dir,
            "new_failures": self.new_failures,
            "fixed": self.fixed,
            "newly_flaky": self.newly_flaky,
            "added": self.added.iter().map(|c| &c.trial).collect::<Vec<_>>(),
            "removed": self.removed.iter().map(|c| &c.trial).collect::<Vec<_>>(),
            "changed_pins": self.pins.iter().map(|(n, a, b)| serde_json::json!({"pin": n, "old": a, "new": b})).collect::<Vec<_>>(),
            "broken_steps": self.broken,
            "adapter_facts": self.facts,
            "versions": self.versions,
            // Empty: no reader named a record (none failed to parse where a turn was looked for).
            "unparsable_store_records": self.unparsable,
            "not_recorded": NOT_RECORDED.iter().map(|(f, why)| serde_json::json!({"fact": f, "old": null, "new": null, "why": why})).collect::<Vec<_>>(),
            "trials": self.both.iter().map(both).collect::<Vec<_>>(),
        })
    }

    fn trials_section(&self, body: &mut String, r: &Render<'_>) {
        let _ = writeln!(
            body,
            "<section aria-labelledby=\"h-per-trial\"><h2 id=\"h-per-trial\"><a id=\"per-trial\"></a>Per trial ({} in both runs)</h2>",
            self.both.len()
        );
        body.push_str("<p>Time is each trial's total over its attempts; a change is unknown when either run did not measure it (never 0).</p>\n");
        body.push_str("<div class=\"wide\"><table class=\"tokens\"><caption>Status, time and fidelity, old → new</caption><thead><tr><th scope=\"col\">Trial</th><th scope=\"col\">Status</th><th scope=\"col\">Time</th><th scope=\"col\">Time change</th><th scope=\"col\">Fidelity</th><th scope=\"col\">Fidelity change</th></tr></thead><tbody>\n");
        for p in &self.both {
            let time_change = match (p.old.elapsed_ms(), p.new.elapsed_ms()) {
                (Some(a), Some(b)) => signed_duration(b.cast_signed() - a.cast_signed()),
                _ => "unknown".to_owned(),
            };
            let fidelity_change = match (p.old.fidelity(), p.new.fidelity()) {
                (Some(a), Some(b)) => format!("{:+.3}", b - a),
                _ => "unknown".to_owned(),
            };
            let _ = writeln!(
                body,
                "<tr><td><code>{}</code></td><td>{} → {}</td><td>{} → {}</td><td>{time_change}</td><td>{} → {}</td><td>{fidelity_change}</td></tr>",
                r.t(&p.new.trial),
                status::badge(p.old.status_word()),
                status::badge(p.new.status_word()),
                status::time(p.old),
                status::time(p.new),
                status::fidelity(p.old),
                status::fidelity(p.new),
            );
        }
        body.push_str("</tbody></table></div></section>\n");
    }
}

/// Writes a section's heading with its count; an empty section is closed at once
/// with "None." and `false` returned, so the caller writes no list.
fn open_section(body: &mut String, id: &str, title: &str, count: usize) -> bool {
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"h-{id}\"><h2 id=\"h-{id}\"><a id=\"{id}\"></a>{title} ({count})</h2>"
    );
    if count == 0 {
        body.push_str("<p>None.</p></section>\n");
    }
    count > 0
}

fn only(body: &mut String, id: &str, title: &str, cells: &[&Cell], r: &Render<'_>) {
    if !open_section(body, id, title, cells.len()) {
        return;
    }
    body.push_str("<ul>");
    for c in cells {
        let _ = write!(
            body,
            "<li><code>{}</code>: {}</li>",
            r.t(&c.trial),
            status::badge(c.status_word())
        );
    }
    body.push_str("</ul></section>\n");
}

/// The first step of `new`'s last bundle that failed while a step of that name
/// passed in `old`'s last bundle, with its error; `None` when every such step
/// held or either bundle has no step record.
fn broken_step(old: &Cell, new: &Cell) -> Option<(String, String, Vec<String>)> {
    let steps = |c: &Cell| {
        let bundle = c.attempts.iter().rev().find_map(|a| a.bundle.as_ref())?;
        super::cell::step_records(bundle.dir())
    };
    let (was, is) = (steps(old)?, steps(new)?);
    let name = |s: &serde_json::Value| {
        s.get("name")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let ok = |s: &serde_json::Value| s.get("ok").and_then(serde_json::Value::as_bool);
    let held: BTreeSet<String> = was
        .iter()
        .filter(|s| ok(s) == Some(true))
        .filter_map(name)
        .collect();
    is.iter().find_map(|s| {
        let n = name(s)?;
        (ok(s) == Some(false) && held.contains(&n)).then(|| {
            let error = s
                .get("error")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("no error recorded")
                .to_owned();
            let checks = s
                .get("checks")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter(|c| ok(c) == Some(false))
                .filter_map(name)
                .collect();
            (n, error, checks)
        })
    })
}

/// The rows-to-change table of `broken` (the compare page and the drift page).
pub(crate) fn rows_table(body: &mut String, broken: &[BrokenStep], r: &Render<'_>) {
    body.push_str("<div class=\"wide\"><table class=\"tokens\"><caption>Rows to change</caption><thead><tr><th scope=\"col\">Trial</th><th scope=\"col\">Step or check</th><th scope=\"col\">Adapter fact</th><th scope=\"col\">Harness table</th><th scope=\"col\">Product row</th></tr></thead><tbody>\n");
    for b in broken {
        for row in &b.rows {
            let cell = |v: &Option<String>| {
                v.as_deref().map_or_else(
                    || {
                        if row.fact.is_some() {
                            "none".to_owned()
                        } else {
                            "unknown".to_owned()
                        }
                    },
                    |s| format!("<code>{}</code>", r.t(s)),
                )
            };
            let _ = writeln!(
                body,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                r.t(&b.trial),
                r.t(&row.name),
                row.fact.map_or(
                    "unknown: no rule names this step (acceptance/src/harness_spec/drift_rows.rs)",
                    |f| f.label()
                ),
                cell(&row.harness_spec),
                cell(&row.product),
            );
        }
    }
    body.push_str("</tbody></table></div>\n");
}

/// `+1.50 s` / `-0.20 s`.
fn signed_duration(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    format!("{sign}{}", duration(Some(ms.unsigned_abs())))
}

/// Every pin the run's bundle manifests record, by name, with each distinct
/// value (a run may mix versions: every value is kept).
fn pins(cells: &[Cell]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut add = |name: String, value: Option<String>| {
        if let Some(v) = value {
            out.entry(name).or_default().insert(v);
        }
    };
    let versioned = |v: &Option<String>, h: &Option<String>| match (v, h) {
        (None, None) => None,
        (v, h) => Some(format!(
            "v{} ({})",
            v.as_deref().unwrap_or("?"),
            h.as_deref().unwrap_or("no hash")
        )),
    };
    for c in cells {
        for b in c.attempts.iter().filter_map(|a| a.bundle.as_ref()) {
            let m = b.manifest();
            let harness = m.harness.clone().unwrap_or_else(|| c.harness_shown());
            add(
                format!("harness {harness} version"),
                m.harness_version.clone(),
            );
            add(
                "rubric".to_owned(),
                versioned(&m.rubric_version, &m.rubric_hash),
            );
            add(
                "redaction rules".to_owned(),
                versioned(&m.redaction_version, &m.redaction_hash),
            );
            add("actor model".to_owned(), m.actor_model.clone());
        }
    }
    out
}
