//! `junit.xml` in the run directory: the acceptance and UAT runs as JUnit XML,
//! so CI systems show trials as they show nextest's own report (skips with
//! their reasons, failures with their message, category and bundle path).
//!
//! Written from the run directory's logs (never from memory): each runner
//! process appends its results line first, then, under an exclusive `flock` on
//! `.junit.lock`, reads every line and rewrites the file (temp then rename,
//! 0600). Under nextest every trial is its own process; the last to take the
//! lock has seen every line before it, so the final file is complete. The
//! sharded CI merges the per-shard files itself (issue 18 relies on this name).

use std::fmt::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::evidence::Tier;
use crate::ledger::{RunRecords, TrialOutcome, TrialStatus};
use crate::markup::escape;

/// The file's name in the run directory.
pub const JUNIT_FILE: &str = "junit.xml";
/// The lock serialising rewrites of [`JUNIT_FILE`].
const LOCK_FILE: &str = ".junit.lock";

/// Why the JUnit file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    /// The logs could not be read.
    #[error("cannot write {JUNIT_FILE}: {0}")]
    Ledger(#[from] crate::ledger::LedgerError),
    /// The lock or the file could not be written.
    #[error("cannot write {}: {detail} (is the run directory writable and not a symlink?)", path.display())]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
}

/// Rewrites `<run_dir>/junit.xml` from the run directory's logs, under the lock.
pub fn write(run_dir: &Path, tier: Tier) -> Result<PathBuf, JunitError> {
    let lock_path = run_dir.join(LOCK_FILE);
    let io = |path: &Path, detail: String| JunitError::Io {
        path: path.to_owned(),
        detail,
    };
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(
            (rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::NONBLOCK
                | rustix::fs::OFlags::CLOEXEC)
                .bits() as i32,
        )
        .open(&lock_path)
        .map_err(|e| io(&lock_path, e.to_string()))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| io(&lock_path, e.to_string()))?;
    let records = RunRecords::read(run_dir)?;
    let xml = render(&records, tier);
    let path = run_dir.join(JUNIT_FILE);
    crate::evidence::atomic_write(&path, xml.as_bytes()).map_err(|e| io(&path, e.to_string()))?;
    // The lock is released when `lock` is dropped, after the rename.
    drop(lock);
    Ok(path)
}

/// The JUnit XML of `records`: one `<testsuite>` named for the tier, one
/// `<testcase>` per trial (its worst outcome over every attempt and log line).
pub fn render(records: &RunRecords, tier: Tier) -> String {
    let suite = match tier {
        Tier::Acceptance => "studyloop-acceptance",
        Tier::Uat => "studyloop-uat",
    };
    let counts = records.counts();
    let total = counts.passed + counts.skipped + counts.failed;
    let seconds: f64 = records.trials().values().map(seconds).sum();
    let mut cases = String::new();
    for (name, status) in records.trials() {
        case(&mut cases, name, status);
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    // Jenkins' junit-10.xsd allows no `skipped` on <testsuites> (CI parsers that
    // validate refuse the file): the skip count is on the <testsuite> only.
    let _ = writeln!(
        xml,
        "<testsuites name=\"{suite}\" tests=\"{total}\" failures=\"{}\" errors=\"0\" time=\"{seconds:.3}\">",
        counts.failed
    );
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{suite}\" tests=\"{total}\" failures=\"{}\" skipped=\"{}\" errors=\"0\" time=\"{seconds:.3}\">",
        counts.failed, counts.skipped
    );
    xml.push_str(&cases);
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Wall time of every attempt of a trial, in seconds.
fn seconds(status: &TrialStatus) -> f64 {
    let ms: u64 = status
        .records
        .iter()
        .filter_map(|r| r.meta.elapsed_ms)
        .sum();
    ms as f64 / 1000.0
}

fn case(out: &mut String, name: &str, status: &TrialStatus) {
    let class = name.split("::").next().unwrap_or(name);
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
        escape(name),
        escape(class),
        seconds(status)
    );
    let message = status.message.as_deref().unwrap_or("");
    match status.outcome {
        TrialOutcome::Passed => out.push_str("/>\n"),
        TrialOutcome::Skipped => {
            let _ = writeln!(out, ">\n      <skipped message=\"{}\"/>", escape(message));
            out.push_str("    </testcase>\n");
        }
        TrialOutcome::Failed => {
            let category = status
                .records
                .iter()
                .rev()
                .find(|r| r.outcome == TrialOutcome::Failed)
                .and_then(|r| r.meta.category)
                .map_or("uncategorised", |c| c.as_str());
            let bundle = status.bundle.as_deref().unwrap_or("none written");
            let attempts: Vec<String> = status
                .records
                .iter()
                .filter_map(|r| {
                    Some(format!(
                        "attempt {}: {}",
                        r.meta.attempt?,
                        r.outcome.as_str()
                    ))
                })
                .collect();
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{}\" type=\"{category}\">{}\nbundle: {}\ncategory: {category}{}</failure>",
                escape(message),
                escape(message),
                escape(bundle),
                if attempts.is_empty() {
                    String::new()
                } else {
                    escape(&format!("\n{}", attempts.join("\n")))
                }
            );
            out.push_str("    </testcase>\n");
        }
    }
}
