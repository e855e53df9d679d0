//! Walking a bundle directory: every entry by its raw name bytes, with its type,
//! mode and link count, iteratively (a hostile tree of any depth cannot overflow
//! the stack).
//!
//! Names are compared as bytes, never decoded lossily: a raw `0xFF` name and a
//! legitimate `notes\u{FFFD}.txt` are two different entries, and a name that is not
//! UTF-8 can never match an inventory key (which is a string).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::evidence::error::InventoryError;
use crate::evidence::manifest::MANIFEST_NAME;

/// A bundle's files: owner read/write only.
pub(crate) const FILE_MODE: u32 = 0o600;
/// A bundle's directories (itself included): owner only.
pub(crate) const DIR_MODE: u32 = 0o700;

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Regular files with UTF-8 names (the manifest excluded): (relative name, path).
    pub(crate) files: Vec<(String, PathBuf)>,
    /// Directories below the root: (relative name, path).
    pub(crate) dirs: Vec<(String, PathBuf)>,
    /// Entries an inventory cannot vouch for, each with why (escaped name).
    pub(crate) irregular: Vec<String>,
    /// Every name that is not a plain regular file with a UTF-8 name (escaped).
    pub(crate) unlisted: Vec<String>,
    /// Entries whose permission bits are not the bundle's.
    pub(crate) modes: Vec<String>,
    /// Regular files with more than one hard link.
    pub(crate) links: Vec<String>,
}

/// A relative name for messages: UTF-8 as is, other bytes escaped (`\xff`).
fn display(rel: &[u8]) -> String {
    match std::str::from_utf8(rel) {
        Ok(s) => s.to_owned(),
        Err(_) => rel.escape_ascii().to_string(),
    }
}

/// Walks `dir` (which must be a real directory, not a symlink to one).
pub(crate) fn walk(dir: &Path) -> Result<Walk, InventoryError> {
    let io = |path: &Path, source| InventoryError::Io {
        path: path.to_owned(),
        source,
    };
    let mut out = Walk::default();
    let root = std::fs::symlink_metadata(dir).map_err(|e| io(dir, e))?;
    if !root.is_dir() {
        return Err(io(
            dir,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a bundle is a directory (not a symlink to one)",
            ),
        ));
    }
    check_mode(".", root.mode(), DIR_MODE, &mut out.modes);
    let mut stack: Vec<(Vec<u8>, PathBuf)> = vec![(Vec::new(), dir.to_owned())];
    while let Some((prefix, path)) = stack.pop() {
        for entry in std::fs::read_dir(&path).map_err(|e| io(&path, e))? {
            let entry = entry.map_err(|e| io(&path, e))?;
            let name: OsString = entry.file_name();
            let mut rel = prefix.clone();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(name.as_bytes());
            let shown = display(&rel);
            let utf8 = std::str::from_utf8(&rel).ok().map(str::to_owned);
            // `DirEntry::metadata` does not follow symlinks.
            let meta = entry.metadata().map_err(|e| io(&entry.path(), e))?;
            let kind = meta.file_type();
            if utf8.is_none() {
                out.irregular.push(format!(
                    "{shown}: the name is not UTF-8, so no inventory can list it"
                ));
            }
            if kind.is_dir() {
                check_mode(&format!("{shown}/"), meta.mode(), DIR_MODE, &mut out.modes);
                if let Some(rel) = utf8 {
                    out.dirs.push((rel, entry.path()));
                } else {
                    out.unlisted.push(format!("{shown}/"));
                }
                stack.push((rel, entry.path()));
            } else if kind.is_file() {
                check_mode(&shown, meta.mode(), FILE_MODE, &mut out.modes);
                if meta.nlink() > 1 {
                    out.links.push(format!(
                        "{shown}: {} hard links (a bundle file has exactly one; another name can change it)",
                        meta.nlink()
                    ));
                }
                match utf8 {
                    Some(rel) if rel == MANIFEST_NAME => {}
                    Some(rel) => out.files.push((rel, entry.path())),
                    None => out.unlisted.push(shown),
                }
            } else {
                let what = if kind.is_symlink() {
                    "a symlink"
                } else if kind.is_fifo() {
                    "a FIFO"
                } else if kind.is_socket() {
                    "a socket"
                } else if kind.is_block_device() || kind.is_char_device() {
                    "a device"
                } else {
                    "not a regular file"
                };
                out.irregular.push(format!("{shown}: {what}"));
                out.unlisted.push(shown);
            }
        }
    }
    out.files.sort();
    out.dirs.sort();
    for list in [
        &mut out.irregular,
        &mut out.unlisted,
        &mut out.modes,
        &mut out.links,
    ] {
        list.sort();
    }
    Ok(out)
}

fn check_mode(shown: &str, mode: u32, want: u32, out: &mut Vec<String>) {
    let bits = mode & 0o7777;
    if bits != want {
        out.push(format!("{shown}: mode {bits:04o}, want {want:04o}"));
    }
}
