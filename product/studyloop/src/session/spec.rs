//! Spec capture (issue 30 item 5): each session dir holds a `spec/` directory
//! the mentor writes the texts its work follows into (a plan, a brief, a
//! drill's statement), one file each. Its own `.gitignore` holding `*` hides
//! it and itself from git, so a session dir inside a repository never leaks a
//! spec into a commit. `study --end` folds the files into the session record
//! with [`capture`].
//!
//! The files are written by a model from a free-text instruction, so the
//! capture is bounded and never fails on what it finds: at most
//! [`MAX_ENTRIES`] files (the oldest kept: what the session started from is
//! the last thing worth dropping), each at most [`MAX_BYTES`] (a larger one
//! kept truncated, saying so), non-UTF-8 kept as base64, an unreadable file
//! kept as its reason. Nothing but a regular file is opened: a symlink (to
//! `/etc/passwd`, say), a FIFO (which would block `open(2)`) or a directory is
//! recorded as skipped, by kind, and never followed.

use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::SessionError;
use super::load::io;
use crate::fsutil;

/// The spec directory's name inside the session dir.
pub const SPEC_DIR: &str = "spec";
/// The most files one session's capture keeps.
pub const MAX_ENTRIES: usize = 10;
/// The most bytes kept of one file.
pub const MAX_BYTES: usize = 64 * 1024;
/// The most directory entries looked at: an agent writing a file per turn for
/// a week must not make `--end` stat a million names.
const MAX_SCANNED: usize = 1000;
const GITIGNORE: &str = ".gitignore";

/// The spec directory of the session dir `session_dir`.
pub fn spec_dir(session_dir: &Path) -> PathBuf {
    session_dir.join(SPEC_DIR)
}

/// Create the spec dir (0700) and its `.gitignore` holding `*` (written each
/// start, atomically: it is ours, not the user's).
pub fn ensure(session_dir: &Path) -> Result<PathBuf, SessionError> {
    let dir = spec_dir(session_dir);
    fsutil::ensure_private_dir(&dir).map_err(io("create the spec directory", &dir))?;
    let ignore = dir.join(GITIGNORE);
    fsutil::atomic_write(&ignore, b"*\n", 0o600).map_err(io("write", &ignore))?;
    Ok(dir)
}

/// One kept file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecEntry {
    /// The file name as the agent wrote it (lossy UTF-8).
    pub name: String,
    /// Its modification time, RFC 3339 UTC; `None` when unknown.
    pub modified: Option<String>,
    /// Its size on disk in bytes; `None` when it could not be read.
    pub size: Option<u64>,
    /// `utf8` or `base64`; `None` when there is no content.
    pub encoding: Option<String>,
    /// The kept text (or base64 of the kept bytes); `None` when unreadable.
    pub content: Option<String>,
    /// Whether `content` is a prefix of the file.
    pub truncated: bool,
    /// Why the content is not the file verbatim (truncated, not UTF-8,
    /// unreadable); `None` when it is.
    pub reason: Option<String>,
}

/// One name not opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The name (lossy UTF-8).
    pub name: String,
    /// What it is (`a symlink`, `a FIFO`, `a directory`, …) or why it was
    /// dropped (`over the 10-entry bound`).
    pub reason: String,
}

/// What a session's spec directory held at its end.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Captures {
    /// The kept files, oldest first (by mtime, then name).
    pub entries: Vec<SpecEntry>,
    /// Names not kept, with the reason.
    pub skipped: Vec<Skipped>,
    /// Why the directory itself could not be read; `None` when it was (or was
    /// absent, which is `entries` and `skipped` empty).
    pub error: Option<String>,
}

/// Read the spec directory of `session_dir`. Never fails: every problem is a
/// named reason in the result.
pub fn capture(session_dir: &Path) -> Captures {
    let dir = spec_dir(session_dir);
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir_fd = match rustix::fs::open(&dir, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Captures::default(),
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
            return Captures {
                error: Some(format!(
                    "{} is not a directory (a symlink or a file); not followed",
                    dir.display()
                )),
                ..Captures::default()
            };
        }
        Err(e) => {
            return Captures {
                error: Some(format!("cannot open {}: {e}", dir.display())),
                ..Captures::default()
            };
        }
    };
    let mut out = Captures::default();
    let mut files: Vec<(Option<i128>, String, std::ffi::OsString)> = Vec::new();
    let names = match std::fs::read_dir(&dir) {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(format!("cannot list {}: {e}", dir.display()));
            return out;
        }
    };
    for (i, ent) in names.enumerate() {
        if i >= MAX_SCANNED {
            out.error = Some(format!(
                "stopped after {MAX_SCANNED} names; the rest were not looked at"
            ));
            break;
        }
        let Ok(ent) = ent else { continue };
        let raw = ent.file_name();
        let name = raw.to_string_lossy().into_owned();
        if name == GITIGNORE {
            continue;
        }
        // lstat relative to the open dir: the kind of the name itself.
        match rustix::fs::statat(
            &dir_fd,
            raw.as_os_str(),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        ) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                let ns = i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec);
                files.push((Some(ns), name, raw));
            }
            Ok(st) => out.skipped.push(Skipped {
                name,
                reason: kind_reason(FileType::from_raw_mode(st.st_mode)),
            }),
            // Unknown kind: the open below (no-follow, non-blocking) decides
            // and names the reason.
            Err(_) => files.push((None, name, raw)),
        }
    }
    // Oldest first; an unknown mtime sorts last (nothing says it is old).
    files.sort_by(|a, b| (a.0.is_none(), a.0, &a.1).cmp(&(b.0.is_none(), b.0, &b.1)));
    for (i, (ns, name, raw)) in files.into_iter().enumerate() {
        if i >= MAX_ENTRIES {
            out.skipped.push(Skipped {
                name,
                reason: format!("over the {MAX_ENTRIES}-entry bound (the oldest are kept)"),
            });
            continue;
        }
        out.entries.push(read_entry(&dir_fd, name, &raw, ns));
    }
    out
}

fn kind_reason(kind: FileType) -> String {
    format!(
        "{}, not a regular file; not opened",
        studyloop_regular_file::kind_word(kind)
    )
}

fn rfc3339(ns: i128) -> Option<String> {
    let ts = jiff::Timestamp::from_nanosecond(ns).ok()?;
    Some(ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// Open `raw` in `dir` without following a link or blocking on a FIFO, check
/// it is still a regular file, and keep at most [`MAX_BYTES`] of it.
fn read_entry(dir: &OwnedFd, name: String, raw: &std::ffi::OsStr, ns: Option<i128>) -> SpecEntry {
    let mut entry = SpecEntry {
        name,
        modified: ns.and_then(rfc3339),
        size: None,
        encoding: None,
        content: None,
        truncated: false,
        reason: None,
    };
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let opened = rustix::fs::openat(dir, raw, flags, Mode::empty())
        .map_err(std::io::Error::from)
        .and_then(|fd| {
            let st = rustix::fs::fstat(&fd)?;
            let kind = FileType::from_raw_mode(st.st_mode);
            if kind != FileType::RegularFile {
                return Err(std::io::Error::other(kind_reason(kind)));
            }
            Ok((
                std::fs::File::from(fd),
                u64::try_from(st.st_size).unwrap_or(0),
            ))
        });
    let (file, size) = match opened {
        Ok(v) => v,
        Err(e) => {
            entry.reason = Some(format!("unreadable: {e}"));
            return entry;
        }
    };
    entry.size = Some(size);
    let mut bytes = Vec::new();
    // Read one byte past the bound: the size may have grown since fstat.
    if let Err(e) = file
        .take(u64::try_from(MAX_BYTES).unwrap_or(u64::MAX) + 1)
        .read_to_end(&mut bytes)
    {
        entry.reason = Some(format!("unreadable: {e}"));
        return entry;
    }
    let mut reasons = Vec::new();
    if bytes.len() > MAX_BYTES {
        bytes.truncate(MAX_BYTES);
        entry.truncated = true;
        reasons.push(format!(
            "truncated to the first {MAX_BYTES} bytes of {size}"
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) => {
            entry.encoding = Some("utf8".into());
            entry.content = Some(text);
        }
        // A cut through the last character only: keep the whole characters.
        Err(e) if entry.truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            entry.encoding = Some("utf8".into());
            entry.content = Some(String::from_utf8(bytes).unwrap_or_default());
        }
        Err(e) => {
            reasons.push("not UTF-8; kept as base64".into());
            entry.encoding = Some("base64".into());
            entry.content = Some(base64(e.as_bytes()));
        }
    }
    entry.reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    entry
}

/// Standard base64 with padding (RFC 4648 §4).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ABC[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
