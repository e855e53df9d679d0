//! Retention for the durable UAT evidence root: `studyloop-uat prune --older-than 90d`.
//!
//! Dry run by default. It only ever considers direct children of the root that are real
//! directories (never symlinks, which are not followed), whose names are run ids and
//! which hold a `manifest.json`; age comes from the run id's UTC timestamp, not from
//! mtimes a copy may reset. Each bundle's `<run-id>.arbitration/` sibling goes with it.
//! Anything else under the root is left alone and reported.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::{DurableRootError, MANIFEST_NAME, RunId, durable_root};

use crate::bundle::arbitration_dir_for;

/// Why pruning could not run.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// `--older-than` is not `<days>d` or `<hours>h`.
    #[error("invalid age `{value}`: expected whole days or hours such as 90d or 36h (at least 1)")]
    Age {
        /// The value given.
        value: String,
    },
    /// The default root could not be resolved.
    #[error(transparent)]
    Root(#[from] DurableRootError),
    /// The root is missing, not a directory, or a symlink.
    #[error("`{}` {why}; pass --root with the durable evidence directory itself", path.display())]
    BadRoot {
        /// The root.
        path: PathBuf,
        /// What is wrong.
        why: &'static str,
    },
    /// Listing or deleting failed.
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One bundle old enough to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The bundle directory.
    pub dir: PathBuf,
    /// Its run id.
    pub run_id: String,
    /// Whole days since the run started.
    pub age_days: u64,
    /// Its arbitration sibling, when there is one.
    pub arbitration: Option<PathBuf>,
}

/// What a prune would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The root examined.
    pub root: PathBuf,
    /// Bundles older than the cut-off, oldest first.
    pub delete: Vec<Candidate>,
    /// Bundles young enough to keep.
    pub kept: usize,
    /// Entries left alone that are not bundles: (name, why).
    pub skipped: Vec<(String, String)>,
}

/// Parses `90d` or `36h`.
///
/// # Errors
/// [`PruneError::Age`] for anything else.
pub fn parse_age(value: &str) -> Result<Duration, PruneError> {
    let bad = || PruneError::Age {
        value: value.to_owned(),
    };
    let (number, unit) = value.trim().split_at(value.trim().len().saturating_sub(1));
    let n: u64 = number.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?;
    let secs = match unit {
        "d" => n.checked_mul(86_400),
        "h" => n.checked_mul(3_600),
        _ => None,
    };
    secs.map(Duration::from_secs).ok_or_else(bad)
}

/// The durable root (`STUDYLOOP_UAT_EVIDENCE_ROOT`, else `~/.local/share/studyloop/uat`),
/// resolved by the evidence module's one resolver from the real environment.
///
/// # Errors
/// [`PruneError::Root`] when neither the override nor HOME is usable.
pub fn default_root(env: &CallerEnv) -> Result<PathBuf, PruneError> {
    // The resolver answers for a run; its parent is the root every run shares.
    let one_run = durable_root(env, &RunId::generate())?;
    Ok(one_run.parent().map(Path::to_path_buf).unwrap_or(one_run))
}

/// Lists what pruning `root` of bundles older than `older_than` (at `now`) would delete.
///
/// # Errors
/// [`PruneError`] when the root is unusable or cannot be listed.
pub fn plan(root: &Path, older_than: Duration, now: Timestamp) -> Result<Plan, PruneError> {
    check_root(root)?;
    let io = |action, path: &Path| {
        let path = path.to_owned();
        move |source| PruneError::Io {
            action,
            path,
            source,
        }
    };
    let mut plan = Plan {
        root: root.to_owned(),
        delete: Vec::new(),
        kept: 0,
        skipped: Vec::new(),
    };
    for entry in std::fs::read_dir(root).map_err(io("list", root))? {
        let entry = entry.map_err(io("list", root))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let dir = entry.path();
        let Some(started) = RunId::parse(&name)
            .ok()
            .and_then(|id| run_started(id.as_str()))
        else {
            if !name.ends_with(".arbitration") {
                plan.skipped
                    .push((name, "its name is not a run id".to_owned()));
            }
            continue;
        };
        if let Err(why) = check_bundle_dir(&dir) {
            plan.skipped.push((name, why.to_owned()));
            continue;
        }
        let age = now.duration_since(started).as_secs().max(0).cast_unsigned();
        if age < older_than.as_secs() {
            plan.kept += 1;
            continue;
        }
        let arbitration = Some(arbitration_dir_for(&dir)).filter(|a| is_real_dir(a));
        plan.delete.push(Candidate {
            dir,
            run_id: name,
            age_days: age / 86_400,
            arbitration,
        });
    }
    plan.delete.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    plan.skipped.sort();
    Ok(plan)
}

/// Deletes what `plan` lists, re-checking each bundle just before removing it; returns
/// the directories removed.
///
/// # Errors
/// [`PruneError::Io`] at the first removal that fails (earlier ones stay removed).
pub fn apply(plan: &Plan) -> Result<Vec<PathBuf>, PruneError> {
    check_root(&plan.root)?;
    let mut removed = Vec::new();
    for candidate in &plan.delete {
        // Re-check: the tree may have changed since the plan was made.
        if candidate.dir.parent() != Some(plan.root.as_path())
            || check_bundle_dir(&candidate.dir).is_err()
        {
            continue;
        }
        for dir in std::iter::once(&candidate.dir).chain(candidate.arbitration.as_ref()) {
            if is_real_dir(dir) {
                // std's remove_dir_all does not follow symlinks inside the tree.
                std::fs::remove_dir_all(dir).map_err(|source| PruneError::Io {
                    action: "delete",
                    path: dir.clone(),
                    source,
                })?;
                removed.push(dir.clone());
            }
        }
    }
    Ok(removed)
}

fn check_root(root: &Path) -> Result<(), PruneError> {
    let bad = |why| PruneError::BadRoot {
        path: root.to_owned(),
        why,
    };
    match std::fs::symlink_metadata(root) {
        Err(_) => Err(bad("does not exist")),
        Ok(m) if m.file_type().is_symlink() => Err(bad("is a symlink, which prune never follows")),
        Ok(m) if !m.is_dir() => Err(bad("is not a directory")),
        Ok(_) => Ok(()),
    }
}

fn check_bundle_dir(dir: &Path) -> Result<(), &'static str> {
    if !is_real_dir(dir) {
        return Err("it is not a directory (or is a symlink, which prune never follows)");
    }
    match std::fs::symlink_metadata(dir.join(MANIFEST_NAME)) {
        Ok(m) if m.is_file() => Ok(()),
        _ => Err("it holds no manifest.json, so it is not a finished bundle"),
    }
}

fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The UTC start encoded in a run id (`YYYYmmddTHHMMSSZ-…`).
fn run_started(run_id: &str) -> Option<Timestamp> {
    let stamp = run_id.get(..15)?;
    Timestamp::strptime("%Y%m%dT%H%M%S%z", format!("{stamp}+0000")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_parse_days_and_hours_only() {
        assert_eq!(parse_age("90d").unwrap(), Duration::from_secs(90 * 86_400));
        assert_eq!(parse_age("36h").unwrap(), Duration::from_secs(36 * 3_600));
        for bad in ["", "d", "0d", "90", "90m", "-1d", "1.5d", "ninety"] {
            assert!(
                parse_age(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("90d or 36h"),
                "{bad}"
            );
        }
    }

    #[test]
    fn run_ids_carry_their_start() {
        let t = run_started("20260115T120000Z-0123abcd").unwrap();
        assert_eq!(t.to_string(), "2026-01-15T12:00:00Z");
    }
}
