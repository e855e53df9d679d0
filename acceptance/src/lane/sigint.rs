//! A real Ctrl-C to a runner child, as a terminal sends it: the child runs as
//! its own foreground job (a new process group) and SIGINT goes to the whole
//! group. Shared by the live `…::interrupt` trials and the ungated Ctrl-C
//! tests of the web and UAT case kinds, which then prove the same things:
//! the child exited non-zero in time, its bundle says `cancelled`, and no
//! scratch tree or process of its world is left.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

const STEP: Duration = Duration::from_millis(20);

/// Why driving the foreground job failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// SIGINT could not be sent to the job's group.
    #[error("cannot send SIGINT to process group {pgid}: {detail}")]
    Signal {
        /// The group.
        pgid: i32,
        /// The OS error.
        detail: String,
    },
    /// A bounded wait ran out.
    #[error("timed out after {waited:?} waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        waited: Duration,
    },
    /// The job exited before what was awaited happened (its lane failed early:
    /// there is nothing left to interrupt, so waiting out the timeout only costs time).
    #[error(
        "the runner exited ({status}) after {after:?}, before {what}: its lane ended early; run the lane alone to see why"
    )]
    EndedFirst {
        /// What was awaited.
        what: String,
        /// Its exit status.
        status: ExitStatus,
        /// How long after the wait began.
        after: Duration,
    },
}

/// A runner child in its own process group, killed (group and all) on drop.
#[derive(Debug)]
pub struct ForegroundJob(Child);

impl ForegroundJob {
    /// Starts `cmd` as a foreground job: its own group, no stdin.
    ///
    /// # Errors
    /// The program could not start.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Self> {
        cmd.process_group(0).stdin(Stdio::null()).spawn().map(Self)
    }

    /// Its pid (and process group id).
    #[must_use]
    pub fn pid(&self) -> i32 {
        i32::try_from(self.0.id()).unwrap_or(i32::MAX)
    }

    /// What Ctrl-C does: SIGINT to the whole group.
    ///
    /// # Errors
    /// [`JobError::Signal`].
    pub fn ctrl_c(&self) -> Result<(), JobError> {
        let pgid = self.pid();
        let failed = |detail: String| JobError::Signal { pgid, detail };
        let group = Pid::from_raw(pgid).ok_or_else(|| failed("not a valid pid".into()))?;
        kill_process_group(group, Signal::INT).map_err(|e| failed(e.to_string()))
    }

    /// As [`wait_for`], but ends at once with [`JobError::EndedFirst`] when the
    /// job exits before `f` returns something.
    ///
    /// # Errors
    /// [`JobError::Timeout`] or [`JobError::EndedFirst`], naming `what`.
    pub fn wait_while_running<T>(
        &mut self,
        mut f: impl FnMut() -> Option<T>,
        what: &str,
        within: Duration,
    ) -> Result<T, JobError> {
        let started = Instant::now();
        let mut ended = None;
        let found = wait_for(
            || {
                if let Some(v) = f() {
                    return Some(Some(v));
                }
                ended = self.0.try_wait().ok().flatten();
                ended.is_some().then_some(None)
            },
            what,
            within,
        )?;
        match (found, ended) {
            (Some(v), _) => Ok(v),
            (None, status) => Err(JobError::EndedFirst {
                what: what.to_owned(),
                status: status.unwrap_or_default(),
                after: started.elapsed(),
            }),
        }
    }

    /// Waits up to `within` for the exit; its status and how long it took.
    ///
    /// # Errors
    /// [`JobError::Timeout`] when it did not exit in time.
    pub fn wait_exit(&mut self, within: Duration) -> Result<(ExitStatus, Duration), JobError> {
        let sent = Instant::now();
        let status = wait_for(
            || self.0.try_wait().ok().flatten(),
            "the runner to exit after SIGINT",
            within,
        )?;
        Ok((status, sent.elapsed()))
    }
}

impl Drop for ForegroundJob {
    fn drop(&mut self) {
        if let Some(group) = Pid::from_raw(self.pid()) {
            let _ = kill_process_group(group, Signal::KILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Bounded wait (20 ms steps) for `f` to return something.
///
/// # Errors
/// [`JobError::Timeout`] naming `what`.
pub fn wait_for<T>(
    mut f: impl FnMut() -> Option<T>,
    what: &str,
    timeout: Duration,
) -> Result<T, JobError> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Ok(v);
        }
        if Instant::now() >= deadline {
            return Err(JobError::Timeout {
                what: what.to_owned(),
                waited: timeout,
            });
        }
        std::thread::sleep(STEP);
    }
}

/// A direct child of `parent` whose argv[0] ends with `program` and whose
/// argv[1] is `first_arg` (when given).
#[must_use]
pub fn child_running(parent: i32, program: &str, first_arg: Option<&str>) -> Option<i32> {
    crate::procfs::children(parent).into_iter().find(|child| {
        crate::procfs::argv(*child).is_some_and(|args| {
            args.first().is_some_and(|a| a.ends_with(program))
                && first_arg.is_none_or(|want| args.get(1).is_some_and(|a| a == want))
        })
    })
}

/// The scratch root a process runs in: the parent of its `HOME`.
#[must_use]
pub fn scratch_root_of(pid: i32) -> Option<PathBuf> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let home = environ
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(b"HOME="))?;
    let home = Path::new(std::str::from_utf8(home).ok()?);
    home.parent().map(Path::to_owned)
}

/// The outcome of every bundle (`*/manifest.json`) directly under `dir`.
#[must_use]
pub(crate) fn bundle_outcomes(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|b| {
            let text = std::fs::read_to_string(b.path().join("manifest.json")).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            v["outcome"].as_str().map(str::to_owned)
        })
        .collect()
}

/// Everything a Ctrl-C'd runner must leave true: it exited non-zero within
/// `bound`, its world at `root` is gone with no process mentioning it, and the
/// bundles in `bundles` say `cancelled`. Returns every problem.
#[must_use]
pub fn cancelled_cleanly(
    status: ExitStatus,
    took: Duration,
    bound: Duration,
    root: &Path,
    bundles: &Path,
) -> Vec<String> {
    let mut problems = Vec::new();
    if took > bound {
        problems.push(format!(
            "the runner took {} ms to exit after SIGINT, over {bound:?}",
            took.as_millis()
        ));
    }
    if status.success() {
        problems.push(format!(
            "the interrupted runner exited {status}, expected a failure"
        ));
    }
    if root.exists() {
        problems.push(format!(
            "the scratch tree {} is still there",
            root.display()
        ));
    }
    let left = crate::scratch::leftovers::leftover_processes(root);
    if !left.is_empty() {
        problems.push(format!("processes left: {}", left.join("; ")));
    }
    let outcomes = bundle_outcomes(bundles);
    if outcomes != ["cancelled"] {
        problems.push(format!(
            "the bundle outcomes under {} are {outcomes:?}, expected [\"cancelled\"]",
            bundles.display()
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_the_job_exits_first_not_at_its_timeout() {
        // Found by `just drift` (a planted codex whose TUI never starts): the
        // interrupt lane waited 91.6 s for a turn of a runner that had exited.
        let mut job = ForegroundJob::spawn(Command::new("sh").args(["-c", "exit 3"])).unwrap();
        let started = Instant::now();
        let err = job
            .wait_while_running(|| None::<()>, "turn 1", Duration::from_secs(60))
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let JobError::EndedFirst { status, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!(status.code(), Some(3));
        assert!(err.to_string().contains("before turn 1"), "{err}");
        // What is awaited still wins while the job runs.
        let mut job = ForegroundJob::spawn(Command::new("sleep").arg("30")).unwrap();
        assert_eq!(
            job.wait_while_running(|| Some(7), "anything", Duration::from_secs(5))
                .unwrap(),
            7
        );
    }
}
