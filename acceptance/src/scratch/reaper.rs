//! Reaping scratch worlds whose owner died without sweeping them.
//!
//! A runner killed with SIGKILL runs no `Drop`: its tmux server, the harness
//! and sidebar in its panes, its stub provider and the `/tmp/sl-acc-*` tree
//! stay forever. Every runner, before its trials, and `just clean-scratch`
//! therefore look at each `/tmp/sl-acc-*` directory we own: a world whose
//! owner record (see `owner`) names a process that is gone (no such pid, a
//! zombie, or a later process reusing the pid: the start time differs) has
//! its tmux servers stopped through its socket dir, every process carrying
//! its `HOME` or `TMUX_TMPDIR` stopped (the same marker scan a close uses),
//! and is swept with the same guards, the record's token checked against the
//! sentinel. A world whose owner is alive, that has no record (still being
//! created, or made before records existed), that another user owns or that
//! was recorded in another pid namespace is left alone and reported. Two
//! reapers never sweep one world: each holds an exclusive `flock` on the
//! root while it works.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags, flock, openat};

use crate::caller_env::CallerEnv;
use crate::scratch::env::Env;
use crate::scratch::groups;
use crate::scratch::layout::Layout;
use crate::scratch::owner::{Liveness, OWNER_MAX, OWNER_NAME, Owner, OwnerError};
use crate::scratch::world::SENTINEL_NAME;
use crate::sweep::{self, SCRATCH_PARENT, SCRATCH_PREFIX, SweepError, SweepTarget};

/// What one pass found, world by world.
#[derive(Debug, Default)]
pub struct ReapReport {
    /// Worlds whose owner was dead: stopped and swept.
    pub reaped: Vec<PathBuf>,
    /// Worlds left alone, with why (owner alive, no record, …).
    pub left: Vec<(PathBuf, String)>,
    /// Orphaned worlds that could not be swept, with the refusal or error.
    pub failed: Vec<(PathBuf, String)>,
}

/// Reaps every orphaned world under `/tmp`; the real home for the sweep
/// guards is `caller`'s `HOME`.
pub fn reap_orphans(caller: &CallerEnv) -> ReapReport {
    reap_in(Path::new(SCRATCH_PARENT), caller)
}

fn reap_in(parent: &Path, caller: &CallerEnv) -> ReapReport {
    let mut report = ReapReport::default();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return report;
    };
    let mut roots: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(SCRATCH_PREFIX))
        .map(|e| e.path())
        .collect();
    roots.sort();
    for root in roots {
        match reap_one(&root, caller) {
            Ok(Reaped::Swept) => report.reaped.push(root),
            Ok(Reaped::Left(why)) => report.left.push((root, why)),
            Err(err) => report.failed.push((root, err.to_string())),
        }
    }
    report
}

enum Reaped {
    Swept,
    Left(String),
}

fn reap_one(root: &Path, caller: &CallerEnv) -> Result<Reaped, SweepError> {
    let meta = match std::fs::symlink_metadata(root) {
        Ok(meta) => meta,
        // Swept by its owner (or another reaper) since it was listed.
        Err(_) => return Ok(Reaped::Left("it is gone".into())),
    };
    let euid = rustix::process::geteuid().as_raw();
    if !meta.is_dir() {
        return Ok(Reaped::Left("not a directory".into()));
    }
    if meta.uid() != euid {
        return Ok(Reaped::Left(format!("owned by uid {}", meta.uid())));
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(dir) = openat(rustix::fs::CWD, root, flags, Mode::empty()) else {
        return Ok(Reaped::Left("it cannot be opened".into()));
    };
    if flock(&dir, FlockOperation::NonBlockingLockExclusive).is_err() {
        return Ok(Reaped::Left("another reaper is sweeping it".into()));
    }
    let owner = match read_owner(&dir) {
        Ok(owner) => owner,
        Err(why) => {
            return Ok(Reaped::Left(format!(
                "{why}: left as it is (remove it by hand once you know its runner is gone)"
            )));
        }
    };
    match owner.liveness() {
        Liveness::Alive => {
            return Ok(Reaped::Left(format!(
                "its owner pid {} is alive",
                owner.pid
            )));
        }
        Liveness::Foreign => {
            return Ok(Reaped::Left(format!(
                "recorded in pid namespace {}, not this one",
                owner.pid_ns
            )));
        }
        Liveness::Dead => {}
    }
    let layout = Layout::of(root);
    let env = Env::scrubbed(caller, &layout.pointers());
    for warning in groups::stop_tmux_servers(&layout.socket_dir, &env)
        .into_iter()
        .chain(groups::stop_stragglers(&layout.socket_dir, &layout.home))
    {
        eprintln!(
            "studyloop-acceptance: reaping {}: {warning}",
            root.display()
        );
    }
    let target = SweepTarget {
        root,
        home: &layout.home,
        config_dir: &layout.config_dir,
        sentinel_name: SENTINEL_NAME,
        sentinel_token: &owner.token,
    };
    sweep::default_real_home(caller).and_then(|real_home| sweep::sweep(&target, &real_home))?;
    // The lock goes with the fd, after the tree is gone.
    drop(dir);
    Ok(Reaped::Swept)
}

/// The owner record, read through the root's fd without following a
/// symlink, from a regular file of bounded size.
fn read_owner(root: &OwnedFd) -> Result<Owner, OwnerError> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = openat(root.as_fd(), OWNER_NAME, flags, Mode::empty())
        .map_err(|e| OwnerError::Open(e.to_string()))?;
    let mut file = std::fs::File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| OwnerError::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(OwnerError::NotAFile);
    }
    let mut text = String::new();
    (&mut file)
        .take(OWNER_MAX)
        .read_to_string(&mut text)
        .map_err(|e| OwnerError::Unreadable(e.to_string()))?;
    Owner::parse(&text)
}

/// One line per reaped or failed world, for a runner's stderr or
/// `clean-scratch`'s output (worlds left alone are `verbose` only).
pub fn describe(report: &ReapReport, verbose: bool) -> Vec<String> {
    let mut lines: Vec<String> = report
        .reaped
        .iter()
        .map(|root| {
            format!(
                "swept orphaned scratch world {} (its runner is gone)",
                root.display()
            )
        })
        .collect();
    lines.extend(report.failed.iter().map(|(root, err)| {
        format!(
            "could not sweep orphaned scratch world {}: {err}",
            root.display()
        )
    }));
    if verbose {
        lines.extend(
            report
                .left
                .iter()
                .map(|(root, why)| format!("left {}: {why}", root.display())),
        );
    }
    lines
}
