//! `studyloop-uat certify HARNESS --real-auth`: the one recorded, re-runnable form of
//! a real-auth certification, run by a person on their own machine (issue 29; the
//! acceptance guide: real-auth is "never set by any just recipe, never appropriate
//! in CI"). Refuses without `--real-auth` and whenever `CI` is set, before anything
//! else. Then: the preflight ([`preflight`]), the harness's acceptance cells and the
//! UAT journeys with `STUDYLOOP_ACC_REAL_AUTH=1`, the sign-off, and the receipts
//! (which regenerate `receipts/COVERAGE.md` and refuse a dirty or unknown tree).
//!
//! The runners are run as `cargo test --workspace --test acceptance|uat` in the
//! certified checkout, not as prebuilt binaries: cargo rebuilds them from the very
//! commit the preflight found clean (a no-op when fresh), so the certificate can
//! never describe binaries of another tree. `STUDYLOOP_ACC_APPROVE` reaches them
//! unchanged from the operator's own environment: certify adds no approval.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use studyloop_acceptance::caller_env::CallerEnv;

use crate::certify::{EXIT_SKIPPED, PreflightError, Ready};
use crate::output::Out;

/// Why certify refused to start (exit 2, nothing run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The explicit flag is missing.
    #[error(
        "certify bills your own vendor login (harness:{harness}: chargeable, credentialed, writes-real-home), so it never starts without the explicit flag: run `studyloop-uat certify {harness} --real-auth`"
    )]
    NoFlag {
        /// The harness as given (cut).
        harness: String,
    },
    /// `CI` is set: a real-auth certification is never a CI job.
    #[error(
        "CI is set ({value:?}): a real-auth certification is a person's act on their own machine, never a CI job (issue 29); unset CI to run it by hand"
    )]
    InCi {
        /// The value of `CI` (cut).
        value: String,
    },
}

/// The refusals, checked before the preflight.
///
/// # Errors
/// [`Refusal`].
pub fn refusal(harness: &str, real_auth: bool, caller: &CallerEnv) -> Result<(), Refusal> {
    if let Some(value) = caller.var("CI").filter(|v| !v.is_empty()) {
        return Err(Refusal::InCi {
            value: value.chars().take(40).collect(),
        });
    }
    if !real_auth {
        return Err(Refusal::NoFlag {
            harness: harness.chars().take(40).collect(),
        });
    }
    Ok(())
}

/// Prints a preflight's outcome; `Err` carries the exit status when not ready.
///
/// # Errors
/// The exit status of a skipped (3) or refused (2) preflight.
pub fn report_preflight(
    result: Result<Ready, PreflightError>,
    out: &Out,
) -> Result<Ready, ExitCode> {
    match result {
        Ok(ready) => {
            out.line(format!(
                "certify preflight: {} ready on commit {} ({}); credentials: {}; council `{}`: every approved seat has its key",
                ready.harness,
                ready.commit,
                ready.binary.display(),
                ready.found.join(", "),
                ready.council
            ));
            for judge in &ready.unapproved_judges {
                out.line(format!(
                    "certify preflight: the graded journey will skip: {judge}"
                ));
            }
            Ok(ready)
        }
        Err(PreflightError::Skip { reasons }) => {
            out.line("certify preflight: SKIPPED (nothing launched):");
            for r in &reasons {
                out.line(format!("  - {r}"));
            }
            Err(ExitCode::from(EXIT_SKIPPED))
        }
        Err(e) => {
            out.err(format!("certify preflight: refused: {e}"));
            Err(ExitCode::from(e.exit_code()))
        }
    }
}

/// The phases after a ready preflight, in `repo`; `uat` is this binary. Exit status:
/// the trials' when they failed, else the sign-off's (0 PASS, 1 FAIL, 2 no verdict).
///
/// # Errors
/// A program that could not be started at all.
pub fn run(ready: &Ready, repo: &Path, uat: &Path, out: &Out) -> anyhow::Result<ExitCode> {
    let h = ready.harness.as_str();
    let status = |cmd: &mut Command| -> anyhow::Result<i32> {
        let s = cmd.current_dir(repo).status()?;
        Ok(s.code().unwrap_or(1))
    };
    if status(Command::new("just").args(["deps", "harnesses"]))? != 0 {
        out.err("certify: `just deps harnesses` failed; nothing was certified");
        return Ok(ExitCode::from(2));
    }
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let run: PathBuf = repo
        .join("target/studyloop/runs")
        .join(format!("certify-{h}-{stamp}-{}", std::process::id()));
    let (acc_dir, uat_dir) = (suffixed(&run, "-acceptance"), suffixed(&run, "-uat"));
    let path = format!(
        "{}:{}",
        repo.join(".harnesses/node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let runner = |test: &str, dir: &Path| {
        let mut c = studyloop_acceptance::bins::cargo_command();
        c.args(["test", "--workspace", "--test", test])
            .env("STUDYLOOP_ACC", "1")
            .env("STUDYLOOP_ACC_REAL_AUTH", "1")
            .env("STUDYLOOP_ACC_HARNESS", h)
            .env("STUDYLOOP_ACC_RESULTS_DIR", dir)
            .env("PATH", &path);
        if test == "uat" {
            c.env("STUDYLOOP_UAT", "1");
        }
        c
    };
    let lanes = status(&mut runner("acceptance", &acc_dir))?;
    let journeys = status(&mut runner("uat", &uat_dir))?;
    let verdict = status(Command::new(uat).arg("signoff").arg(&uat_dir))?;
    let receipts = status(Command::new(uat).arg("receipts").arg(&acc_dir))?;
    out.line(format!(
        "certify: run directories {}, {}",
        acc_dir.display(),
        uat_dir.display()
    ));
    out.line(format!(
        "certify: lanes exit {lanes}; journeys exit {journeys}; sign-off exit {verdict} (0 PASS, 1 FAIL, 2 no verdict); receipts exit {receipts}"
    ));
    let code = [lanes, journeys, receipts]
        .into_iter()
        .find(|c| *c != 0)
        .unwrap_or(verdict);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}
