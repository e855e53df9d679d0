//! The path guards and the errors of a sweep.

use std::path::{Path, PathBuf};

use crate::caller_env::CallerEnv;

/// The only directory scratch roots may live in.
pub(crate) const SCRATCH_PARENT: &str = "/tmp";
/// The name prefix every scratch root carries.
pub(crate) const SCRATCH_PREFIX: &str = "sl-acc-";
/// The owner record's file name, directly in the scratch root (`scratch::owner`
/// writes it); the sweep removes it last, so a sweep stopped part-way can be retried.
pub(crate) const OWNER_NAME: &str = "owner";

/// What a sweep is asked to remove, and how to recognise it as ours.
#[derive(Debug, Clone, Copy)]
pub struct SweepTarget<'a> {
    /// The scratch root (`/tmp/sl-acc-XXXXXX`); the whole tree goes.
    pub root: &'a Path,
    /// The scratch HOME inside it.
    pub home: &'a Path,
    /// The scratch StudyLoop config dir inside it.
    pub config_dir: &'a Path,
    /// The sentinel file's name inside `home`.
    pub sentinel_name: &'a str,
    /// The token the sentinel must hold.
    pub sentinel_token: &'a str,
}

/// Why a sweep refused or failed. Every refusal leaves the tree in place.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The scratch home resolves to, or under, the real home.
    #[error(
        "refusing to sweep: scratch home {scratch_home} resolves to or under the real home {real_home}; the tree is left for inspection"
    )]
    HomeInsideRealHome {
        /// The resolved scratch home.
        scratch_home: PathBuf,
        /// The resolved real home.
        real_home: PathBuf,
    },
    /// The real home resolves to, or under, the scratch root.
    #[error(
        "refusing to sweep: the real home {real_home} resolves to or under the scratch root {root}; the tree is left for inspection"
    )]
    RealHomeInsideScratch {
        /// The resolved real home.
        real_home: PathBuf,
        /// The resolved scratch root.
        root: PathBuf,
    },
    /// The scratch config dir resolves to, or under, the real StudyLoop config.
    #[error(
        "refusing to sweep: scratch config {scratch_config} resolves to or under the real {real_config}; the tree is left for inspection"
    )]
    ConfigInsideRealConfig {
        /// The resolved scratch config dir.
        scratch_config: PathBuf,
        /// The resolved real config dir.
        real_config: PathBuf,
    },
    /// The root is not a `sl-acc-*` directory directly under `/tmp`.
    #[error(
        "refusing to sweep {root}: not a scratch root ({why}); the tree is left for inspection"
    )]
    NotAScratchRoot {
        /// The root as given.
        root: PathBuf,
        /// Which property failed.
        why: String,
    },
    /// The sentinel file is missing (or not a regular file).
    #[error(
        "refusing to sweep {root}: ownership sentinel {sentinel} is missing ({source}); the tree is left for inspection"
    )]
    SentinelMissing {
        /// The scratch root.
        root: PathBuf,
        /// The sentinel path.
        sentinel: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The sentinel holds a different token.
    #[error(
        "refusing to sweep {root}: ownership sentinel {sentinel} does not hold this scratch world's token; the tree is left for inspection"
    )]
    SentinelMismatch {
        /// The scratch root.
        root: PathBuf,
        /// The sentinel path.
        sentinel: PathBuf,
    },
    /// A mount point lies inside the scratch tree: sweeping would delete the
    /// mounted files (found before anything is deleted).
    #[error(
        "refusing to sweep {root}: {mount_point} inside it is a mount point (unmount it first: `umount {mount_point}`, then sweep again); nothing was deleted, the tree is left for inspection"
    )]
    MountInside {
        /// The scratch root.
        root: PathBuf,
        /// The mount point found under it.
        mount_point: PathBuf,
    },
    /// The walk met an entry on another mount or device than the root (a
    /// mount made after the up-front check, or one `/proc` did not show).
    #[error(
        "refusing to sweep {path}: it is on another mount than the scratch root {root} ({why}); unmount it and sweep again; it and the rest of the tree are left for inspection"
    )]
    CrossesMount {
        /// The scratch root.
        root: PathBuf,
        /// The entry on the other mount.
        path: PathBuf,
        /// Which identity differed.
        why: String,
    },
    /// A directory changed identity while it was being swept (moved or
    /// replaced): the walk no longer knows where it is, so it stops.
    #[error(
        "refusing to continue the sweep at {path}: the directory was moved or replaced during the sweep (device/inode no longer match what was recorded); the rest of the tree is left for inspection"
    )]
    Swapped {
        /// The directory whose identity changed.
        path: PathBuf,
    },
    /// The real home is unknown, so the guards cannot be checked.
    #[error(
        "refusing to sweep: HOME is unset or empty, so the real home cannot be told apart from scratch (set HOME)"
    )]
    RealHomeUnknown,
    /// A filesystem operation failed part-way; what remains is left.
    #[error("failed to {action} {path}: {source}; the rest of the tree is left for inspection")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// The real home from `HOME` in `env`.
pub fn default_real_home(env: &CallerEnv) -> Result<PathBuf, SweepError> {
    match env.var_os("HOME") {
        Some(home) if !home.is_empty() => Ok(PathBuf::from(home)),
        _ => Err(SweepError::RealHomeUnknown),
    }
}

/// The three path guards and the root's shape. The sentinel is checked by
/// [`crate::sweep::sweep`] through the fd it deletes with.
pub fn check_path_guards(target: &SweepTarget<'_>, real_home: &Path) -> Result<(), SweepError> {
    let root = resolve(target.root);
    let home = resolve(target.home);
    let real = resolve(real_home);
    if home.starts_with(&real) || root.starts_with(&real) {
        return Err(SweepError::HomeInsideRealHome {
            scratch_home: home,
            real_home: real,
        });
    }
    if real.starts_with(&root) {
        return Err(SweepError::RealHomeInsideScratch {
            real_home: real,
            root,
        });
    }
    let real_config = resolve(&real_home.join(".config").join("studyloop"));
    let config = resolve(target.config_dir);
    if config.starts_with(&real_config) {
        return Err(SweepError::ConfigInsideRealConfig {
            scratch_config: config,
            real_config,
        });
    }
    check_root_shape(target.root)
}

/// The root must be `/tmp/sl-acc-*` exactly (after resolving `/tmp` itself),
/// not a symlink, and the resolved path must equal the literal one.
fn check_root_shape(root: &Path) -> Result<(), SweepError> {
    let refuse = |why: &str| SweepError::NotAScratchRoot {
        root: root.to_owned(),
        why: why.to_owned(),
    };
    let name = root
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| refuse("it has no file name"))?;
    if !name.starts_with(SCRATCH_PREFIX) {
        return Err(refuse("its name does not start with sl-acc-"));
    }
    if root.parent() != Some(Path::new(SCRATCH_PARENT)) {
        return Err(refuse("it is not directly under /tmp"));
    }
    let meta = std::fs::symlink_metadata(root).map_err(|source| SweepError::Io {
        action: "inspect",
        path: root.to_owned(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(refuse("it is a symlink or not a directory"));
    }
    Ok(())
}

/// Resolves every symlink of `path`; for a path that does not exist (yet), the
/// longest existing ancestor is resolved and the rest appended, so a missing
/// real config dir still compares correctly.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let mut tail = Vec::new();
    let mut cur = path;
    while let Some(parent) = cur.parent() {
        if let Some(name) = cur.file_name() {
            tail.push(name.to_owned());
        }
        if let Ok(real) = parent.canonicalize() {
            return tail.iter().rev().fold(real, |acc, n| acc.join(n));
        }
        cur = parent;
    }
    path.to_owned()
}
