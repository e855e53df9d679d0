//! Per-harness availability probes: the first live trials.
//!
//! `probe::<harness>` resolves the harness binary on the scratch env's `PATH`
//! (a named skip when absent, decided when trials are built), runs its
//! `--version` inside a fresh scratch world with a deadline, and writes an
//! evidence bundle recording the binary path and version. It is a presence and
//! version probe only: no model is called and nothing is authenticated, and the
//! manifest says so in its notes. Lanes that drive the product come later.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use serde::Serialize;

use crate::bins;
use crate::caller_env::CallerEnv;
use crate::command::RunError;
use crate::evidence::{BundleWriter, Manifest, Outcome, RepoIdentity, RunId, Surface};
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::scratch::Scratch;
use crate::selection::HarnessName;

/// How long a `--version` may take: node-based CLIs start slowly when cold.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);
/// What the manifest says about the probe's strength.
pub const PROBE_NOTE: &str =
    "presence-and-version probe only: no model call, no authentication check";

/// The trial name for `harness`'s probe.
pub fn trial_name(harness: HarnessName) -> String {
    format!("probe::{harness}")
}

/// How to get each harness binary, for the skip reason.
pub fn install_hint(harness: HarnessName) -> &'static str {
    match harness {
        HarnessName::Kiro => {
            "install the Kiro CLI yourself and sign in; it is not on npm, so `just harnesses` cannot pin it"
        }
        _ => {
            "run `just harnesses` to install the pinned CLIs into .harnesses/, which `just testacc` puts first on PATH"
        }
    }
}

/// The probe trial for `harness`.
pub fn probe_trial(harness: HarnessName) -> TrialSpec {
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
    let scratch = match Scratch::create_with(ctx.caller.clone(), ctx.selection.auth_mode) {
        Ok(s) => s,
        Err(err) => return TrialReport::failed(format!("could not create a scratch world: {err}")),
    };
    let Some(binary) = scratch.env().find_binary(harness.binary()) else {
        return TrialReport::skipped(format!(
            "{} not found on PATH ({})",
            harness.binary(),
            install_hint(harness)
        ));
    };
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
    let sweep = scratch.close().err().map(|e| e.to_string());
    let problem = problem.or_else(|| sweep.clone().map(|e| format!("scratch sweep failed: {e}")));
    match write_bundle(
        ctx,
        harness,
        &binary,
        version,
        &record,
        problem.as_deref(),
        sweep,
    ) {
        Ok(bundle) => match problem {
            None => TrialReport::passed().with_bundle(bundle),
            Some(p) => TrialReport::failed(p).with_bundle(bundle),
        },
        Err(err) => TrialReport::failed(format!(
            "could not write the evidence bundle: {err}{}",
            problem
                .map(|p| format!("; the probe itself: {p}"))
                .unwrap_or_default()
        )),
    }
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

fn write_bundle(
    ctx: &TrialContext,
    harness: HarnessName,
    binary: &std::path::Path,
    version: Option<String>,
    record: &ProbeRecord,
    problem: Option<&str>,
    sweep: Option<String>,
) -> Result<PathBuf, crate::evidence::EvidenceError> {
    let run_id = RunId::generate();
    let mut manifest = Manifest::new(&run_id, ctx.tier, &ctx.name, Surface::Probe);
    let repo = repo_identity(&ctx.caller);
    manifest.harness = Some(harness.to_string());
    manifest.harness_version = version;
    manifest.binary_path = Some(binary.display().to_string());
    manifest.auth_mode = Some(ctx.selection.auth_mode);
    manifest.repo_sha = repo.sha;
    manifest.dirty = repo.dirty;
    manifest.patch_identity = repo.patch_identity;
    manifest.notes.push(PROBE_NOTE.to_owned());
    if let Some(sweep) = sweep {
        manifest
            .notes
            .push(format!("scratch sweep failed: {sweep}"));
    }
    let mut writer =
        BundleWriter::create(ctx.run_log.evidence_dir().join(run_id.as_str()), manifest)?;
    writer.write_json("probe.json", record)?;
    let m = writer.manifest_mut();
    match problem {
        None => {
            m.outcome = Outcome::Completed;
            m.counts.passed = 1;
        }
        Some(problem) => {
            m.outcome = Outcome::Errored;
            m.counts.failed = 1;
            m.failure_artifacts.push("probe.json".to_owned());
            m.notes.push(problem.to_owned());
        }
    }
    writer.finish()
}

/// The workspace's git identity, read once per process.
fn repo_identity(caller: &CallerEnv) -> RepoIdentity {
    static IDENTITY: OnceLock<RepoIdentity> = OnceLock::new();
    IDENTITY
        .get_or_init(|| RepoIdentity::detect(&bins::workspace_root(), caller))
        .clone()
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
    fn trial_names_and_hints() {
        assert_eq!(trial_name(HarnessName::Kiro), "probe::kiro");
        assert!(install_hint(HarnessName::Codex).contains("just harnesses"));
        assert!(install_hint(HarnessName::Kiro).contains("not on npm"));
    }
}
