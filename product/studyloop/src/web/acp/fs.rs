//! Answers for the agent's `fs/read_text_file` and `fs/write_text_file`
//! requests, confined to the session directory.
//!
//! How: the session dir is opened once and every request is resolved relative
//! to that directory fd, never by path name again. Reads use `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel has it, else a walk
//! component by component (`openat` with `O_NOFOLLOW | O_DIRECTORY` for each
//! directory, `O_NOFOLLOW` for the file). So a component swapped for a symlink
//! between a check and the open (the race the old check-then-open had) can
//! only make the request fail. The file is opened `O_NONBLOCK` and `fstat`ed:
//! anything but a regular file (FIFO, device, socket, directory) is refused
//! without blocking, and so is a file with more than one link (a hardlink
//! planted in the session dir to an outside file). Writes walk the same way,
//! creating missing directories with `mkdirat`, then write a temp file created
//! `O_EXCL` in the target's directory fd and `renameat` it over the name (the
//! rename replaces a planted hard link, it never writes through a link; a
//! symlink at the name is refused).
//! `..` is refused outright; paths must be absolute (the ACP schema says so:
//! a relative one would be resolved against whichever directory the client
//! happens to pick) and lie under the session dir.
//!
//! This is a protocol policy (what the client agrees to do on the agent's
//! behalf), not a sandbox: the agent process itself can still touch the
//! filesystem directly.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{self as rfs, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// The largest file an agent may read through the client.
pub const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// Why a file request was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The path resolves outside the session dir (or uses `..`).
    #[error("path {path} is outside the session dir {root}; agents may only use files under it")]
    Outside {
        /// The requested path.
        path: PathBuf,
        /// The session dir.
        root: PathBuf,
    },
    /// The path is relative; ACP file paths are absolute.
    #[error(
        "path {path} is relative; ACP file paths must be absolute: use {root}/{path} for a file in the session dir"
    )]
    Relative {
        /// The requested path.
        path: PathBuf,
        /// The session dir.
        root: PathBuf,
    },
    /// The path is under the session dir but not a file the client serves.
    #[error(
        "refusing {path}: {reason}; agents may only use regular files with a single link under the session dir, reached without symlinks"
    )]
    Refused {
        /// The requested path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The file does not exist.
    #[error("no file at {0}")]
    NotFound(PathBuf),
    /// Reading or writing failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// read or write.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl FsError {
    /// The JSON-RPC error code the agent receives.
    #[must_use]
    pub fn code(&self) -> i32 {
        match self {
            Self::Outside { .. } | Self::Relative { .. } | Self::Refused { .. } => -32602,
            Self::NotFound(_) => -32002,
            Self::Io { .. } => -32603,
        }
    }
}

/// The session dir as the root of every file request.
#[derive(Debug, Clone)]
pub struct SessionFs {
    /// The resolved root (absolute paths are matched against it).
    root: PathBuf,
    /// The root as given (it may be a symlinked spelling of `root`).
    given: PathBuf,
    /// The root directory, opened once; everything resolves beneath it.
    dir: Arc<OwnedFd>,
    /// Try `openat2` first (tests turn it off to exercise the walk).
    openat2: bool,
}

impl SessionFs {
    /// Confines requests to `root` (resolved and opened once).
    ///
    /// # Errors
    /// [`FsError::Io`] when the root cannot be resolved or opened.
    pub fn new(root: &Path) -> Result<Self, FsError> {
        let io = |source: std::io::Error| FsError::Io {
            action: "open the session dir",
            path: root.to_path_buf(),
            source,
        };
        let real = root.canonicalize().map_err(io)?;
        let dir = rfs::open(
            &real,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io(e.into()))?;
        Ok(Self {
            root: real,
            given: root.to_path_buf(),
            dir: Arc::new(dir),
            openat2: true,
        })
    }

    /// The same root resolved only by the component walk (no `openat2`).
    #[cfg(test)]
    pub(crate) fn walk_only(mut self) -> Self {
        self.openat2 = false;
        self
    }

    /// Reads a text file, optionally from 1-based `line` for `limit` lines.
    ///
    /// # Errors
    /// [`FsError`] when the path escapes the root, is not a regular
    /// single-link file, is missing, too large or unreadable.
    pub fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, FsError> {
        let parts = self.relative(path)?;
        if parts.is_empty() {
            return Err(refused(path, "it is the session dir itself"));
        }
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        let fd = self.open_beneath(path, &parts, flags)?;
        let stat = rfs::fstat(&fd).map_err(|e| io("read", path, e))?;
        let kind = rfs::FileType::from_raw_mode(stat.st_mode);
        if kind != rfs::FileType::RegularFile {
            return Err(refused(
                path,
                &format!("it is not a regular file ({kind:?})"),
            ));
        }
        if stat.st_nlink > 1 {
            return Err(refused(
                path,
                &format!(
                    "it has {} hard links (a link may point outside)",
                    stat.st_nlink
                ),
            ));
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd)
            .take(MAX_READ_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io("read", path, e))?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            return Err(refused(
                path,
                &format!("it is larger than {MAX_READ_BYTES} bytes"),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| refused(path, "it is not UTF-8 text"))?;
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
        let take = limit.map_or(usize::MAX, |l| l as usize);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
    }

    /// Writes a text file atomically (temp file + rename in the same directory
    /// fd), creating missing directories under the root.
    ///
    /// # Errors
    /// [`FsError`] when the path escapes the root or the write fails.
    pub fn write(&self, path: &Path, content: &str) -> Result<(), FsError> {
        let mut parts = self.relative(path)?;
        let name = parts
            .pop()
            .ok_or_else(|| refused(path, "it is the session dir itself"))?;
        let mut dir: Option<OwnedFd> = None;
        for part in parts {
            let parent = dir.as_ref().map_or(&*self.dir, |d| d);
            let next = match open_dir(parent, part) {
                Err(Errno::NOENT) => {
                    match rfs::mkdirat(parent, part, Mode::from_raw_mode(0o700)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(io("write", path, e)),
                    }
                    open_dir(parent, part)
                }
                other => other,
            };
            dir = Some(next.map_err(|e| self.walk_error(path, e))?);
        }
        let dir = dir.as_ref().map_or(&*self.dir, |d| d);
        // A symlink at the name is refused, as for reads. (Were it swapped in
        // after this check, the rename would replace the link, never follow it.)
        if rfs::statat(dir, name, rfs::AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::Symlink)
        {
            return Err(refused(path, "it is a symlink"));
        }
        let (tmp, file) = temp_in(dir).map_err(|e| io("write", path, e))?;
        let written = std::fs::File::from(file)
            .write_all(content.as_bytes())
            .map_err(|e| io("write", path, e))
            .and_then(|()| {
                rfs::renameat(dir, tmp.as_str(), dir, name).map_err(|e| io("write", path, e))
            });
        if written.is_err() {
            let _ = rfs::unlinkat(dir, tmp.as_str(), rfs::AtFlags::empty());
        }
        written
    }

    /// The components of `path` below the root: absolute paths only, under
    /// the root; relative paths, `..` and anything else refused.
    fn relative<'p>(&self, path: &'p Path) -> Result<Vec<&'p OsStr>, FsError> {
        if !path.is_absolute() {
            return Err(FsError::Relative {
                path: path.to_path_buf(),
                root: self.root.clone(),
            });
        }
        path.strip_prefix(&self.root)
            .or_else(|_| path.strip_prefix(&self.given))
            .map_err(|_| self.outside(path))?
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| match c {
                Component::Normal(part) => Ok(part),
                _ => Err(self.outside(path)),
            })
            .collect()
    }

    /// Opens the file `parts` beneath the root with `flags` (never following a symlink).
    fn open_beneath(
        &self,
        path: &Path,
        parts: &[&OsStr],
        flags: OFlags,
    ) -> Result<OwnedFd, FsError> {
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if self.openat2 {
            let joined: PathBuf = parts.iter().collect();
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match rfs::openat2(&*self.dir, &joined, flags, Mode::empty(), resolve) {
                // Not in this kernel (or filtered by seccomp): walk instead.
                Err(Errno::NOSYS | Errno::PERM) => {}
                Err(Errno::AGAIN) => {} // a concurrent rename: the walk decides
                other => return other.map_err(|e| self.walk_error(path, e)),
            }
        }
        let (last, dirs) = parts.split_last().ok_or_else(|| self.outside(path))?;
        let mut dir: Option<OwnedFd> = None;
        for part in dirs {
            let parent = dir.as_ref().map_or(&*self.dir, |d| d);
            dir = Some(open_dir(parent, part).map_err(|e| self.walk_error(path, e))?);
        }
        let dir = dir.as_ref().map_or(&*self.dir, |d| d);
        rfs::openat(dir, *last, flags, Mode::empty()).map_err(|e| self.walk_error(path, e))
    }

    /// What a failed step of a confined open means for the agent.
    fn walk_error(&self, path: &Path, e: Errno) -> FsError {
        match e {
            Errno::NOENT => FsError::NotFound(path.to_path_buf()),
            Errno::LOOP | Errno::NOTDIR => {
                refused(path, "a component is a symlink or not a directory")
            }
            Errno::XDEV => self.outside(path),
            other => io("open", path, other),
        }
    }

    fn outside(&self, path: &Path) -> FsError {
        FsError::Outside {
            path: path.to_path_buf(),
            root: self.root.clone(),
        }
    }
}

fn open_dir(parent: &OwnedFd, part: &OsStr) -> Result<OwnedFd, Errno> {
    rfs::openat(
        parent,
        part,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn refused(path: &Path, reason: &str) -> FsError {
    FsError::Refused {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
    }
}

fn io(action: &'static str, path: &Path, e: impl Into<std::io::Error>) -> FsError {
    FsError::Io {
        action,
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// A new, exclusive temp file in `dir` (same directory as the target, so the
/// rename is atomic), readable only by the owner.
fn temp_in(dir: &OwnedFd) -> Result<(String, OwnedFd), Errno> {
    for attempt in 0..16_u32 {
        let name = format!(".studyloop-acp-{}-{attempt}.tmp", std::process::id());
        match rfs::openat(
            dir,
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        ) {
            Ok(fd) => return Ok((name, fd)),
            Err(Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
    }
    Err(Errno::EXIST)
}
