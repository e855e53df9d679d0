//! The bounded walk of a module directory: every entry under the root, by
//! relative path, without following a symlink and without opening anything
//! but regular files (through `studyloop-regular-file`, so a FIFO planted in a
//! module never blocks the checker). A tree deeper, wider or heavier than any
//! module of data could be is refused as a whole: the walk stops there rather
//! than reading without end.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::ModuleError;

/// The largest file a module may hold (larger files are an MC013 finding and
/// are never read).
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;
/// The most entries (files and directories) a module may hold.
pub(crate) const MAX_ENTRIES: u64 = 2_000;
/// The deepest nesting below the module root.
pub(crate) const MAX_DEPTH: u64 = 12;
/// The most bytes all regular files together may hold.
pub(crate) const MAX_TOTAL_BYTES: u64 = 32 << 20;

/// What one entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A directory.
    Dir,
    /// A regular file.
    File {
        /// Its size in bytes.
        size: u64,
        /// Whether the owner may execute it.
        exec: bool,
        /// Its hard-link count (more than one can alias a file outside the module).
        nlink: u64,
    },
    /// Anything else (symlink, FIFO, socket, device, or an unreadable name).
    Other(&'static str),
}

/// One entry of the tree.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The path relative to the module root, `/`-separated.
    pub(crate) rel: String,
    /// What it is.
    pub(crate) kind: Kind,
}

/// A walked module.
#[derive(Debug)]
pub(crate) struct Tree {
    /// The canonical root.
    pub(crate) root: PathBuf,
    /// Every entry, sorted by `rel`.
    pub(crate) entries: Vec<Entry>,
}

impl Tree {
    /// Walks `path`: it must be a directory (a symlink to one is followed once,
    /// the user named it); nothing below it is followed. `.git` directly under
    /// the root is skipped: it is the checkout's history, not module content.
    pub(crate) fn walk(path: &Path) -> Result<Self, ModuleError> {
        let root = std::fs::canonicalize(path).map_err(|source| ModuleError::Open {
            path: path.to_owned(),
            source,
        })?;
        let meta = std::fs::metadata(&root).map_err(|source| ModuleError::Open {
            path: path.to_owned(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(ModuleError::NotADirectory {
                path: path.to_owned(),
                what: studyloop_regular_file::kind_word(rustix::fs::FileType::from_raw_mode(
                    meta.mode(),
                )),
            });
        }
        let mut walk = Walk {
            root: &root,
            entries: Vec::new(),
            total: 0,
        };
        walk.dir(&root, "", 0)?;
        let mut entries = walk.entries;
        entries.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok(Self { root, entries })
    }

    /// The entry at `rel`, if any.
    pub(crate) fn get(&self, rel: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.rel.as_str().cmp(rel))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The regular files that may be read (within [`MAX_FILE_BYTES`]).
    pub(crate) fn files(&self) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(|e| matches!(e.kind, Kind::File { size, .. } if size <= MAX_FILE_BYTES))
    }

    /// The bytes of the regular file at `rel` (never a FIFO, never through a
    /// symlink at ANY component — each directory is opened `O_NOFOLLOW` from
    /// the root down, so a directory swapped for a link after the walk cannot
    /// redirect the read out of the module — never more than
    /// [`MAX_FILE_BYTES`]).
    pub(crate) fn read(&self, rel: &str) -> Result<Vec<u8>, ModuleError> {
        use rustix::fs::{Mode, OFlags};
        let path = self.root.join(rel);
        let fail = |source: std::io::Error| ModuleError::Io {
            action: "cannot read",
            path: path.clone(),
            source,
        };
        let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir =
            rustix::fs::open(&self.root, dir_flags, Mode::empty()).map_err(|e| fail(e.into()))?;
        let mut parts: Vec<&str> = rel.split('/').collect();
        let name = parts.pop().unwrap_or_default();
        for part in parts {
            if matches!(part, "" | "." | "..") {
                return Err(fail(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a plain relative path",
                )));
            }
            dir = rustix::fs::openat(&dir, part, dir_flags, Mode::empty()).map_err(|e| {
                fail(if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("`{part}` is no longer a directory (a symlink or file was put in its place)"),
                    )
                } else {
                    e.into()
                })
            })?;
        }
        studyloop_regular_file::read_regular_at(
            std::os::fd::AsFd::as_fd(&dir),
            Path::new(name),
            MAX_FILE_BYTES,
        )
        .map_err(fail)
    }
}

struct Walk<'a> {
    root: &'a Path,
    entries: Vec<Entry>,
    total: u64,
}

impl Walk<'_> {
    fn too_big(&self, what: String, limit: u64) -> ModuleError {
        ModuleError::TooBig {
            path: self.root.to_owned(),
            what,
            limit,
        }
    }

    fn dir(&mut self, dir: &Path, rel: &str, depth: u64) -> Result<(), ModuleError> {
        if depth > MAX_DEPTH {
            return Err(self.too_big(format!("`{rel}` is nested {depth} levels deep"), MAX_DEPTH));
        }
        let io = |source| ModuleError::Io {
            action: "cannot list",
            path: dir.to_owned(),
            source,
        };
        for item in std::fs::read_dir(dir).map_err(io)? {
            let item = item.map_err(io)?;
            let name = item.file_name();
            let (name, utf8) = match name.to_str() {
                Some(n) => (n.to_owned(), true),
                None => (name.to_string_lossy().into_owned(), false),
            };
            if rel.is_empty() && name == ".git" {
                continue;
            }
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if self.entries.len() as u64 >= MAX_ENTRIES {
                return Err(self.too_big(
                    format!("more than {MAX_ENTRIES} files and directories"),
                    MAX_ENTRIES,
                ));
            }
            let meta = item.metadata().map_err(io)?;
            let ft = meta.file_type();
            let kind = if !utf8 {
                Kind::Other("a file whose name is not UTF-8")
            } else if ft.is_dir() {
                Kind::Dir
            } else if ft.is_file() {
                self.total = self.total.saturating_add(meta.len());
                if self.total > MAX_TOTAL_BYTES {
                    return Err(self.too_big(
                        format!("the files hold more than {MAX_TOTAL_BYTES} bytes"),
                        MAX_TOTAL_BYTES,
                    ));
                }
                Kind::File {
                    size: meta.len(),
                    exec: meta.permissions().mode() & 0o100 != 0,
                    nlink: meta.nlink(),
                }
            } else {
                Kind::Other(studyloop_regular_file::kind_word(
                    rustix::fs::FileType::from_raw_mode(meta.mode()),
                ))
            };
            let is_dir = kind == Kind::Dir;
            self.entries.push(Entry {
                rel: child_rel.clone(),
                kind,
            });
            if is_dir {
                self.dir(&item.path(), &child_rel, depth + 1)?;
            }
        }
        Ok(())
    }
}
