//! The harness part of `doctor`: is each binary on PATH, and what does its
//! `--version` say (with a timeout, all six in parallel).

use std::io::Read as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::check::{Check, HarnessInfo, VERSION_TIMEOUT, Verdict, check};
use crate::adapters::HARNESS_ORDER;
use crate::context::Ctx;
use crate::env::Env;

/// Why a harness's `--version` gave no version.
#[derive(Debug, thiserror::Error)]
pub enum VersionProbeError {
    /// The binary could not be started.
    #[error("cannot run: {0}")]
    Spawn(#[source] std::io::Error),
    /// Waiting on it failed.
    #[error("cannot wait: {0}")]
    Wait(#[source] std::io::Error),
    /// It did not exit in time (it was killed).
    #[error("`--version` did not answer within {0}s")]
    Timeout(u64),
    /// It exited unsuccessfully or printed nothing.
    #[error("`--version` failed ({status}): {first_line}")]
    Failed {
        /// How it exited.
        status: std::process::ExitStatus,
        /// The first non-empty line it printed (may be empty).
        first_line: String,
    },
    /// The probe thread panicked.
    #[error("probe panicked")]
    Panicked,
}

/// Run `bin --version` with a timeout; the first non-empty output line.
///
/// `bin` is executed directly, never through a shell. It runs in a process
/// group of its own that is killed once it exits or times out, so a background
/// child still holding its stdout cannot make the read below wait forever.
///
/// # Errors
/// [`VersionProbeError`] naming why no version came back.
pub fn probe_version(
    env: &Env,
    bin: &std::path::Path,
    timeout: Duration,
) -> Result<String, VersionProbeError> {
    let mut child_env = env.clone();
    crate::child_env::strip_hatches(&mut child_env);
    let mut child = Command::new(bin)
        .arg("--version")
        .env_clear()
        .envs(child_env.iter())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(VersionProbeError::Spawn)?;
    let group = rustix::process::Pid::from_child(&child);
    let kill_group = || {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Ok(None) => {
                kill_group();
                let _ = child.kill();
                let _ = child.wait();
                return Err(VersionProbeError::Timeout(timeout.as_secs()));
            }
            Err(e) => return Err(VersionProbeError::Wait(e)),
        }
    };
    kill_group();
    let mut text = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut text);
    }
    if text.trim().is_empty()
        && let Some(mut e) = child.stderr.take()
    {
        let _ = e.read_to_string(&mut text);
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_owned();
    if status.success() && !first.is_empty() {
        Ok(first)
    } else {
        Err(VersionProbeError::Failed {
            status,
            first_line: first,
        })
    }
}

/// One check per harness (versions probed in parallel), plus a failure when
/// none is installed.
pub(super) fn checks(ctx: &Ctx) -> (Vec<Check>, Vec<HarnessInfo>) {
    let found: Vec<_> = HARNESS_ORDER
        .iter()
        .map(|h| (h.adapter(), h.adapter().resolve_binary(&ctx.env)))
        .collect();
    // Versions in parallel: some CLIs take seconds to print one.
    let versions: Vec<Option<Result<String, VersionProbeError>>> = std::thread::scope(|s| {
        let handles: Vec<_> = found
            .iter()
            .map(|(_, bin)| {
                bin.as_ref()
                    .map(|b| s.spawn(move || probe_version(&ctx.env, b, VERSION_TIMEOUT)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.map(|h| h.join().unwrap_or(Err(VersionProbeError::Panicked))))
            .collect()
    });
    let mut checks = Vec::new();
    let mut infos = Vec::new();
    for ((adapter, bin), version) in found.into_iter().zip(versions) {
        let name = format!("harness {}", adapter.name);
        let (status, detail, fix) = match (&bin, &version) {
            (None, _) => (
                Verdict::Warn,
                format!("`{}` not on PATH", adapter.binaries[0]),
                Some("install it with `just harnesses`, or ignore if you do not use it"),
            ),
            (Some(b), Some(Ok(v))) => (Verdict::Ok, format!("{} ({v})", b.display()), None),
            (Some(b), Some(Err(e))) => (
                Verdict::Warn,
                format!("{}: {e}", b.display()),
                Some("reinstall the harness"),
            ),
            (Some(b), None) => (Verdict::Warn, b.display().to_string(), None),
        };
        checks.push(check(&name, "harness", status, detail, fix, false));
        infos.push(HarnessInfo {
            name: adapter.name,
            binary: bin.map(|b| b.display().to_string()),
            version: version.and_then(Result::ok),
        });
    }
    if infos.iter().all(|i| i.binary.is_none()) {
        checks.push(check(
            "harnesses",
            "harness",
            Verdict::Fail,
            "no harness is installed",
            Some("install at least one (e.g. `just harnesses`)"),
            false,
        ));
    }
    (checks, infos)
}
