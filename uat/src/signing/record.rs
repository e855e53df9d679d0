//! The release record: exactly what `studyloop-uat sign` signs, recomputed from the run
//! by `verify --signed`.
//!
//! It is the sign-off summary of the run (as `studyloop-uat signoff` would write it,
//! less its own `run_id` and `date`, which are new on every sign-off): the verdict and
//! every reason, each required cell's recorded outcome, bundle run id and run facts, the
//! sha256 of every bundle's exact manifest bytes (which binds each bundle's inventory,
//! so every evidence file), the scores, and the version and sha256 of the sign-off
//! definition, rubric, redaction rules and roster. Beside it, the sha256 of every file
//! under each signed-off bundle's `<bundle>.arbitration/` (the seat replies, the
//! arbitration), so a seat reply rewritten by hand together with a consistent
//! arbitration still changes the record. The bytes signed are [`canonical_bytes`]:
//! compact JSON, keys sorted.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};
use studyloop_redaction::Redactor;

use super::SigningError;
use crate::signoff::{self, Pins};

/// The record's format version.
const RECORD_SCHEMA: u32 = 1;
/// What the record says it is, so its bytes cannot be mistaken for another signed
/// document's.
const RECORD_KIND: &str = "studyloop-uat release record";

/// A run's release record and the sign-off it came from.
pub struct Record {
    /// The record (keys sorted).
    pub value: Value,
    /// The sign-off's verdict and reasons.
    pub verdict: signoff::rule::Verdict,
}

/// Recomputes the release record of `run_dir` as the run is now.
///
/// # Errors
/// [`SigningError::Signoff`] when the sign-off reaches no verdict.
pub fn release_record(
    pins: &Pins,
    run_dir: &Path,
    redactor: &Redactor,
) -> Result<Record, SigningError> {
    let report = signoff::assess(pins, &[run_dir.to_owned()], redactor)?;
    let mut summary = report.summary;
    // New on every sign-off: not a fact about the run.
    summary.remove("run_id");
    summary.remove("date");
    let mut arbitrations = Map::new();
    for (cell, dir) in &report.bundle_dirs {
        let arbitration = crate::bundle::arbitration_dir_for(dir);
        if std::fs::symlink_metadata(&arbitration).is_ok() {
            arbitrations.insert(cell.clone(), Value::Object(file_hashes(&arbitration)));
        }
    }
    let value = json!({
        "kind": RECORD_KIND,
        "schema_version": RECORD_SCHEMA,
        "summary": summary,
        "arbitrations": arbitrations,
    });
    Ok(Record {
        value: studyloop_acceptance::evidence::sorted(value),
        verdict: report.verdict,
    })
}

/// The bytes a record's signature covers: compact JSON with sorted keys.
#[must_use]
pub fn canonical_bytes(record: &Value) -> Vec<u8> {
    // A `Value` prints infallibly; sorted here too, so a record parsed back from a
    // signature file gives the same bytes whatever order it was written in.
    studyloop_acceptance::evidence::sorted(record.clone())
        .to_string()
        .into_bytes()
}

/// `relative path → sha256:<hex>` of every regular file under `dir`; anything else (a
/// symlink, a FIFO, an unreadable file) is recorded by what it is, so it too changes
/// the record and is never opened through.
fn file_hashes(dir: &Path) -> Map<String, Value> {
    let mut out = BTreeMap::new();
    walk(dir, "", &mut out, 0);
    out.into_iter().collect()
}

/// Deeper than any arbitration (`seats/<id>.txt`): a planted deep tree ends here.
const MAX_DEPTH: usize = 8;

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Value>, depth: usize) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) => {
            out.insert(format!("{prefix}."), Value::from("an unreadable directory"));
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        let path = entry.path();
        let kind = std::fs::symlink_metadata(&path).map(|m| m.file_type());
        let value = match kind {
            Ok(t) if t.is_dir() && depth < MAX_DEPTH => {
                walk(&path, &format!("{rel}/"), out, depth + 1);
                continue;
            }
            Ok(t) if t.is_file() => match studyloop_acceptance::evidence::hash_file(&path) {
                Ok(hex) => Value::from(format!("sha256:{hex}")),
                // Never the error text: it names the path, which differs by machine.
                Err(_) => Value::from("an unreadable file"),
            },
            Ok(t) if t.is_symlink() => Value::from("a symlink"),
            Ok(t) if t.is_dir() => Value::from("a directory nested too deep"),
            Ok(_) => Value::from("not a regular file"),
            Err(_) => Value::from("an unreadable entry"),
        };
        out.insert(rel, value);
    }
}
