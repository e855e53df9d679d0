//! The disk an attempt holds, watched while a phase runs (`runner`): a file
//! may hold at most `MAX_FILE_BYTES` (the phase's `RLIMIT_FSIZE`), and the
//! attempt's writable directories together at most [`MAX_ATTEMPT_BYTES`] in
//! at most [`MAX_ATTEMPT_ENTRIES`] entries. The kernel has no per-directory
//! bound an unprivileged user can set (quotas and loop mounts need root), so
//! the runner measures the attempt every [`EVERY`] and ends the phase once it
//! is over: what a phase can write past the bound is what it writes in one
//! interval.
//!
//! The measure counts allocated blocks (a sparse file weighs what it holds),
//! each inode once, never following a link. A directory the phase locked
//! (mode 000) cannot be walked by a non-root runner; the filesystem's own
//! growth since the phase started then stands in (an upper bound: other
//! writers on that filesystem count too).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most bytes an attempt's `home/`, `tmp/` and `work/` hold together.
pub(crate) const MAX_ATTEMPT_BYTES: u64 = 512 << 20;
/// The most files and directories they hold together.
pub(crate) const MAX_ATTEMPT_ENTRIES: u64 = 100_000;
/// How often the runner measures.
pub(crate) const EVERY: Duration = Duration::from_millis(100);

/// What an attempt holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) bytes: u64,
    pub(crate) entries: u64,
}

impl Usage {
    /// Whether this is over either bound.
    pub(crate) fn over(&self) -> bool {
        self.bytes > MAX_ATTEMPT_BYTES || self.entries > MAX_ATTEMPT_ENTRIES
    }
}

/// Watches the writable directories of one attempt during a phase.
pub(crate) struct Watch {
    dirs: Vec<PathBuf>,
    /// The attempt's own usage when the phase started.
    before: Usage,
    /// The filesystem's used bytes when the phase started.
    fs_before: Option<u64>,
}

impl Watch {
    /// Starts watching `dirs` (what earlier phases left counts).
    pub(crate) fn start(dirs: Vec<PathBuf>) -> Self {
        let (before, _) = walk(&dirs);
        let fs_before = dirs.first().and_then(|d| fs_used(d));
        Self {
            dirs,
            before,
            fs_before,
        }
    }

    /// The attempt's usage now.
    pub(crate) fn measure(&self) -> Usage {
        let (mut u, complete) = walk(&self.dirs);
        if !complete {
            let grown = self
                .dirs
                .first()
                .and_then(|d| fs_used(d))
                .zip(self.fs_before)
                .map_or(0, |(now, then)| now.saturating_sub(then));
            u.bytes = u.bytes.max(self.before.bytes + grown);
        }
        u
    }
}

/// The filesystem's used bytes (all writers).
fn fs_used(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_blocks.saturating_sub(s.f_bfree) * s.f_frsize)
}

/// Walks `dirs` (no link followed, each inode once); stops early once over a
/// bound. Returns the usage and whether every directory could be read.
fn walk(dirs: &[PathBuf]) -> (Usage, bool) {
    let mut u = Usage {
        bytes: 0,
        entries: 0,
    };
    let mut seen = HashSet::new();
    let mut complete = true;
    let mut todo: Vec<PathBuf> = dirs.to_vec();
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            complete = false;
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            u.entries += 1;
            if m.nlink() <= 1 || seen.insert((m.dev(), m.ino())) {
                u.bytes += m.blocks() * 512;
            }
            if m.is_dir() {
                todo.push(e.path());
            }
            if u.over() {
                return (u, complete);
            }
        }
    }
    (u, complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_count_once_per_inode_and_sparse_files_weigh_what_they_hold() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a"), vec![7u8; 1 << 20]).unwrap();
        std::fs::hard_link(d.path().join("a"), d.path().join("b")).unwrap();
        let sparse = std::fs::File::create(d.path().join("sparse")).unwrap();
        sparse.set_len(1 << 30).unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let u = Watch::start(vec![d.path().to_path_buf()]).measure();
        assert_eq!(u.entries, 4);
        assert!(
            (1 << 20..(1 << 20) + (64 << 10)).contains(&u.bytes),
            "{u:?}"
        );
        assert!(!u.over());
    }
}
