//! Deleting a checked scratch tree through directory fds, never following a
//! symlink.

use std::ffi::{CStr, CString};
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, fchmod, openat, statat, unlinkat};
use rustix::io::Errno;

use crate::sweep::guard::{SweepError, SweepTarget, check_path_guards};

/// Sentinel files are 32 hex digits; anything much longer is not ours.
const SENTINEL_MAX: u64 = 256;

/// Checks every guard, then removes the whole scratch tree.
///
/// On a guard failure nothing is deleted. On an I/O failure part-way, what
/// remains is left and the error names the path.
pub fn sweep(target: &SweepTarget<'_>, real_home: &Path) -> Result<(), SweepError> {
    check_path_guards(target, real_home)?;
    let parent_path = target.root.parent().unwrap_or(Path::new("/"));
    let root_name = target.root.file_name().unwrap_or_default();
    let parent = open_dir_at(rustix::fs::CWD, parent_path, false)
        .map_err(|e| io_err("open", parent_path, e))?;
    // Opened relative to the parent fd with O_NOFOLLOW: if the root was swapped
    // for a symlink after the path guards ran, this fails instead of following.
    let root = open_dir_at(&parent, root_name, true).map_err(|e| io_err("open", target.root, e))?;
    check_sentinel(&root, target)?;
    remove_children(&root, target.root)?;
    drop(root);
    unlinkat(&parent, root_name, AtFlags::REMOVEDIR).map_err(|e| io_err("remove", target.root, e))
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
    let home_rel = target.home.strip_prefix(target.root).map_err(|_| {
        missing(std::io::Error::other(
            "the scratch home is not inside the scratch root",
        ))
    })?;
    let mut dir = root.try_clone().map_err(missing)?;
    for part in home_rel.components() {
        dir = open_dir_at(&dir, part.as_os_str(), true).map_err(|e| missing(e.into()))?;
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

/// Removes everything inside the directory `dir` (whose path, for messages, is
/// `path`). Directories are entered only through O_NOFOLLOW|O_DIRECTORY fds;
/// everything else, symlinks included, is unlinked where it stands.
fn remove_children(dir: &OwnedFd, path: &Path) -> Result<(), SweepError> {
    let entries = list(dir).map_err(|e| io_err("list", path, e))?;
    for (name, file_type) in entries {
        let child_path = path.join(name.to_string_lossy().as_ref());
        let is_dir = match file_type {
            FileType::Directory => true,
            FileType::Unknown => statat(dir, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
                .map_err(|e| io_err("inspect", &child_path, e))?,
            _ => false,
        };
        if is_dir {
            match open_dir_at(dir, name.as_c_str(), true) {
                Ok(child) => {
                    remove_children(&child, &child_path)?;
                    drop(child);
                    unlink(dir, &name, AtFlags::REMOVEDIR, &child_path)?;
                }
                // It stopped being a directory since it was listed (swapped for a
                // symlink or file): unlink whatever stands there now.
                Err(Errno::NOTDIR | Errno::LOOP) => {
                    unlink(dir, &name, AtFlags::empty(), &child_path)?
                }
                Err(e) => return Err(io_err("open", &child_path, e)),
            }
        } else {
            unlink(dir, &name, AtFlags::empty(), &child_path)?;
        }
    }
    Ok(())
}

/// `unlinkat`, retrying once after making the parent writable: a harness may
/// leave read-only directories behind.
fn unlink(dir: &OwnedFd, name: &CStr, flags: AtFlags, path: &Path) -> Result<(), SweepError> {
    match unlinkat(dir, name, flags) {
        Err(Errno::ACCESS | Errno::PERM) => {
            fchmod(dir, Mode::from_raw_mode(0o700))
                .map_err(|e| io_err("make writable", path, e))?;
            unlinkat(dir, name, flags).map_err(|e| io_err("remove", path, e))
        }
        other => other.map_err(|e| io_err("remove", path, e)),
    }
}

fn list(dir: &OwnedFd) -> Result<Vec<(CString, FileType)>, Errno> {
    let mut reader = Dir::read_from(dir)?;
    let mut out = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        out.push((name.to_owned(), entry.file_type()));
    }
    Ok(out)
}

fn open_dir_at<P: rustix::path::Arg>(
    dir: impl AsFd,
    name: P,
    nofollow: bool,
) -> Result<OwnedFd, Errno> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    openat(dir, name, flags, Mode::empty())
}

fn io_err(action: &'static str, path: &Path, errno: Errno) -> SweepError {
    SweepError::Io {
        action,
        path: PathBuf::from(path),
        source: errno.into(),
    }
}
