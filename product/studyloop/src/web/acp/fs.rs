//! Answers for the agent's `fs/read_text_file` and `fs/write_text_file`
//! requests, confined to the session directory.
//!
//! A path is accepted only if, after resolving symlinks, it lies inside the
//! session dir; `..` components are refused outright. This is a protocol
//! policy (what the client agrees to do on the agent's behalf), not a sandbox:
//! the agent process itself can still touch the filesystem directly.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

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
            Self::Outside { .. } => -32602,
            Self::NotFound(_) => -32002,
            Self::Io { .. } => -32603,
        }
    }
}

/// The session dir as the root of every file request.
#[derive(Debug, Clone)]
pub struct SessionFs {
    root: PathBuf,
}

impl SessionFs {
    /// Confines requests to `root` (resolved once, so a symlinked session dir works).
    ///
    /// # Errors
    /// [`FsError::Io`] when the root cannot be resolved.
    pub fn new(root: &Path) -> Result<Self, FsError> {
        let root = root.canonicalize().map_err(|source| FsError::Io {
            action: "resolve",
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Self { root })
    }

    /// Reads a text file, optionally from 1-based `line` for `limit` lines.
    ///
    /// # Errors
    /// [`FsError`] when the path escapes the root, is missing or unreadable.
    pub fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, FsError> {
        let full = self.lexical(path)?;
        let real = full
            .canonicalize()
            .map_err(|e| self.io_or_missing("read", &full, e))?;
        self.ensure_inside(path, &real)?;
        let text =
            std::fs::read_to_string(&real).map_err(|e| self.io_or_missing("read", &real, e))?;
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
        let take = limit.map_or(usize::MAX, |l| l as usize);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
    }

    /// Writes a text file atomically (temp file + rename), creating missing
    /// directories under the root.
    ///
    /// # Errors
    /// [`FsError`] when the path escapes the root or the write fails.
    pub fn write(&self, path: &Path, content: &str) -> Result<(), FsError> {
        let full = self.lexical(path)?;
        let parent = full.parent().ok_or_else(|| self.outside(path))?;
        // The nearest existing ancestor must resolve inside the root; what is
        // below it is created fresh, so it cannot contain symlinks.
        let mut existing = parent;
        while !existing.exists() {
            existing = existing.parent().ok_or_else(|| self.outside(path))?;
        }
        let real_existing = existing
            .canonicalize()
            .map_err(|e| self.io("write", existing, e))?;
        self.ensure_inside(path, &real_existing)?;
        if full.exists() || full.symlink_metadata().is_ok() {
            let real = full.canonicalize().map_err(|_| self.outside(path))?;
            self.ensure_inside(path, &real)?;
        }
        std::fs::create_dir_all(parent).map_err(|e| self.io("write", parent, e))?;
        let mut tmp = tempfile_in(parent).map_err(|e| self.io("write", parent, e))?;
        tmp.1
            .write_all(content.as_bytes())
            .map_err(|e| self.io("write", &tmp.0, e))?;
        drop(tmp.1);
        std::fs::rename(&tmp.0, &full).map_err(|e| {
            let _ = std::fs::remove_file(&tmp.0);
            self.io("write", &full, e)
        })
    }

    /// Joins relative paths to the root and refuses `..`.
    fn lexical(&self, path: &Path) -> Result<PathBuf, FsError> {
        if path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(self.outside(path));
        }
        Ok(if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        })
    }

    fn ensure_inside(&self, asked: &Path, real: &Path) -> Result<(), FsError> {
        if real.starts_with(&self.root) {
            Ok(())
        } else {
            Err(self.outside(asked))
        }
    }

    fn outside(&self, path: &Path) -> FsError {
        FsError::Outside {
            path: path.to_path_buf(),
            root: self.root.clone(),
        }
    }

    fn io(&self, action: &'static str, path: &Path, source: std::io::Error) -> FsError {
        FsError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }

    fn io_or_missing(&self, action: &'static str, path: &Path, e: std::io::Error) -> FsError {
        if e.kind() == std::io::ErrorKind::NotFound {
            FsError::NotFound(path.to_path_buf())
        } else {
            self.io(action, path, e)
        }
    }
}

/// A new, exclusive temp file next to the target (same filesystem, so the
/// rename is atomic), readable only by the owner.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    for attempt in 0..16_u32 {
        let name = format!(".studyloop-acp-{}-{attempt}.tmp", std::process::id());
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free temp file name",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_inside_and_refusals_outside() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("session");
        std::fs::create_dir(&root).expect("mkdir");
        let fs = SessionFs::new(&root).expect("root");
        fs.write(&root.join("notes/a.txt"), "one\ntwo\nthree\n")
            .expect("write inside");
        assert_eq!(
            fs.read(Path::new("notes/a.txt"), None, None).expect("read"),
            "one\ntwo\nthree\n"
        );
        assert_eq!(
            fs.read(&root.join("notes/a.txt"), Some(2), Some(1))
                .expect("slice"),
            "two\n"
        );

        let outside = dir.path().join("secret.txt");
        std::fs::write(&outside, "s").expect("seed");
        assert!(matches!(
            fs.read(&outside, None, None),
            Err(FsError::Outside { .. })
        ));
        assert!(matches!(
            fs.write(&outside, "x"),
            Err(FsError::Outside { .. })
        ));
        assert!(matches!(
            fs.read(Path::new("../secret.txt"), None, None),
            Err(FsError::Outside { .. })
        ));

        std::os::unix::fs::symlink(&outside, root.join("link")).expect("symlink");
        assert!(matches!(
            fs.read(&root.join("link"), None, None),
            Err(FsError::Outside { .. })
        ));
        assert!(matches!(
            fs.write(&root.join("link"), "x"),
            Err(FsError::Outside { .. })
        ));
        std::os::unix::fs::symlink(dir.path(), root.join("up")).expect("dir symlink");
        assert!(matches!(
            fs.write(&root.join("up/new.txt"), "x"),
            Err(FsError::Outside { .. })
        ));
        assert_eq!(std::fs::read_to_string(&outside).expect("untouched"), "s");
        assert!(matches!(
            fs.read(&root.join("missing"), None, None),
            Err(FsError::NotFound(_))
        ));
    }
}
