//! The guarded sweeper: removes one scratch tree and nothing else.
//!
//! Before deleting anything it hard-errors, leaving the tree for inspection, if
//! (every path symlink-resolved first) the scratch home is, or is under, the
//! real home; the real home is, or is under, the scratch root; the scratch
//! config dir is, or is under, the real `~/.config/studyloop`; the root is not a
//! `sl-acc-*` directory directly under `/tmp`; or the ownership sentinel is
//! missing or wrong. The sentinel is read through a directory fd opened (without
//! following symlinks) on the very root that is then deleted through that same
//! fd, with `openat`/`unlinkat` and `O_NOFOLLOW` all the way down: a symlink
//! inside the tree is removed as a link and its target is never touched, and
//! there is no window in which a checked path can be swapped for another.
//!
//! It never crosses a mount: a mount point anywhere under the root (from
//! `/proc/self/mountinfo`) refuses the sweep before anything is deleted, and
//! the walk refuses any entry whose device or mount id differs from the
//! root's (a bind mount of the same filesystem shares the device), so files
//! inside a mount survive. The walk is iterative with at most five open fds
//! whatever the depth, and as an unprivileged user it makes directories we
//! own usable (0700) before using them (`walk` says how, safely).
//! This module deletes; it does not stop processes (see `scratch`).

mod guard;
mod mounts;
mod node;
mod remove;
#[cfg(test)]
mod tests;
mod unlock;
mod walk;

pub(crate) use guard::{OWNER_NAME, SCRATCH_PARENT, SCRATCH_PREFIX};
pub use guard::{SweepError, SweepTarget, check_path_guards, default_real_home};
pub use remove::sweep;
