//! Deleting a checked scratch tree through directory fds, never following a
//! symlink, never leaving the root's mount (the walk itself is `walk`).

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, Mode, OFlags, openat, unlinkat};

use crate::sweep::guard::{SweepError, SweepTarget, check_path_guards};
use crate::sweep::mounts::mount_points_under;
use crate::sweep::node::io_err;
use crate::sweep::unlock::open_scratch_dir;
use crate::sweep::walk::remove_contents;

/// Sentinel files are 32 hex digits; anything much longer is not ours.
const SENTINEL_MAX: u64 = 256;

/// Checks every guard, then removes the whole scratch tree.
///
/// On a guard failure nothing is deleted (a mount point inside the tree is
/// one). On an I/O failure part-way, what remains is left and the error names
/// the path.
pub fn sweep(target: &SweepTarget<'_>, real_home: &Path) -> Result<(), SweepError> {
    check_path_guards(target, real_home)?;
    if let Some(mount_point) = mount_points_under(target.root).into_iter().next() {
        return Err(SweepError::MountInside {
            root: target.root.to_owned(),
            mount_point,
        });
    }
    let parent_path = target.root.parent().unwrap_or(Path::new("/"));
    let root_name = c_name(target.root.file_name().unwrap_or_default());
    let parent = open_dir_following(parent_path).map_err(|e| io_err("open", parent_path, e))?;
    // Opened relative to the parent fd with O_NOFOLLOW: if the root was swapped
    // for a symlink after the path guards ran, this fails instead of following.
    let root = open_scratch_dir(parent.as_fd(), &root_name, target.root, |_| Ok(()))?;
    check_sentinel(&root, target)?;
    // The ownership marks go last: a sweep stopped part-way can be retried.
    let sentinel = home_rel(target)
        .map(|home| home.join(target.sentinel_name))
        .unwrap_or_default();
    let keep_last = [sentinel.as_path(), Path::new(super::guard::OWNER_NAME)];
    remove_contents(&root, target.root, &keep_last)?;
    drop(root);
    unlinkat(&parent, root_name.as_c_str(), AtFlags::REMOVEDIR)
        .map_err(|e| io_err("remove", target.root, e))
}

/// `/tmp` itself may be a symlink (macOS): the only open that follows one.
fn open_dir_following(path: &Path) -> Result<OwnedFd, rustix::io::Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    openat(rustix::fs::CWD, path, flags, Mode::empty())
}

fn c_name(name: &std::ffi::OsStr) -> CString {
    // A path component never holds NUL; an empty name fails the open instead.
    CString::new(name.as_bytes()).unwrap_or_default()
}

/// Reads the sentinel through `root` (home and sentinel opened with
/// O_NOFOLLOW) and compares it with the token.
fn check_sentinel(root: &OwnedFd, target: &SweepTarget<'_>) -> Result<(), SweepError> {
    let sentinel = target.home.join(target.sentinel_name);
    let missing = |source: std::io::Error| SweepError::SentinelMissing {
        root: target.root.to_owned(),
        sentinel: sentinel.clone(),
        source,
    };
    let home_rel = home_rel(target).ok_or_else(|| {
        missing(std::io::Error::other(
            "the scratch home is not a plain path inside the scratch root (no `..` or `.` steps)",
        ))
    })?;
    let mut dir = root.try_clone().map_err(missing)?;
    let mut path = target.root.to_owned();
    for part in home_rel.components() {
        path.push(part);
        dir = open_scratch_dir(dir.as_fd(), &c_name(part.as_os_str()), &path, |_| Ok(())).map_err(
            |e| match e {
                SweepError::Io { source, .. } => missing(source),
                refusal => refusal,
            },
        )?;
    }
    let fd = openat(
        &dir,
        target.sentinel_name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| missing(e.into()))?;
    let mut file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(missing)?;
    if !meta.is_file() {
        return Err(missing(std::io::Error::other("it is not a regular file")));
    }
    let mut content = String::new();
    (&mut file)
        .take(SENTINEL_MAX)
        .read_to_string(&mut content)
        .map_err(missing)?;
    if content.trim() != target.sentinel_token {
        return Err(SweepError::SentinelMismatch {
            root: target.root.to_owned(),
            sentinel,
        });
    }
    Ok(())
}

/// The scratch home relative to the root, by plain names only: a `..` (or `.`)
/// step could walk out of the root being deleted and read another world's
/// sentinel (`home=<root>/../<other world>/home`), so the check would vouch for
/// a root it never looked in.
fn home_rel<'a>(target: &SweepTarget<'a>) -> Option<&'a Path> {
    let rel = target.home.strip_prefix(target.root).ok()?;
    rel.components()
        .all(|part| matches!(part, Component::Normal(_)))
        .then_some(rel)
}
