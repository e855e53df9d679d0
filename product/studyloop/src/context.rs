//! The process context every operation runs in: the environment snapshot, the
//! working directory and the path of this executable (for the `studyloop` shim
//! and the pane's end-on-exit hook). The web server builds one per request
//! from its own process.

use std::path::PathBuf;

use crate::env::Env;

/// Environment, cwd and executable of the acting process.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The environment (read once; never re-read behind the caller's back).
    pub env: Env,
    /// The working directory (project-root scope matching).
    pub cwd: PathBuf,
    /// This executable, absolute (what the session's `studyloop` shim runs).
    pub exe: PathBuf,
}

impl Ctx {
    /// The context of the running process.
    pub fn from_process() -> std::io::Result<Self> {
        Ok(Self {
            env: Env::from_process(),
            cwd: std::env::current_dir()?,
            exe: std::env::current_exe()?,
        })
    }
}

/// Now, as RFC 3339 UTC with second precision (`2026-11-30T03:50:00Z`).
pub fn now_rfc3339() -> String {
    crate::clock::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Now as UTC `HH:MM` (the feeds' time stamp).
pub fn now_hhmm() -> String {
    crate::clock::now().strftime("%H:%M").to_string()
}

/// Seconds between an RFC 3339 stamp and now; `None` if it does not parse.
pub fn seconds_since(stamp: &str) -> Option<i64> {
    let t: jiff::Timestamp = stamp.parse().ok()?;
    Some(crate::clock::now().as_second() - t.as_second())
}
