//! The page of one cell: its attempts, then, from the latest attempt's bundle,
//! the manifest and its verification, the step timeline with every check, the
//! transcript with each reply's source, the reply fidelity and the terminal
//! recordings; the artefact sections follow (`artefacts`).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::artefacts;
use super::html::{Render, duration, page};
use super::model::{Attempt, Cell};
use super::source;
use crate::bundle::Bundle;

/// A file to copy into the report: (bundle file, report-relative target).
pub(crate) type Image = (std::path::PathBuf, String);

/// The sections every cell page lists, in order (ids are anchors).
const SECTIONS: [(&str, &str); 12] = [
    ("attempts", "Attempts"),
    ("manifest", "Manifest"),
    ("steps", "Steps"),
    ("transcript", "Transcript"),
    ("fidelity", "Fidelity"),
    ("casts", "Terminal recordings"),
    ("screens", "Pane screens"),
    ("screenshots", "Screenshots"),
    ("frames", "ACP/WS frames"),
    ("stub", "Stub requests"),
    ("arbitration", "Arbitration"),
    ("files", "Files"),
];

/// The page of `cell`, the files it shows (screenshots, recordings) to copy,
/// and whether it needs the terminal player.
pub(crate) fn render(cell: &Cell, r: &Render<'_>) -> (String, Vec<Image>, bool) {
    let mut body = String::new();
    let mut images = Vec::new();
    let _ = writeln!(body, "<h1>Cell <code>{}</code></h1>", r.t(&cell.trial));
    let _ = writeln!(
        body,
        "<p>Outcome: <strong class=\"{0}\">{0}</strong>; harness {1}; surface {2}; {3} attempt(s); total time {4}; pass^k {5}; pass@k {6}{7}.</p>",
        cell.status.outcome.as_str(),
        r.t(&cell.harness_shown()),
        r.t(&cell.surface),
        cell.attempts.len(),
        duration(cell.elapsed_ms()),
        yes_no(cell.pass_all()),
        yes_no(cell.pass_any()),
        if cell.flaky() {
            "; <strong class=\"flaky\">flaky</strong> (passed and failed on one commit)"
        } else {
            ""
        }
    );
    attempts(&mut body, cell, r);
    let bundle = cell.latest_bundle();
    match bundle {
        None => {
            body.push_str("<p class=\"note\">No attempt left a readable evidence bundle, so the sections below are empty.</p>");
        }
        Some(b) => {
            let _ = writeln!(
                body,
                "<p>The sections below show the bundle of the latest attempt that wrote one: <code>{}</code>.</p>",
                r.t(&b.dir().display().to_string())
            );
        }
    }
    let entries = bundle.map(|b| source::list(b.dir())).unwrap_or_default();
    manifest(&mut body, bundle, r);
    steps(&mut body, bundle, r);
    transcript(&mut body, bundle, &cell.trial, r);
    fidelity(&mut body, bundle, r);
    let player =
        super::recordings::section(&mut body, bundle, &entries, &cell.trial, &mut images, r);
    artefacts::screens(&mut body, bundle, &entries, r);
    artefacts::screenshots(&mut body, bundle, &entries, &cell.trial, &mut images, r);
    artefacts::frames(&mut body, bundle, &entries, r);
    artefacts::stub(&mut body, bundle, r);
    artefacts::arbitration_section(&mut body, bundle, r);
    artefacts::files(&mut body, &entries, r);
    let title = format!("{} — StudyLoop run report", cell.trial);
    (
        page(&title, Some("../index.html"), &SECTIONS, &body, player),
        images,
        player,
    )
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "n/a (no attempt ran)",
    }
}

pub(crate) fn heading(body: &mut String, id: &str, label: &str) {
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"h-{id}\">\n<h2 id=\"h-{id}\"><a id=\"{id}\"></a>{label}</h2>"
    );
}

pub(crate) fn end(body: &mut String) {
    body.push_str("</section>\n");
}

pub(crate) fn none(body: &mut String, what: &str) {
    let _ = writeln!(body, "<p class=\"note\">{what}</p>");
}

fn attempts(body: &mut String, cell: &Cell, r: &Render<'_>) {
    heading(body, "attempts", "Attempts");
    if !cell.skips.is_empty() {
        body.push_str("<p>Skip reasons:</p><ul>");
        for s in &cell.skips {
            let _ = write!(body, "<li>{}</li>", r.md(s));
        }
        body.push_str("</ul>\n");
    }
    if cell.attempts.is_empty() {
        none(body, "No attempt ran (no results line).");
    } else {
        body.push_str("<table><caption>Every results line of this trial</caption><thead><tr><th scope=\"col\">Attempt</th><th scope=\"col\">Outcome</th><th scope=\"col\">Time</th><th scope=\"col\">Category</th><th scope=\"col\">Commit</th><th scope=\"col\">Recorded</th><th scope=\"col\">Message</th><th scope=\"col\">Bundle</th></tr></thead><tbody>\n");
        for a in &cell.attempts {
            attempt_row(body, a, r);
        }
        body.push_str("</tbody></table>\n");
    }
    end(body);
}

fn attempt_row(body: &mut String, a: &Attempt, r: &Render<'_>) {
    let bundle = match (&a.bundle_path, &a.bundle_error) {
        (None, _) => "none".to_owned(),
        (Some(p), None) => format!("<code>{}</code>", r.t(p)),
        (Some(p), Some(e)) => format!("<code>{}</code> (unreadable: {})", r.t(p), r.t(e)),
    };
    let _ = writeln!(
        body,
        "<tr class=\"{0}\"><td>{1}</td><td>{0}</td><td>{2}</td><td>{3}</td><td>{4}</td><td>{5}</td><td>{6}</td><td>{7}</td></tr>",
        a.outcome.as_str(),
        a.number.map_or_else(|| "–".to_owned(), |n| n.to_string()),
        duration(a.elapsed_ms),
        a.category.map_or("–", |c| c.as_str()),
        r.t(a.commit().unwrap_or("unknown")),
        r.t(&a.time),
        r.md(a.message.as_deref().unwrap_or("")),
        bundle
    );
}

fn manifest(body: &mut String, bundle: Option<&Bundle>, r: &Render<'_>) {
    heading(body, "manifest", "Manifest");
    if let Some(b) = bundle {
        let problems = b.problems();
        if problems.is_empty() {
            let _ = writeln!(
                body,
                "<p class=\"passed\">Verified: every file matches the manifest's sha256 inventory (manifest {}).</p>",
                r.t(&b.digest())
            );
        } else {
            body.push_str("<p class=\"failed\">Verification found problems:</p><ul>");
            for p in problems {
                let _ = write!(body, "<li>{}</li>", r.t(p));
            }
            body.push_str("</ul>\n");
        }
        match serde_json::to_string_pretty(b.manifest()) {
            Ok(text) => body.push_str(&r.pre(&text, false)),
            Err(e) => none(body, &r.t(&e.to_string())),
        }
    } else {
        none(body, "No bundle.");
    }
    end(body);
}

fn steps(body: &mut String, bundle: Option<&Bundle>, r: &Render<'_>) {
    heading(body, "steps", "Steps");
    let steps = bundle.and_then(|b| step_records(b.dir()));
    match steps {
        None => none(
            body,
            "No step record (steps.json or lifecycle/) in the bundle.",
        ),
        Some(steps) => {
            let longest = steps
                .iter()
                .filter_map(|s| s.get("elapsed_ms").and_then(Value::as_u64))
                .max()
                .unwrap_or(0)
                .max(1);
            body.push_str("<ol>\n");
            for s in &steps {
                step_item(body, s, longest, r);
            }
            body.push_str("</ol>\n");
        }
    }
    end(body);
}

/// `steps.json`, or a UAT bundle's `lifecycle/NN-*.json` in order.
pub(crate) fn step_records(dir: &Path) -> Option<Vec<Value>> {
    if let Some(Value::Array(a)) = source::read_json(&dir.join("steps.json"), 8 << 20) {
        return Some(a);
    }
    // From the bundle's own listing: a `lifecycle` that is a symlink is listed as
    // one entry and never entered, so no outside file can pose as a step.
    let lifecycle: Vec<Value> = source::list(dir)
        .iter()
        .filter(|e| {
            e.regular
                && e.rel
                    .strip_prefix("lifecycle/")
                    .is_some_and(|name| name.ends_with(".json") && !name.contains('/'))
        })
        .filter_map(|e| source::read_json(&dir.join(&e.rel), 8 << 20))
        .collect();
    (!lifecycle.is_empty()).then_some(lifecycle)
}

fn step_item(body: &mut String, s: &Value, longest: u64, r: &Render<'_>) {
    let str_of = |k: &str| s.get(k).and_then(Value::as_str).unwrap_or("");
    let ok = s.get("ok").and_then(Value::as_bool);
    let ms = s.get("elapsed_ms").and_then(Value::as_u64);
    let width = ms.map_or(0, |m| (m * 100 / longest).max(1));
    let class = match ok {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "skipped",
    };
    let _ = write!(
        body,
        "<li class=\"{class}\"><strong>{}</strong> {} — {} <span class=\"bar\" style=\"width:{width}px\" aria-hidden=\"true\"></span> {}",
        r.t(str_of("kind")),
        r.t(str_of("name")),
        if ok == Some(true) {
            "ok"
        } else if ok == Some(false) {
            "FAILED"
        } else {
            "?"
        },
        duration(ms)
    );
    if !str_of("what").is_empty() {
        let _ = write!(body, "<br>{}", r.t(str_of("what")));
    }
    if !str_of("error").is_empty() {
        let _ = write!(body, "<br><strong>Error:</strong> {}", r.t(str_of("error")));
    }
    if let Some(Value::Array(checks)) = s.get("checks")
        && !checks.is_empty()
    {
        body.push_str("<ul>");
        for c in checks {
            let cs = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
            let cok = c.get("ok").and_then(Value::as_bool) == Some(true);
            let _ = write!(
                body,
                "<li class=\"{}\">check {} — {} {}{}</li>",
                if cok { "passed" } else { "failed" },
                r.t(cs("name")),
                if cok { "ok" } else { "FAILED" },
                duration(c.get("elapsed_ms").and_then(Value::as_u64)),
                if cs("error").is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.t(cs("error")))
                }
            );
        }
        body.push_str("</ul>");
    }
    body.push_str("</li>\n");
}

fn transcript(body: &mut String, bundle: Option<&Bundle>, trial: &str, r: &Render<'_>) {
    heading(body, "transcript", "Transcript");
    let Some(b) = bundle else {
        none(body, "No bundle.");
        end(body);
        return;
    };
    let sources: Vec<String> = source::read_json(&b.dir().join("fidelity.json"), 8 << 20)
        .and_then(|f| f.get("turns").cloned())
        .and_then(|t| t.as_array().cloned())
        .map(|turns| {
            turns
                .iter()
                .map(|t| {
                    t.get("source")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default();
    let turns = source::read_json(&b.dir().join("transcript.json"), 16 << 20)
        .and_then(|t| t.get("turns").and_then(Value::as_array).cloned());
    match turns {
        Some(turns) if !turns.is_empty() => {
            for (i, t) in turns.iter().enumerate() {
                let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("");
                let source = sources.get(i).map_or("not recorded", String::as_str);
                let _ = writeln!(
                    body,
                    "<h3>Turn {}</h3>\n<div class=\"learner\"><p><strong>Learner</strong></p>{}</div>\n<div class=\"mentor\"><p><strong>Mentor</strong> (reply source: {}; {})</p>{}</div>",
                    i + 1,
                    r.pre(s("learner"), false),
                    r.t(source),
                    duration(t.get("elapsed_ms").and_then(Value::as_u64)),
                    r.pre(s("mentor_reply"), false)
                );
            }
            export_links(body, b, trial, r);
        }
        _ => none(
            body,
            "No transcript.json in the bundle (a probe or a paste trial holds no conversation).",
        ),
    }
    end(body);
}

/// "Trajectory (ATIF)" and "Spans (OTLP)" links to the exports the report
/// writes beside the pages (`exports`), for those this bundle has.
fn export_links(body: &mut String, b: &Bundle, trial: &str, r: &Render<'_>) {
    let (atif, otlp) = super::exports::available(b);
    if !atif {
        return;
    }
    let (atif_path, otlp_path) = super::exports::paths(trial);
    let _ = write!(
        body,
        "<p>Export (redacted): <a href=\"../{}\">Trajectory (ATIF)</a>",
        r.t(&atif_path)
    );
    if otlp {
        let _ = write!(
            body,
            " · <a href=\"../{}\">Spans (OTLP)</a>",
            r.t(&otlp_path)
        );
    }
    body.push_str("</p>\n");
}

fn fidelity(body: &mut String, bundle: Option<&Bundle>, r: &Render<'_>) {
    heading(body, "fidelity", "Reply fidelity");
    match bundle.and_then(|b| b.manifest().fidelity.clone()) {
        Some(f) => {
            let sources: Vec<&str> = f.sources.iter().map(|s| s.as_str()).collect();
            let _ = writeln!(
                body,
                "<p class=\"{}\">Ratio {} against floor {:.2} over {} scored of {} turn(s); sources: {}.</p>",
                if f.pass { "passed" } else { "failed" },
                f.ratio
                    .map_or_else(|| "unknown".to_owned(), |x| format!("{x:.3}")),
                f.floor,
                f.scored_turns,
                f.turns,
                r.t(&sources.join(", "))
            );
        }
        None => none(body, "Unknown: the cell recorded no mentor reply."),
    }
    end(body);
}
