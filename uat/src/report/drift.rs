//! The report's drift page (`drift.html`, issue 32 item 1): every `just drift`
//! run found, newest first, with its candidate, new failures, broken steps and
//! rows to change, read back from the `compare.json` its comparison wrote.
//!
//! A drift run is a directory of the `drift/` directory beside the runs
//! directory (`target/studyloop/drift/<harness>-<version>-<time>/`, where the
//! recipe writes it), its comparison in `report/compare.json`. A run without
//! one (interrupted, or it failed before comparing) is listed as such; no
//! drift directory says "no drift run", never an empty success.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::html::{Render, page};

/// The comparison as JSON, beside its page (`--compare` writes it; this page
/// reads it back).
pub const COMPARE_JSON: &str = "compare.json";

/// The page's file name in the site.
pub(crate) const PAGE: &str = "drift.html";

/// Where `just drift` writes its runs, for a report of `runs`: `drift/` beside
/// the directory the (first) run directory is in (`target/studyloop/runs/X` →
/// `target/studyloop/drift`).
pub(crate) fn root_for(runs: &[PathBuf]) -> Option<PathBuf> {
    let first = std::path::absolute(runs.first()?).ok()?;
    Some(first.parent()?.parent()?.join("drift"))
}

/// One drift run directory and its comparison, when it has one.
struct DriftRun {
    name: String,
    dir: PathBuf,
    compare: Option<Value>,
}

/// The drift runs under `root`, newest name first (names end in a UTC time).
fn runs(root: &Path) -> Vec<DriftRun> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<DriftRun> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        // Never through a symlink, as every read of the report.
        .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()))
        .map(|dir| DriftRun {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            compare: super::source::read_json(&dir.join("report").join(COMPARE_JSON), 8 << 20),
            dir,
        })
        .collect();
    out.sort_by(|a, b| b.name.cmp(&a.name));
    out
}

/// The page over the drift runs under `root` (`None`: no drift directory
/// could be derived), and how many runs it lists.
pub(crate) fn render(root: Option<&Path>, r: &Render<'_>) -> (String, usize) {
    let found = root.map(runs).unwrap_or_default();
    let mut body = String::from("<h1>Drift runs</h1>\n");
    let where_ = root.map_or_else(
        || "no drift directory".to_owned(),
        |p| p.display().to_string(),
    );
    let _ = writeln!(
        body,
        "<p>Each <code>just drift HARNESS VERSION</code> run under <code>{}</code>: the harness's trials under the pinned version and the candidate, compared.</p>",
        r.t(&where_)
    );
    if found.is_empty() {
        body.push_str("<p class=\"headline\">No drift run: <code>just drift HARNESS [VERSION]</code> has not been run here.</p>\n");
    }
    for run in &found {
        run_section(&mut body, run, r);
    }
    let html = page(
        "StudyLoop drift runs",
        Some("index.html"),
        &[],
        &body,
        false,
    );
    (html, found.len())
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn run_section(body: &mut String, run: &DriftRun, r: &Render<'_>) {
    let id = super::html::slug(&run.name);
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"h-{id}\"><h2 id=\"h-{id}\">Candidate <code>{}</code></h2>",
        r.t(&run.name)
    );
    let Some(c) = &run.compare else {
        let _ = writeln!(
            body,
            "<p>No comparison in <code>{}</code>: the run was interrupted or failed before comparing (see its logs there).</p></section>",
            r.t(&run.dir.display().to_string())
        );
        return;
    };
    let failures = strings(&c["new_failures"]);
    let broken = c["broken_steps"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        body,
        "<p class=\"headline\">{} new failure(s), {} broken step(s). The full comparison: <code>{}</code>.</p>",
        failures.len(),
        broken.len(),
        r.t(&run.dir.join("report/index.html").display().to_string())
    );
    for v in c["versions"].as_array().into_iter().flatten() {
        let s = |k: &str| {
            v[k].as_str()
                .map_or_else(|| "unknown".to_owned(), |x| r.t(x))
        };
        let _ = writeln!(
            body,
            "<p>{}: pinned <code>{}</code> → candidate <code>{}</code></p>",
            s("harness"),
            s("old"),
            s("new")
        );
    }
    body.push_str("<h3>New failures</h3>");
    if failures.is_empty() {
        body.push_str("<p>None.</p>");
    } else {
        body.push_str("<ul>");
        for f in &failures {
            let _ = write!(body, "<li><code>{}</code></li>", r.t(f));
        }
        body.push_str("</ul>");
    }
    body.push_str("<h3>Broken steps and rows to change</h3>");
    if broken.is_empty() {
        body.push_str("<p>None.</p></section>\n");
        return;
    }
    body.push_str("<div class=\"wide\"><table class=\"tokens\"><caption>Rows to change</caption><thead><tr><th scope=\"col\">Trial</th><th scope=\"col\">Step or check</th><th scope=\"col\">Error</th><th scope=\"col\">Harness table</th><th scope=\"col\">Product row</th></tr></thead><tbody>\n");
    for b in &broken {
        let trial = b["trial"].as_str().unwrap_or("");
        let error = b["error"].as_str().unwrap_or("no error recorded");
        for row in b["rows"].as_array().into_iter().flatten() {
            let known = !row["fact"].is_null();
            let cell = |k: &str| match row[k].as_str() {
                Some(s) => format!("<code>{}</code>", r.t(s)),
                None if known => "none".to_owned(),
                None => "unknown".to_owned(),
            };
            let _ = writeln!(
                body,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                r.t(trial),
                r.t(row["name"].as_str().unwrap_or("")),
                r.md(error),
                cell("harness_spec"),
                cell("product"),
            );
        }
    }
    body.push_str("</tbody></table></div></section>\n");
}
