//! One doctor check and its verdict, and one harness as found: the words every check
//! file (the report's own checks, the harness checks) builds its results from.

use std::time::Duration;

use serde::Serialize;

/// How long a harness gets to print its version.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Fine.
    Ok,
    /// Worth knowing; does not fail the run.
    Warn,
    /// Needs fixing.
    Fail,
}

/// One check.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Check name.
    pub name: String,
    /// core | config | database | harness | session.
    pub category: &'static str,
    /// Verdict.
    pub status: Verdict,
    /// What was found.
    pub detail: String,
    /// How to fix it, when not ok.
    pub fix: Option<String>,
    /// A failing core check makes the exit code 2.
    pub core: bool,
}

/// One harness as found.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessInfo {
    /// Harness name.
    pub name: &'static str,
    /// Absolute binary path, when on PATH.
    pub binary: Option<String>,
    /// First line of `--version`, when it answered in time.
    pub version: Option<String>,
}

pub(super) fn check(
    name: &str,
    category: &'static str,
    status: Verdict,
    detail: impl Into<String>,
    fix: Option<&str>,
    core: bool,
) -> Check {
    Check {
        name: name.to_owned(),
        category,
        status,
        detail: detail.into(),
        fix: fix.map(str::to_owned),
        core,
    }
}
