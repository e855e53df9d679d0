//! Reading a run directory for the report without ever leaving it through a
//! symlink: a directory is listed with `symlink_metadata` (a symlink is listed
//! as such and never entered, and a directory that is itself reached through a
//! symlink is not listed at all), and a file is read only when no component of
//! its path is a symlink, with the framework's one regular-file reader (no final
//! symlink, no FIFO, no device, capped size). Every read of a bundle goes
//! through [`list`] and these readers: a sub-directory such as `lifecycle/` is
//! read from the bundle's own listing, never listed as a root of its own.

use std::path::{Path, PathBuf};

/// The most bytes of one text file a page shows; the rest is cut with a note.
pub(crate) const MAX_SHOWN: u64 = 256 << 10;
/// The most bytes of one screenshot copied into the report.
pub(crate) const MAX_IMAGE: u64 = 8 << 20;
/// The most entries (files and directories) a bundle listing walks: a
/// bound on a planted tree.
const MAX_ENTRIES: usize = 5000;

/// A file as found in a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Path relative to the bundle, `/`-separated.
    pub(crate) rel: String,
    /// Size in bytes (`0` for a symlink or special file).
    pub(crate) size: u64,
    /// Regular file (`false`: a symlink, FIFO, socket or device: listed, never read).
    pub(crate) regular: bool,
}

/// Every entry below `dir`, sorted, symlinked directories not entered; nothing
/// when `dir` itself has a symlink on its path.
pub(crate) fn list(dir: &Path) -> Vec<Entry> {
    list_bounded(dir, MAX_ENTRIES)
}

fn list_bounded(dir: &Path, max: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    if !no_symlink_on(dir) {
        return out;
    }
    let mut stack = vec![(dir.to_owned(), String::new())];
    // Directories count too: a planted tree of empty directories is bounded.
    let mut seen = 0usize;
    while let Some((d, prefix)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > max {
                break;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push((e.path(), rel));
            } else {
                out.push(Entry {
                    rel,
                    size: if meta.is_file() { meta.len() } else { 0 },
                    regular: meta.is_file(),
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// Whether no component of `path` (absolute, no `..`) is a symlink: the one
/// check a path named in a log must pass before anything below it is read.
pub(crate) fn no_symlink_on(path: &Path) -> bool {
    if !path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return false;
    }
    let mut walked = PathBuf::new();
    for c in path.components() {
        walked.push(c);
        match std::fs::symlink_metadata(&walked) {
            Ok(m) if m.file_type().is_symlink() => return false,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    true
}

/// A text file's first [`MAX_SHOWN`] bytes (lossy UTF-8) and whether it was
/// cut; `None` when it is not a readable regular file or a symlink is on its path.
pub(crate) fn read_text(path: &Path) -> Option<(String, bool)> {
    use std::io::Read as _;
    if !no_symlink_on(path) {
        return None;
    }
    let file = studyloop_acceptance::private_fs::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    // One byte past the cap tells a cut file from one exactly at it.
    file.take(MAX_SHOWN + 1).read_to_end(&mut bytes).ok()?;
    let cut = bytes.len() as u64 > MAX_SHOWN;
    bytes.truncate(MAX_SHOWN as usize);
    Some((String::from_utf8_lossy(&bytes).into_owned(), cut))
}

/// A JSON file parsed, when [`read_bytes`] reads it.
pub(crate) fn read_json(path: &Path, max: u64) -> Option<serde_json::Value> {
    let bytes = read_bytes(path, max)?;
    serde_json::from_slice(&bytes).ok()
}

/// A binary file's bytes, when a regular file no larger than `max` with no
/// symlink on its path.
pub(crate) fn read_bytes(path: &Path, max: u64) -> Option<Vec<u8>> {
    if !no_symlink_on(path) {
        return None;
    }
    studyloop_acceptance::private_fs::read_regular(path, max).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A planted tree of many empty directories and a symlink loop is walked
    /// within the bound, never through the link.
    #[test]
    fn a_planted_tree_is_walked_within_the_bound_and_never_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("b");
        let mut deep = root.clone();
        for i in 0..60 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        for i in 0..100 {
            std::fs::create_dir(root.join(format!("e{i}"))).unwrap();
        }
        std::fs::write(deep.join("f.txt"), "x").unwrap();
        std::os::unix::fs::symlink(&root, root.join("loop")).unwrap();
        let started = std::time::Instant::now();
        let listed = list_bounded(&root, 50);
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert!(listed.len() <= 50);
        let link = listed.iter().find(|e| e.rel == "loop").map(|e| e.regular);
        assert!(matches!(link, Some(false) | None), "{link:?}");
        assert!(listed.iter().all(|e| !e.rel.starts_with("loop/")));
    }
}
