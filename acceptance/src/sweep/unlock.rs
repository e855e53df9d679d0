//! Making a directory we own usable for an unprivileged sweeper.
//!
//! Why: without `r` a directory cannot be listed, without `x` entered, without
//! `w` emptied (a harness may leave 000, 100, 300, 400 or 600 behind; root
//! never notices, so CI would not). A directory we own, inside the root and
//! vetted by the caller (its mount), is set to 0700 before it is used. One
//! that cannot even be opened is first opened `O_PATH|O_NOFOLLOW` through its
//! parent's fd (which needs no permission on it), checked, then changed
//! through `/proc/self/fd/N`, so a symlink swapped in cannot redirect the
//! chmod. Other users' directories are never changed.

use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags, chmod, fchmod, openat};
use rustix::io::Errno;

use crate::sweep::guard::SweepError;
use crate::sweep::node::{At, Node, io_err, node_of, open_dir};

/// Opens the directory `name` in `dir` (whose path is `path`) for the sweep,
/// making it usable first when we own it: see the module doc. `vet` checks
/// the directory (its mount) before any mode is changed.
pub(super) fn open_scratch_dir(
    dir: BorrowedFd<'_>,
    name: &CStr,
    path: &Path,
    vet: impl Fn(&Node) -> Result<(), SweepError>,
) -> Result<OwnedFd, SweepError> {
    let euid = rustix::process::geteuid().as_raw();
    let at = || path.to_owned();
    let fd = open_unlocking(dir, name, &at, euid, &vet)?.map_err(|e| io_err("open", path, e))?;
    let node = node_of(fd.as_fd()).map_err(|e| io_err("inspect", path, e))?;
    vet(&node)?;
    make_usable(fd.as_fd(), &node, &at, euid)?;
    Ok(fd)
}

/// [`open_dir`], and on EACCES [`make_searchable`] then once more. The outer
/// error is a refusal; the inner one the open's own errno, for the caller.
pub(super) fn open_unlocking(
    dir: BorrowedFd<'_>,
    name: &CStr,
    path: At<'_>,
    euid: u32,
    vet: impl Fn(&Node) -> Result<(), SweepError>,
) -> Result<Result<OwnedFd, Errno>, SweepError> {
    match open_dir(dir, name) {
        Err(Errno::ACCESS) => {
            make_searchable(dir, name, path, euid, vet)?;
            Ok(open_dir(dir, name))
        }
        other => Ok(other),
    }
}

/// Gives a directory we own `rwx` for us, so it can be listed, entered and
/// emptied; other owners' directories are left as they are.
pub(super) fn make_usable(
    fd: BorrowedFd<'_>,
    node: &Node,
    path: At<'_>,
    euid: u32,
) -> Result<(), SweepError> {
    if node.mode & 0o700 == 0o700 || node.uid != euid {
        return Ok(());
    }
    fchmod(fd, Mode::from_raw_mode(0o700)).map_err(|e| io_err("make writable", &path(), e))
}

/// A directory that cannot even be opened (no `r`): chmod 0700 through an
/// `O_PATH|O_NOFOLLOW` fd opened via its parent, after checking it is a
/// directory we own that `vet` accepts. Without `/proc` there is no way to
/// chmod that fd, and a by-name chmod could follow a swapped-in symlink: then
/// the error stands and the tree is left.
fn make_searchable(
    dir: BorrowedFd<'_>,
    name: &CStr,
    path: At<'_>,
    euid: u32,
    vet: impl Fn(&Node) -> Result<(), SweepError>,
) -> Result<(), SweepError> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty()).map_err(|e| io_err("open", &path(), e))?;
    let node = node_of(fd.as_fd()).map_err(|e| io_err("inspect", &path(), e))?;
    vet(&node)?;
    if node.uid != euid {
        return Err(io_err(
            "open (owned by another user)",
            &path(),
            Errno::ACCESS,
        ));
    }
    let magic = format!("/proc/self/fd/{}", fd.as_raw_fd());
    chmod(magic.as_str(), Mode::from_raw_mode(0o700))
        .map_err(|e| io_err("make searchable", &path(), e))
}
