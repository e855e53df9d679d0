//! The sweep's view of one directory entry and the few no-follow system calls both the
//! walk and the unlocker make (statx without following, `O_NOFOLLOW|O_DIRECTORY`
//! opens, listing, the I/O error). A leaf, so the walk and `unlock`, which the walk
//! calls back to make a directory usable, never import each other.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{
    AtFlags, Dir, FileType, Mode, OFlags, StatxAttributes, StatxFlags, openat, statx,
};
use rustix::io::Errno;

use crate::sweep::guard::SweepError;

/// An entry's path, built only when a message needs it: building it is
/// O(depth), so doing it per entry would make a deep sweep quadratic.
pub(super) type At<'a> = &'a dyn Fn() -> PathBuf;

/// What the walk records about one entry.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub(super) dev: (u32, u32),
    pub(super) ino: u64,
    /// `None` on kernels without `STATX_MNT_ID` (before 5.8).
    pub(super) mnt: Option<u64>,
    pub(super) is_dir: bool,
    pub(super) mount_root: bool,
    pub(super) uid: u32,
    pub(super) mode: u16,
}

impl Node {
    pub(super) fn same_object(&self, other: &Node) -> bool {
        self.dev == other.dev && self.ino == other.ino && self.mnt == other.mnt
    }
}

const STATX_WANT: StatxFlags = StatxFlags::BASIC_STATS.union(StatxFlags::MNT_ID);

pub(super) fn node_at(dir: BorrowedFd<'_>, name: &CStr) -> Result<Node, Errno> {
    let flags = AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT;
    statx(dir, name, flags, STATX_WANT).map(node)
}

pub(super) fn node_of(fd: BorrowedFd<'_>) -> Result<Node, Errno> {
    statx(fd, c"", AtFlags::EMPTY_PATH, STATX_WANT).map(node)
}

fn node(st: rustix::fs::Statx) -> Node {
    let has_mnt = StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::MNT_ID);
    Node {
        dev: (st.stx_dev_major, st.stx_dev_minor),
        ino: st.stx_ino,
        mnt: has_mnt.then_some(st.stx_mnt_id),
        is_dir: FileType::from_raw_mode(st.stx_mode.into()) == FileType::Directory,
        mount_root: st.stx_attributes_mask.contains(StatxAttributes::MOUNT_ROOT)
            && st.stx_attributes.contains(StatxAttributes::MOUNT_ROOT),
        uid: st.stx_uid,
        mode: st.stx_mode & 0o7777,
    }
}

pub(super) fn open_dir<P: rustix::path::Arg>(dir: impl AsFd, name: P) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    openat(dir, name, flags, Mode::empty())
}

pub(super) fn list(dir: BorrowedFd<'_>) -> Result<Vec<CString>, Errno> {
    let mut reader = Dir::read_from(dir)?;
    let mut out = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            out.push(name.to_owned());
        }
    }
    Ok(out)
}

pub(super) fn io_err(action: &'static str, path: &Path, errno: Errno) -> SweepError {
    SweepError::Io {
        action,
        path: PathBuf::from(path),
        source: errno.into(),
    }
}
