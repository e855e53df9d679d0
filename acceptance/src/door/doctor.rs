//! `studyloop doctor --json` as a lane check: it must print JSON, report no failing core
//! check, list the cell's harness with a version, and leave the product's own files
//! under the scratch config dir untouched (doctor without `--fix` is read-only).

use std::collections::BTreeMap;
use std::path::Path;

use super::cli::CLI_TIMEOUT;
use crate::bins;
use crate::case::Case;
use crate::validate::CheckError;

/// The doctor's exit code when a core check fails.
const CORE_FAILED: i32 = 2;

/// Runs `studyloop doctor --json` in `l`'s scratch env; its report goes to
/// `product/doctor.json`.
///
/// # Errors
/// [`CheckError::Doctor`] naming what it said or changed; [`CheckError::NoScratch`].
pub(crate) fn doctor(l: &mut Case<'_>) -> Result<(), CheckError> {
    let failed = CheckError::Doctor;
    let studyloop = bins::path("studyloop").map_err(|e| failed(e.to_string()))?;
    let scratch = l.scratch().map_err(|_| CheckError::NoScratch)?;
    let before = tree_sizes(scratch.config_dir());
    let mut cmd = scratch.command(&studyloop);
    l.env.apply(&mut cmd).args(["doctor", "--json"]);
    let done = scratch
        .run(&mut cmd, CLI_TIMEOUT)
        .map_err(|e| failed(e.to_string()))?;
    let after = tree_sizes(scratch.config_dir());
    l.record.attach("product/doctor.json", done.stdout.clone());
    let report = super::json_result(&done.stdout_text(), "doctor")
        .map_err(|e| failed(format!("{e}; stderr: {}", done.stderr_text())))?;
    if done.status.code() == Some(CORE_FAILED) {
        return Err(failed(format!(
            "reports a failing core check (exit 2): {report}"
        )));
    }
    // The harness keeps writing into its session dir (config/sessions/<name>)
    // while doctor runs; only the product's own files must stay untouched.
    let own = |m: BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.into_iter()
            .filter(|(p, _)| !p.contains("/sessions/"))
            .collect()
    };
    let (before, after) = (own(before), own(after));
    if before != after {
        let changed: Vec<&String> = after
            .keys()
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        return Err(failed(format!(
            "changed the product's files under the scratch config dir: {changed:?}"
        )));
    }
    let listed = report["harnesses"].as_array().is_some_and(|hs| {
        hs.iter()
            .any(|h| h["name"] == l.harness.as_str() && !h["version"].is_null())
    });
    if listed {
        Ok(())
    } else {
        Err(failed(format!("reports no version for {}", l.harness)))
    }
}

/// Every regular file under `dir` with its size: a cheap "did anything change".
fn tree_sizes(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                out.insert(e.path().display().to_string(), size);
            }
        }
    }
    out
}
