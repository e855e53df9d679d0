//! Per-harness availability probes: the first live trials.
//!
//! `probe::<harness>` resolves the harness binary on the scratch env's `PATH`
//! (a named skip when absent, decided when trials are built), runs its
//! `--version` inside a fresh scratch world with a deadline, then, wherever the
//! auth mode allows, its authenticated probe: the harness provisioned for the mode
//! (stub-provider and local-model: the case's own stub provider; real-auth: the
//! operator's login) and one one-shot prompt through it (`harness_spec::auth_probe`). A harness
//! that is not signed in is a named skip ("not logged in: …, run …"), never an error.
//! In scrubbed mode, or for a harness with no recipe for the mode, it stays a
//! presence-and-version probe and the manifest says so in its notes. It writes an
//! evidence bundle recording the binary path and version. Like every live trial it is a case on the
//! engine (`crate::case`): its scratch world sits in a slot, and the finish
//! step proves the sweep and writes the bundle to the run dir.

use std::time::Duration;

use serde::Serialize;

use crate::case::{Case, RunDirBundle, StepFailure, Steps};
use crate::command::RunError;
use crate::evidence::Surface;
use crate::harness_spec::install_hint;
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::HarnessName;

/// How long a `--version` may take: node-based CLIs start slowly when cold.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);
/// What the manifest says about a probe that stayed presence-only.
pub(crate) const PROBE_NOTE: &str =
    "presence-and-version probe only: no model call, no authentication check";
/// What the manifest says about a probe that also sent a one-shot prompt.
pub const AUTH_PROBE_NOTE: &str = "authenticated probe: presence, version and one one-shot prompt through the provisioned model path";

/// The trial name for `harness`'s probe.
pub(crate) fn trial_name(harness: HarnessName) -> String {
    format!("probe::{harness}")
}

/// The probe trial for `harness`.
pub(crate) fn probe_trial(harness: HarnessName) -> TrialSpec {
    TrialSpec::gated(trial_name(harness), move |ctx| run_probe(ctx, harness))
        .requires(Requirement::HarnessSelected(harness))
        .requires(Requirement::BinaryOnScratchPath {
            binary: harness.binary(),
            fix: install_hint(harness),
        })
}

/// What `probe.json` in the bundle holds.
#[derive(Debug, Serialize)]
struct ProbeRecord {
    binary: String,
    argv: Vec<String>,
    exit_code: Option<i32>,
    timed_out: bool,
    elapsed_ms: Option<u64>,
    stdout: String,
    stderr: String,
}

fn run_probe(ctx: &TrialContext, harness: HarnessName) -> TrialReport {
    Case::new(ctx, harness, Surface::Probe)
        .run(&RunDirBundle::new(ctx), probe)
        .report()
}

fn probe(c: &mut Case<'_>) -> Result<(), StepFailure> {
    // No learner takes part.
    c.record.facts.actor_backend = None;
    c.step("scratch world", crate::lane::setup::make_world)?;
    let binary = c.step("harness binary on the scratch PATH", |c| {
        let h = c.harness;
        c.env.find_binary(h.binary()).ok_or_else(|| {
            StepFailure::skipped(format!(
                "{} not found on PATH ({})",
                h.binary(),
                install_hint(h)
            ))
        })
    })?;
    c.record.facts.binary_path = Some(binary.display().to_string());
    c.step("--version prints a version", |c| {
        let scratch = c.scratch()?;
        let mut cmd = scratch.command(&binary);
        cmd.arg("--version");
        let (record, problem) = match scratch.run(&mut cmd, VERSION_TIMEOUT) {
            Ok(done) => {
                let record = ProbeRecord {
                    binary: binary.display().to_string(),
                    argv: vec![binary.display().to_string(), "--version".into()],
                    exit_code: done.status.code(),
                    timed_out: false,
                    elapsed_ms: u64::try_from(done.elapsed.as_millis()).ok(),
                    stdout: done.stdout_text(),
                    stderr: done.stderr_text(),
                };
                let problem = (!done.status.success()).then(|| {
                    format!(
                        "`{} --version` exited with {}",
                        binary.display(),
                        done.status
                    )
                });
                (record, problem)
            }
            Err(err) => (failed_record(&binary, &err), Some(err.to_string())),
        };
        // Some CLIs (pi) print their version on stderr.
        let version = version_line(&record.stdout).or_else(|| version_line(&record.stderr));
        c.record.attach_json("probe.json", &record)?;
        c.record.failure_artifacts.push("probe.json".to_owned());
        let problem = problem.or_else(|| {
            version.is_none().then(|| {
                format!(
                    "`{} --version` printed no version (stdout: {:?}, stderr: {:?})",
                    binary.display(),
                    record.stdout,
                    record.stderr
                )
            })
        });
        c.record.facts.harness_version = version;
        problem.map_or(Ok(()), |p| Err(StepFailure::errored(p)))
    })?;
    c.binary = Some(binary);
    if !c.can_probe_login() {
        c.record.notes.push(PROBE_NOTE.to_owned());
        return Ok(());
    }
    c.record.notes.push(AUTH_PROBE_NOTE.to_owned());
    crate::lane::setup::model_path(c, &[])
}

fn failed_record(binary: &std::path::Path, err: &RunError) -> ProbeRecord {
    let (stdout, stderr) = match err {
        RunError::TimedOut { stdout, stderr, .. } => (
            String::from_utf8_lossy(stdout).into_owned(),
            String::from_utf8_lossy(stderr).into_owned(),
        ),
        other => (String::new(), other.to_string()),
    };
    ProbeRecord {
        binary: binary.display().to_string(),
        argv: vec![binary.display().to_string(), "--version".into()],
        exit_code: None,
        timed_out: matches!(err, RunError::TimedOut { .. }),
        elapsed_ms: None,
        stdout,
        stderr,
    }
}

/// The first non-blank stdout line containing a digit: what a `--version`
/// prints. `None` when there is none (an empty or non-version output).
fn version_line(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && l.bytes().any(|b| b.is_ascii_digit()))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_line_needs_a_digit() {
        assert_eq!(
            version_line("\n codex-cli 0.171.0 \n"),
            Some("codex-cli 0.171.0".into())
        );
        assert_eq!(version_line("usage: foo\n"), None);
        assert_eq!(version_line(""), None);
    }

    #[test]
    fn trial_names() {
        assert_eq!(trial_name(HarnessName::Kiro), "probe::kiro");
    }
}
