//! The cassette on disk: a JSON-lines file, 0600 in a 0700 directory, appended to
//! under an exclusive `flock` and read as a regular file only.
//!
//! Appending, not rewriting: every cell of a run (threads of one process, or nextest's
//! processes) adds its entries to one file, and a line is committed by its newline.
//! Each append takes the lock, cuts a torn tail left by a writer killed mid-line back
//! to the last newline, then writes the whole line; so concurrent recorders never lose
//! or interleave an entry, and a killed recorder leaves a file every reader parses (a
//! reader ignores a final line without its newline and says so).

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use rustix::fs::{FlockOperation, OFlags, flock};
use studyloop_redaction::pinned::digest;

use super::CassetteError;
use super::entry::{self, Entry, Refused};

/// The largest cassette a replay reads (a journey records a few hundred KB).
pub const MAX_CASSETTE_BYTES: u64 = 64 << 20;

/// Appends `line` (one entry, newline-terminated) to `path`.
pub(crate) fn append(path: &Path, line: &[u8]) -> Result<(), CassetteError> {
    let io = |source| CassetteError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.exists()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io)?;
    }
    // O_NOFOLLOW | O_NONBLOCK: a symlink or FIFO planted in place of the cassette is
    // an error, never a redirect or a hang.
    let flags = OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    if meta.permissions().mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io)?;
    }
    flock(&file, FlockOperation::LockExclusive).map_err(|e| io(e.into()))?;
    cut_torn_tail(&mut file).map_err(io)?;
    // Under the lock, so a short write cannot let another recorder in mid-line.
    file.write_all(line).map_err(io)?;
    Ok(())
}

/// Cuts everything after the last newline (a line a killed writer left unfinished).
fn cut_torn_tail(file: &mut std::fs::File) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let mut end = len;
    let mut chunk = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let n = usize::try_from(end - start).unwrap_or(chunk.len());
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk[..n])?;
        if let Some(at) = chunk[..n].iter().rposition(|&b| b == b'\n') {
            end = start + at as u64 + 1;
            break;
        }
        end = start;
    }
    if end != len {
        file.set_len(end)?;
    }
    Ok(())
}

/// A cassette as read for replay.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    /// The sha256 of the bytes read.
    pub(crate) sha256: String,
    /// Every entry, in file order.
    pub(crate) entries: Vec<Entry>,
    /// A final line without its newline was ignored (a recorder killed mid-line).
    pub(crate) torn_tail: bool,
}

/// Reads and checks every line of `path` (each string against `redactor`'s rules).
pub(crate) fn load(
    path: &Path,
    redactor: &studyloop_redaction::Redactor,
) -> Result<Loaded, CassetteError> {
    let bytes =
        studyloop_regular_file::read_regular(path, MAX_CASSETTE_BYTES).map_err(|source| {
            CassetteError::Read {
                path: path.to_owned(),
                source,
            }
        })?;
    let sha256 = digest(&bytes);
    let (complete, tail) = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(at) => bytes.split_at(at + 1),
        None => (&[][..], &bytes[..]),
    };
    let mut entries = Vec::new();
    for (n, text) in complete.split(|&b| b == b'\n').enumerate() {
        if text.trim_ascii().is_empty() {
            continue;
        }
        let line = n + 1;
        entries.push(
            entry::parse(text, redactor).map_err(|refused| match refused {
                Refused::Corrupt(detail) => CassetteError::Corrupt {
                    path: path.to_owned(),
                    line,
                    detail,
                },
                Refused::Tampered(detail) => CassetteError::Tampered {
                    path: path.to_owned(),
                    line,
                    detail,
                },
            })?,
        );
    }
    Ok(Loaded {
        sha256,
        entries,
        torn_tail: !tail.is_empty(),
    })
}

/// The sha256 of the cassette as it is now (`None` when it cannot be read).
pub(crate) fn sha256_now(path: &Path) -> Option<String> {
    studyloop_regular_file::read_regular(path, MAX_CASSETTE_BYTES)
        .ok()
        .map(|b| digest(&b))
}
