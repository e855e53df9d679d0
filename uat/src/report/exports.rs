//! A cell's conversation exported beside its page (issue 28 item 8):
//! `trajectories/<cell>.atif.json` and `trajectories/<cell>.otlp.json`, the
//! same documents `studyloop-uat export-trajectory` writes (always redacted,
//! in either report variant), linked from the cell page's transcript as
//! "Trajectory (ATIF)" and "Spans (OTLP)". A cell whose bundle has no
//! exportable conversation gets neither file nor link; one whose turns lack a
//! wall time gets the ATIF file only (OTLP spans need both ends).

use std::path::Path;

use studyloop_redaction::Redactor;

use super::error::ReportError;
use super::html::slug;
use super::model::Cell;
use crate::bundle::Bundle;
use crate::trajectory::{Conversation, atif, otlp};

/// Where the exports go in a report.
const DIR: &str = "trajectories";

/// The site-relative paths of `trial`'s exports: (ATIF, OTLP).
pub(crate) fn paths(trial: &str) -> (String, String) {
    let s = slug(trial);
    (
        format!("{DIR}/{s}.atif.json"),
        format!("{DIR}/{s}.otlp.json"),
    )
}

/// Which exports `bundle` has: (ATIF, OTLP).
pub(crate) fn available(bundle: &Bundle) -> (bool, bool) {
    match Conversation::read_with(bundle.dir(), str::to_owned) {
        Ok(c) => (true, otlp::spans(&c).is_ok()),
        Err(_) => (false, false),
    }
}

/// Writes `cell`'s exports under `site`; returns how many were written.
///
/// # Errors
/// [`ReportError::Out`] when a file cannot be written.
pub(crate) fn write(cell: &Cell, site: &Path, redactor: &Redactor) -> Result<usize, ReportError> {
    let Some(bundle) = cell.latest_bundle() else {
        return Ok(0);
    };
    let Ok(c) = Conversation::read(bundle.dir(), redactor) else {
        return Ok(0);
    };
    let (atif_path, otlp_path) = paths(&cell.trial);
    let mut docs = vec![(atif_path, atif::trajectory(&c))];
    if let Ok(spans) = otlp::spans(&c) {
        docs.push((otlp_path, spans));
    }
    let err = |path: &Path, detail: String| ReportError::Out {
        path: path.to_owned(),
        detail,
    };
    let dir = site.join(DIR);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(err(
                &dir,
                "it exists and is not a directory (or is a symlink)".into(),
            ));
        }
        Err(_) => studyloop_acceptance::private_fs::create_dir(&dir)
            .map_err(|e| err(&dir, e.to_string()))?,
    }
    for (rel, doc) in &docs {
        let path = site.join(rel);
        let text = serde_json::to_string_pretty(doc).map_err(|e| err(&path, e.to_string()))? + "\n";
        crate::atomic::write(&path, text.as_bytes(), 0o600)
            .map_err(|e| err(&path, e.to_string()))?;
    }
    Ok(docs.len())
}
