//! The authenticated availability probe: one non-interactive prompt through the
//! harness's own one-shot mode (`codex exec`, `claude -p`, `pi -p`, `opencode
//! run`, `grok -p`) in the cell's env, from a throwaway directory so no session
//! of the lane's working dir is touched. It passes when the harness exits 0 and
//! prints a reply (in stub-provider mode: the stub's `MENTOR-REPLY`), which
//! proves the configured model path works before a TUI is driven.
//!
//! A probe that fails because the harness is not signed in (its output says so:
//! "not logged in", a 401, a missing or invalid API key; `super::login`) is
//! [`ProbeError::NotLoggedIn`],
//! which every caller turns into a named skip ("not logged in: …, run …"), never a lane
//! error: a missing login is the operator's to fix, not a product failure. kiro's
//! `whoami` (its probe has no prompt) is read the same way.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::login::{LoggedOut, said_by_harness};
use super::{HarnessSpec, ProbeKind};
use crate::scratch::{Env, Scratch};

/// The prompt the probe sends (short, so the stub's echo is all of it).
pub(crate) const PROBE_PROMPT: &str = "availability probe: reply briefly";
/// One-shot modes start cold; opencode's is CPU-bound on a loaded 2-core box.
const PROBE_TIMEOUT: Duration = Duration::from_secs(90);

/// Why the authenticated probe failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ProbeError {
    /// The harness has no one-shot mode to probe (presence-only).
    #[error("{harness} has no authenticated probe")]
    NoProbe {
        /// The harness.
        harness: String,
    },
    /// The probe's throwaway directory could not be made.
    #[error("creating {path}: {detail}")]
    Dir {
        /// The directory.
        path: std::path::PathBuf,
        /// The OS error.
        detail: String,
    },
    /// The one-shot call could not run, timed out or was interrupted.
    #[error("{0}")]
    Run(String),
    /// It failed and its output says it is not signed in (a skip, not an error).
    #[error(transparent)]
    NotLoggedIn(LoggedOut),
    /// It ran but printed no reply (or failed).
    #[error(
        "`{command} \"{PROBE_PROMPT}\"` exited {status} without a reply{failed}; stderr: {stderr_tail}"
    )]
    NoReply {
        /// The binary and its one-shot arguments.
        command: String,
        /// Its exit status.
        status: String,
        /// ` (failure)` when it exited non-zero.
        failed: &'static str,
        /// Its last two stderr lines.
        stderr_tail: String,
    },
}

/// What the probe saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProbeResult {
    /// The reply line it found.
    pub reply: String,
    /// How long the one-shot call took.
    pub elapsed: Duration,
}

/// Runs `spec`'s authenticated probe with `binary` in `env`, cwd `dir`.
/// `expect` is the text the reply must contain (`Some("MENTOR-REPLY")` with a
/// stub), `None` to accept any non-empty output. A presence-only harness is an
/// error naming why it has no probe.
///
/// # Errors
/// [`ProbeError`].
pub fn run(
    spec: &HarnessSpec,
    scratch: &Scratch,
    env: &Env,
    binary: &Path,
    dir: &Path,
    expect: Option<&str>,
) -> Result<ProbeResult, ProbeError> {
    let ProbeKind::Authenticated { args, prompt, .. } = spec.probe else {
        return Err(ProbeError::NoProbe {
            harness: spec.name.to_string(),
        });
    };
    crate::private_fs::create_dir(dir).map_err(|e| ProbeError::Dir {
        path: dir.to_owned(),
        detail: e.to_string(),
    })?;
    let mut cmd = Command::new(binary);
    env.apply(&mut cmd).current_dir(dir).args(args);
    if prompt {
        cmd.arg(PROBE_PROMPT);
    }
    let done = scratch
        .run(&mut cmd, PROBE_TIMEOUT)
        .map_err(|e| ProbeError::Run(e.to_string()))?;
    let out = done.stdout_text();
    let reply = out
        .lines()
        .map(str::trim)
        .find(|l| expect.map_or(!l.is_empty(), |e| l.contains(e)))
        .map(str::to_owned);
    let stderr = done.stderr_text();
    let answered = done.status.success() && reply.is_some();
    // Only a failed probe is read for these, so a reply that mentions a login is no skip.
    if !answered && let Some(evidence) = said_by_harness(&out).or_else(|| said_by_harness(&stderr))
    {
        return Err(ProbeError::NotLoggedIn(LoggedOut::new(
            spec.name, &evidence,
        )));
    }
    match (done.status.success(), reply) {
        (true, Some(reply)) => Ok(ProbeResult {
            reply,
            elapsed: done.elapsed,
        }),
        (ok, _) => Err(ProbeError::NoReply {
            command: format!("{} {}", binary.display(), args.join(" ")),
            status: done.status.to_string(),
            failed: if ok { "" } else { " (failure)" },
            stderr_tail: stderr.lines().rev().take(2).collect::<Vec<_>>().join(" / "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skip_message_names_the_harness_evidence_and_fix() {
        let e = ProbeError::NotLoggedIn(LoggedOut::new(
            crate::selection::HarnessName::Kiro,
            "Not logged in",
        ));
        let text = e.to_string();
        assert!(text.starts_with("not logged in: kiro: "), "{text}");
        assert!(text.contains("run `kiro-cli login`"), "{text}");
    }
}
