//! What the containment of one phase is made of, decided before `fork` (the
//! child may not allocate): who the phase runs as, which directories are
//! hidden behind an empty tmpfs, and which paths are bound back.
//!
//! Root never runs a phase as root: the kernel exempts real uid 0 from
//! `RLIMIT_NPROC`, so a root phase's fork bomb would be bounded only by its
//! timeout. A root user's phase runs as uid/gid [`UNPRIVILEGED`] (65534) in
//! its user namespace (an identity map of that one id, written by a helper
//! that stays outside, since only a process privileged in the parent
//! namespace may map an id other than its own). The phase then needs to pass
//! through the directories on the way to its attempt and snapshot: each one
//! it could not pass as 65534 is hidden behind an empty tmpfs (it could see
//! nothing there anyway) and the paths it needs are bound back inside.

use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// The uid and gid a root user's phase runs as (`nobody`).
pub(crate) const UNPRIVILEGED: u32 = 65534;
/// Directories replaced by an empty read-only tmpfs (when they exist), on
/// top of the user's home.
const HIDDEN: [&str; 3] = ["/tmp", "/var/tmp", "/run"];
/// The system's own trees: a caller working in one of them keeps it in
/// view (hiding `/usr/bin` would take the phase's shell away).
const SYSTEM: [&str; 12] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/sys",
    "/dev", "/boot",
];
/// The most directories hidden (the child's fixed array holds one more, for
/// `/dev`).
pub(super) const MAX_HIDDEN: usize = 15;
/// The most paths bound back (the child's fixed array).
pub(super) const MAX_KEPT: usize = 16;

/// Who the phase runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ids {
    pub(super) uid: u32,
    pub(super) gid: u32,
    /// Root's phase: the ids are not the caller's, a helper outside the
    /// namespace writes the maps.
    pub(super) from_root: bool,
}

impl Ids {
    /// The caller's own ids, or [`UNPRIVILEGED`] for a root caller.
    pub(super) fn of_caller() -> Self {
        let uid = rustix::process::getuid().as_raw();
        if uid == 0 && is_machine_root() {
            return Self {
                uid: UNPRIVILEGED,
                gid: UNPRIVILEGED,
                from_root: true,
            };
        }
        Self {
            uid,
            gid: rustix::process::getgid().as_raw(),
            from_root: false,
        }
    }

    /// Whether these ids (no supplementary group) may pass through `dir`.
    fn can_pass(&self, dir: &Path) -> bool {
        let Ok(m) = std::fs::metadata(dir) else {
            return false;
        };
        let bit = if m.uid() == self.uid {
            0o100
        } else if m.gid() == self.gid {
            0o010
        } else {
            0o001
        };
        m.mode() & bit != 0
    }
}

/// Whether uid 0 here is the machine's root (the kernel's exempt
/// `INIT_USER`): this namespace maps its 0 to 0 (the initial namespace, or
/// one `unshare -r` made from root). Root of a container mapped to another
/// uid is not exempt and keeps its own ids. Unreadable: assumed root.
fn is_machine_root() -> bool {
    let Ok(map) = std::fs::read_to_string("/proc/self/uid_map") else {
        return true;
    };
    map.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() == 3 && f[0] == "0" && f[1] == "0"
    })
}

/// A path the phase needs, bound back after the hiding.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Keep {
    pub(super) path: PathBuf,
    pub(super) writable: bool,
    /// Directories to create first, outermost first (its ancestors inside a
    /// hidden directory).
    pub(super) parents: Vec<PathBuf>,
}

/// The phase's view: what is hidden, what is bound back (outermost first).
#[derive(Debug)]
pub(super) struct View {
    pub(super) hide: Vec<PathBuf>,
    pub(super) keep: Vec<Keep>,
}

/// The outermost ancestor of `path` that `ids` could not pass through.
fn outermost_closed(ids: &Ids, path: &Path) -> Option<PathBuf> {
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    ancestors
        .into_iter()
        .find(|a| *a != Path::new("/") && !ids.can_pass(a))
        .map(Path::to_path_buf)
}

/// The view for `keep` (canonical paths, writable or not) seen by `ids`,
/// with `private` (the caller's account home, working directory...) hidden.
pub(super) fn view(keep: &[(PathBuf, bool)], ids: &Ids, private: Vec<PathBuf>) -> io::Result<View> {
    let mut hide: Vec<PathBuf> = HIDDEN
        .iter()
        .map(PathBuf::from)
        .filter_map(|p| p.canonicalize().ok())
        .chain(private.into_iter().map(|p| {
            // Root's phase (65534) mounts the tmpfs: where it cannot reach
            // `p`, the closed directory on the way goes instead (it could see
            // nothing behind it anyway).
            if ids.from_root {
                outermost_closed(ids, &p).unwrap_or(p)
            } else {
                p
            }
        }))
        .collect();
    hide.retain(|h| h.is_dir() && h != Path::new("/"));
    if ids.from_root {
        for (path, _) in keep {
            if hide.iter().any(|h| path.starts_with(h)) {
                continue;
            }
            // The outermost directory the phase could not pass through.
            if let Some(a) = outermost_closed(ids, path) {
                hide.push(a);
            }
        }
    }
    hide.sort();
    hide.dedup();
    // A directory inside a hidden one is hidden with it.
    let all = hide.clone();
    hide.retain(|h| !all.iter().any(|o| o != h && h.starts_with(o)));
    if hide.len() > MAX_HIDDEN {
        return Err(io::Error::other(format!(
            "{} directories to hide, at most {MAX_HIDDEN}",
            hide.len()
        )));
    }
    let mut keep: Vec<&(PathBuf, bool)> = keep.iter().collect();
    // Outer paths first, so a deeper one is bound on top.
    keep.sort_by_key(|(p, _)| p.components().count());
    if keep.len() > MAX_KEPT {
        return Err(io::Error::other(format!(
            "{} paths to bind, at most {MAX_KEPT}",
            keep.len()
        )));
    }
    let keep = keep
        .into_iter()
        .map(|(path, writable)| {
            let parents = match hide.iter().find(|h| path.starts_with(h)) {
                None => Vec::new(),
                Some(h) => {
                    let mut p = h.clone();
                    let mut parents = Vec::new();
                    for c in path.strip_prefix(h).unwrap_or(Path::new("")).components() {
                        p.push(c);
                        parents.push(p.clone());
                    }
                    parents
                }
            };
            Keep {
                path: path.clone(),
                writable: *writable,
                parents,
            }
        })
        .collect();
    Ok(View { hide, keep })
}

/// What of the caller's own the phase must not see: its account home, its
/// working directory (a drill is often started from a project) and the
/// outermost hidden (dot) directory holding that (`~/.config/x`,
/// `/srv/.secrets/proj`: its siblings, `../.ssh`, go with it). A cwd in the
/// system's trees stays in view.
pub(super) fn private_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = account_home().into_iter().collect();
    let Ok(cwd) = std::env::current_dir().and_then(|d| d.canonicalize()) else {
        return dirs;
    };
    if cwd == Path::new("/") || SYSTEM.iter().any(|s| cwd.starts_with(s)) {
        return dirs;
    }
    let dot = cwd
        .ancestors()
        .filter(|a| {
            a.file_name()
                .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
        })
        .last()
        .map(Path::to_path_buf);
    dirs.extend(dot);
    dirs.push(cwd);
    dirs
}

/// The user's home, from the account (not `$HOME`, which a caller sets).
fn account_home() -> Option<PathBuf> {
    let uid = rustix::process::getuid().as_raw();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 6 && f[2].parse::<u32>().ok() == Some(uid)).then(|| PathBuf::from(f[5]))
        })
        .and_then(|h| h.canonicalize().ok())
}

/// Hands the attempt's writable directories to the phase's ids (root's
/// phase runs as [`UNPRIVILEGED`]); what the phase writes there stays its
/// own until the attempt closes (the runner, root, removes it whole).
pub(super) fn hand_over(dirs: &[PathBuf]) -> io::Result<()> {
    let ids = Ids::of_caller();
    if !ids.from_root {
        return Ok(());
    }
    for d in dirs {
        // Not following a link: the phase could have planted one only inside
        // these directories, never in their place (the attempt is read-only
        // to it).
        std::os::unix::fs::lchown(d, Some(ids.uid), Some(ids.gid))?;
    }
    Ok(())
}
