//! Removing everything inside a checked root: an iterative walk with a fixed
//! number of open directory fds, that never leaves the root's mount.
//!
//! Why iterative: one stack frame and one open fd per level overflowed a
//! 2 MiB thread at depth ~1000 and hit EMFILE at depth 2000 under
//! `ulimit -n 1024`. Here the path from the root to the current directory is
//! a `Vec` of frames (name, device/inode/mount id, the names still to
//! remove); only the root's fd, the current directory's and, while climbing,
//! its parent's are open (plus one while a directory is listed or made
//! searchable): at most five whatever the depth.
//!
//! Why it stays safe without an fd per level: climbing re-opens the parent as
//! `..` of the current directory with `O_NOFOLLOW|O_DIRECTORY` and compares
//! its device, inode and mount id with what was recorded on the way down; a
//! directory moved or replaced meanwhile is [`SweepError::Swapped`], never
//! followed. Every entry is `statx`ed without following symlinks and must be
//! on the root's device and mount id and not be a mount root, else
//! [`SweepError::CrossesMount`]: nothing on another mount is entered or
//! unlinked. Directories are entered only through `O_NOFOLLOW|O_DIRECTORY`
//! fds; symlinks and files are unlinked where they stand.
//!
//! Directories we own are made usable (0700) before they are used, for an
//! unprivileged sweeper: see `unlock`.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, unlinkat};
use rustix::io::Errno;

use crate::sweep::guard::SweepError;
use crate::sweep::node::{At, Node, io_err, list, node_at, node_of, open_dir};
use crate::sweep::unlock::{make_usable, open_unlocking};

/// How many times entries may change type or identity under the walk before
/// it gives up: a live writer racing the sweep, not a tree at rest.
const RACE_RETRIES: u32 = 1000;

/// One directory on the path from the root to where the walk is.
struct Frame {
    name: CString,
    node: Node,
    /// Open while this is the current directory (or its parent, climbing).
    fd: Option<OwnedFd>,
    pending: Vec<CString>,
}

/// Removes everything inside `root` (an fd on the scratch root, whose path is
/// `root_path`, for messages), leaving `root` itself.
/// The paths in `keep_last` (relative to the root) go last, so a sweep that
/// stops part-way leaves them: the sentinel and owner record keep a half-swept
/// world sweepable again.
pub(super) fn remove_contents(
    root: &OwnedFd,
    root_path: &Path,
    keep_last: &[&Path],
) -> Result<(), SweepError> {
    let at_root = |e| io_err("inspect", root_path, e);
    let root_node = node_of(root.as_fd()).map_err(at_root)?;
    let walk = Walk {
        root_path,
        root: root_node,
        euid: rustix::process::geteuid().as_raw(),
        keep_last,
    };
    let at_root_path = || root_path.to_owned();
    walk.check_mount(&root_node, &at_root_path)?;
    make_usable(root.as_fd(), &root_node, &at_root_path, walk.euid)?;
    let mut stack = vec![Frame {
        name: CString::default(),
        node: root_node,
        fd: None,
        pending: list(root.as_fd()).map_err(|e| io_err("list", root_path, e))?,
    }];
    walk.keep_last_last(&mut stack);
    let mut races = 0u32;
    loop {
        let top = stack.len() - 1;
        let Some(name) = stack[top].pending.pop() else {
            if top == 0 {
                return Ok(());
            }
            if walk.climb(root, &mut stack)? == Climb::Refilled {
                races += 1;
                if races > RACE_RETRIES {
                    let path = walk.path(&stack, None);
                    return Err(io_err("remove (it keeps filling)", &path, Errno::NOTEMPTY));
                }
            }
            continue;
        };
        let here = current_fd(root, &stack);
        match walk.remove_entry(here, &name, &stack)? {
            Step::Done => {}
            Step::Enter(frame) => {
                // Bounded fds: the directory we leave is re-opened as `..` of
                // the one we enter when we climb back.
                if top > 0 {
                    stack[top].fd = None;
                }
                stack.push(frame);
                walk.keep_last_last(&mut stack);
            }
            Step::Retry => {
                races += 1;
                if races > RACE_RETRIES {
                    let path = walk.path(&stack, Some(&name));
                    return Err(io_err("remove (it keeps changing)", &path, Errno::AGAIN));
                }
                stack[top].pending.push(name);
            }
        }
    }
}

/// How leaving a directory went.
#[derive(Debug, PartialEq, Eq)]
enum Climb {
    /// It was empty and is gone.
    Removed,
    /// It had new entries: listed again, still current.
    Refilled,
}

/// What became of one entry.
enum Step {
    /// Unlinked (or already gone).
    Done,
    /// A directory to empty first.
    Enter(Frame),
    /// It changed type or identity under us: look again.
    Retry,
}

struct Walk<'a> {
    root_path: &'a Path,
    root: Node,
    euid: u32,
    keep_last: &'a [&'a Path],
}

impl Walk<'_> {
    /// Moves the top frame's names that lead to a `keep_last` path to the
    /// front of its pending list (it is popped from the back). Only frames
    /// on such a path do any work: a deep walk pays one length check.
    fn keep_last_last(&self, stack: &mut [Frame]) {
        let depth = stack.len() - 1;
        for keep in self.keep_last {
            let parts: Vec<&[u8]> = keep.iter().map(|c| c.as_bytes()).collect();
            let Some(want) = parts.get(depth) else {
                continue;
            };
            let on_path = stack[1..]
                .iter()
                .zip(&parts)
                .all(|(frame, part)| frame.name.as_bytes() == *part);
            let Some(top) = stack.last_mut() else {
                continue;
            };
            if let Some(i) = on_path
                .then(|| top.pending.iter().position(|n| n.as_bytes() == *want))
                .flatten()
            {
                let name = top.pending.remove(i);
                top.pending.insert(0, name);
            }
        }
    }

    fn remove_entry(
        &self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        stack: &[Frame],
    ) -> Result<Step, SweepError> {
        let path = || self.path(stack, Some(name));
        let node = match node_at(dir, name) {
            Ok(node) => node,
            Err(Errno::NOENT) => return Ok(Step::Done),
            Err(e) => return Err(io_err("inspect", &path(), e)),
        };
        self.check_mount(&node, &path)?;
        if !node.is_dir {
            return match unlinkat(dir, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(Step::Done),
                Err(Errno::ISDIR) => Ok(Step::Retry),
                Err(e) => Err(io_err("remove", &path(), e)),
            };
        }
        let child = open_unlocking(dir, name, &path, self.euid, |n| self.check_mount(n, &path))?;
        let child = match child {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(Step::Done),
            // It stopped being a directory since it was inspected.
            Err(Errno::NOTDIR | Errno::LOOP) => return Ok(Step::Retry),
            Err(e) => return Err(io_err("open", &path(), e)),
        };
        let opened = node_of(child.as_fd()).map_err(|e| io_err("inspect", &path(), e))?;
        self.check_mount(&opened, &path)?;
        if !opened.same_object(&node) {
            return Ok(Step::Retry);
        }
        make_usable(child.as_fd(), &opened, &path, self.euid)?;
        let pending = list(child.as_fd()).map_err(|e| io_err("list", &path(), e))?;
        Ok(Step::Enter(Frame {
            name: name.to_owned(),
            node: opened,
            fd: Some(child),
            pending,
        }))
    }

    /// Leaves the emptied top directory: re-opens its parent as `..` (checked
    /// against the recorded identity) unless that is the root, then removes it.
    /// Entries that appeared since it was listed (a straggler still writing, a
    /// rename into it) make it [`Climb::Refilled`]: listed again, it stays the
    /// current directory.
    fn climb(&self, root: &OwnedFd, stack: &mut Vec<Frame>) -> Result<Climb, SweepError> {
        let mut done = stack
            .pop()
            .unwrap_or_else(|| unreachable!("the root frame is never popped"));
        let parent_at = stack.len() - 1;
        if parent_at > 0 && stack[parent_at].fd.is_none() {
            // Built only for an error: it is as long as the walk is deep.
            let parent_path = || self.path(stack, None);
            let from = done.fd.as_ref().map_or(root.as_fd(), AsFd::as_fd);
            let fd = open_dir(from, c"..").map_err(|e| io_err("re-open", &parent_path(), e))?;
            let node = node_of(fd.as_fd()).map_err(|e| io_err("inspect", &parent_path(), e))?;
            if !node.same_object(&stack[parent_at].node) {
                return Err(SweepError::Swapped {
                    path: parent_path(),
                });
            }
            stack[parent_at].fd = Some(fd);
        }
        // Linux removes a directory that is still open; the fd is kept for a
        // refill.
        let parent = current_fd(root, stack);
        let path = |stack: &[Frame], name: &CStr| self.path(stack, Some(name));
        match unlinkat(parent, done.name.as_c_str(), AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(Climb::Removed),
            Err(Errno::NOTEMPTY) if done.fd.is_some() => {
                let fd = done.fd.as_ref().map_or(root.as_fd(), AsFd::as_fd);
                done.pending = list(fd).map_err(|e| io_err("list", &path(stack, &done.name), e))?;
                let parent_at = stack.len() - 1;
                if parent_at > 0 {
                    stack[parent_at].fd = None;
                }
                stack.push(done);
                self.keep_last_last(stack);
                Ok(Climb::Refilled)
            }
            // Our directory was renamed away and something else took its name:
            // look at the name again; the parent's refill finds the directory.
            Err(Errno::NOTDIR) => {
                if let Some(parent) = stack.last_mut() {
                    parent.pending.push(done.name);
                }
                Ok(Climb::Refilled)
            }
            Err(e) => Err(io_err("remove", &path(stack, &done.name), e)),
        }
    }

    /// Refuses anything not on the root's device and mount.
    fn check_mount(&self, node: &Node, path: At<'_>) -> Result<(), SweepError> {
        let why = if node.dev != self.root.dev {
            Some(format!(
                "device {}:{} is not the root's {}:{}",
                node.dev.0, node.dev.1, self.root.dev.0, self.root.dev.1
            ))
        } else if let (Some(mine), Some(root)) = (node.mnt, self.root.mnt)
            && mine != root
        {
            Some(format!("mount id {mine} is not the root's {root}"))
        } else if node.mount_root {
            Some("it is the root of a mount".to_owned())
        } else {
            None
        };
        match why {
            Some(why) => Err(SweepError::CrossesMount {
                root: self.root_path.to_owned(),
                path: path(),
                why,
            }),
            None => Ok(()),
        }
    }

    /// The path of the top directory (plus `name`), for messages only: it may
    /// be longer than PATH_MAX, nothing opens it.
    fn path(&self, stack: &[Frame], name: Option<&CStr>) -> PathBuf {
        let mut path = self.root_path.to_owned();
        for part in stack.iter().skip(1).map(|f| f.name.as_c_str()).chain(name) {
            path.push(part.to_string_lossy().as_ref());
        }
        path
    }
}

fn current_fd<'a>(root: &'a OwnedFd, stack: &'a [Frame]) -> BorrowedFd<'a> {
    stack
        .last()
        .and_then(|f| f.fd.as_ref())
        .map_or(root.as_fd(), AsFd::as_fd)
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
