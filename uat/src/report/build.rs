//! Building the site: read the run directories once, ask the sign-off for its
//! verdict, render every page and write it (temp then rename) under the output
//! directory, copying the screenshots the pages show.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use studyloop_acceptance::ledger::RunRecords;
use studyloop_redaction::Redactor;

use super::error::ReportError;
use super::html::{Render, slug};
use super::overview::SignoffView;
use super::source;
use crate::signoff::{Pins, SignoffError};

/// What to build.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Run directories (one per shard or run).
    pub runs: Vec<PathBuf>,
    /// Where the site goes.
    pub out: PathBuf,
    /// The shareable variant: only what the redaction rules pass.
    pub redacted: bool,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Written {
    /// `index.html`.
    pub index: PathBuf,
    /// Cell pages.
    pub cells: usize,
    /// Files copied from bundles (screenshots, recordings).
    pub copied: usize,
    /// The verdict word, or `none`.
    pub verdict: String,
    /// Time taken.
    pub elapsed: Duration,
}

/// Builds the site described by `options`; `redactor` rewrites the redacted
/// variant and the sign-off's reasons.
///
/// # Errors
/// [`ReportError`] when a run directory cannot be read or a page cannot be
/// written. A sign-off that reaches no verdict is shown, not an error.
pub fn build(options: &ReportOptions, redactor: &Redactor) -> Result<Written, ReportError> {
    let started = Instant::now();
    if options.runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let records = RunRecords::read_all(&options.runs)?;
    let cells = super::model::cells(&records);
    let render = Render {
        redactor: options.redacted.then_some(redactor),
    };
    let out = &options.out;
    prepare(out)?;
    let signoff = if acceptance_only(&records) {
        SignoffView::NotApplicable
    } else {
        signoff(&options.runs, redactor, &out.join("signoff"))
    };
    let verdict = signoff.word().to_owned();
    let index = out.join("index.html");
    let drift_root = super::drift::root_for(&options.runs);
    let (drift_page, drift_runs) = super::drift::render(drift_root.as_deref(), &render);
    write(&out.join(super::drift::PAGE), drift_page.as_bytes())?;
    write(
        &index,
        super::overview::render(&cells, &options.runs, &signoff, drift_runs, &render).as_bytes(),
    )?;
    // The index's filters: beside it, so `script-src 'self'` allows it.
    write(&out.join(super::filter::PATH), super::filter::JS.as_bytes())?;
    let mut copied = 0;
    let mut player = false;
    for cell in &cells {
        let (page, shots, needs_player) = super::cell::render(cell, &render);
        copied += super::exports::write(cell, out, redactor)?;
        player |= needs_player;
        write(
            &out.join("cells")
                .join(format!("{}.html", slug(&cell.trial))),
            page.as_bytes(),
        )?;
        for (from, to) in shots {
            let Some(bytes) =
                source::read_bytes(&from, source::MAX_IMAGE.max(super::player::MAX_EMBEDDED))
            else {
                continue;
            };
            let target = out.join(&to);
            if let Some(parent) = target.parent() {
                make_dir(parent)?;
            }
            write(&target, &bytes)?;
            copied += 1;
        }
    }
    if player {
        let dir = out.join(super::player::DIR);
        make_dir(&out.join("assets"))?;
        make_dir(&dir)?;
        for (name, bytes) in super::player::FILES {
            write(&dir.join(name), bytes)?;
        }
    }
    Ok(Written {
        index,
        cells: cells.len(),
        copied,
        verdict,
        elapsed: started.elapsed(),
    })
}

/// Every run directory carries the acceptance runner's shard record and none
/// the uat runner's: the sign-off (which judges UAT journeys) is not asked.
fn acceptance_only(records: &RunRecords) -> bool {
    let runs = records.runs();
    !runs.is_empty()
        && runs.iter().all(|run| {
            run.shards.iter().any(|s| s.tier == "acceptance")
                && !run.shards.iter().any(|s| s.tier == "uat")
        })
}

/// The sign-off's verdict over `runs` (its summary goes to `dir` on PASS only).
fn signoff(runs: &[PathBuf], redactor: &Redactor, dir: &Path) -> SignoffView {
    let result = Pins::load_default().and_then(|pins| {
        let report = crate::signoff::run(&pins, runs, redactor, dir)?;
        let definition = format!(
            "sign-off definition v{} ({})",
            pins.definition.version(),
            pins.definition.sha256()
        );
        Ok::<_, SignoffError>((report, definition))
    });
    match result {
        Ok((report, definition)) => SignoffView::Verdict {
            word: report.verdict.word(),
            reasons: report.verdict.reasons.clone(),
            notes: report.notes.clone(),
            definition,
        },
        Err(e) => SignoffView::NoVerdict(redactor.redact(&e.to_string())),
    }
}

fn out_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |e| ReportError::Out {
        path: path.to_owned(),
        detail: e.to_string(),
    }
}

/// The output tree: the directory and `cells/`, private, never through a symlink.
fn prepare(out: &Path) -> Result<(), ReportError> {
    if std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ReportError::Out {
            path: out.to_owned(),
            detail: "it is a symlink".into(),
        });
    }
    make_dir(out)?;
    make_dir(&out.join("cells"))
}

pub(crate) fn make_dir(dir: &Path) -> Result<(), ReportError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(ReportError::Out {
            path: dir.to_owned(),
            detail: "it exists and is not a directory (or is a symlink)".into(),
        });
    }
    studyloop_acceptance::private_fs::create_dir(dir).map_err(out_err(dir))
}

pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    crate::atomic::write(path, bytes, 0o600).map_err(out_err(path))
}
