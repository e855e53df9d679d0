//! The cassette on disk: a JSON-lines file, 0600 in a 0700 directory, appended to
//! under an exclusive `flock` and read as a regular file only.
//!
//! Appending, not rewriting: every cell of a run (threads of one process, or nextest's
//! processes) adds its entries to one file, and a line is committed by its newline.
//! Each append takes the lock, cuts a torn tail left by a writer killed mid-line back
//! to the last newline, then writes the whole line; so concurrent recorders never lose
//! or interleave an entry, and a killed recorder leaves a file every reader parses (a
//! reader ignores a final line without its newline and says so).
//!
//! The first line is the cassette's salt. The first recorder draws it and writes it
//! under the same lock as every append, before any key is made ([`salt`]); every
//! later recorder and every reader takes it from there, so all keys in one file share
//! one salt.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use rustix::fs::{FlockOperation, OFlags, flock};
use studyloop_redaction::pinned::digest;

use super::CassetteError;
use super::entry::{self, Entry, Refused, Salt};

/// The largest cassette a replay reads (a journey records a few hundred KB).
pub const MAX_CASSETTE_BYTES: u64 = 64 << 20;

/// Appends `line` (one entry, newline-terminated) to `path`.
pub(crate) fn append(path: &Path, line: &[u8]) -> Result<(), CassetteError> {
    let mut file = open_locked(path)?;
    // Under the lock, so a short write cannot let another recorder in mid-line.
    file.write_all(line).map_err(|source| CassetteError::Write {
        path: path.to_owned(),
        source,
    })
}

/// The salt of the cassette at `path`: read from its first line, or, when it has no
/// complete line yet, drawn fresh and written as that line, all under the lock (two
/// first recorders racing cannot write two salts).
///
/// # Errors
/// The file cannot be opened or written, its first line is a format-1 line (named
/// with the fix), or it is not a salt line.
pub(crate) fn salt(
    path: &Path,
    redactor: &studyloop_redaction::Redactor,
) -> Result<Salt, CassetteError> {
    let io = |source| CassetteError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = open_locked(path)?;
    let mut head = Vec::new();
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    // A salt line is ~150 bytes; a first line longer than this is no salt line.
    (&mut file).take(4096).read_to_end(&mut head).map_err(io)?;
    let Some(end) = head.iter().position(|&b| b == b'\n') else {
        let salt = Salt::fresh().map_err(io)?;
        file.write_all(&entry::line(Entry::Salt {
            salt: salt.as_str().to_owned(),
        }))
        .map_err(io)?;
        return Ok(salt);
    };
    match entry::parse(&head[..end], redactor) {
        Ok(Entry::Salt { salt }) => Salt::parse(&salt)
            .ok_or_else(|| refused(path, 1, Refused::Tampered("a bad salt".into()))),
        Ok(_) => Err(refused(
            path,
            1,
            Refused::Corrupt("the first line is not the cassette's salt".into()),
        )),
        Err(why) => Err(refused(path, 1, why)),
    }
}

/// The error for line `line` of `path`, refused for `why`.
fn refused(path: &Path, line: usize, why: Refused) -> CassetteError {
    let path = path.to_owned();
    match why {
        Refused::Corrupt(detail) => CassetteError::Corrupt { path, line, detail },
        Refused::Tampered(detail) => CassetteError::Tampered { path, line, detail },
        Refused::OldFormat(format) => CassetteError::OldFormat { path, format },
    }
}

/// `path` opened for reading and appending, created 0600 in a 0700 directory, locked
/// exclusively, a torn tail cut.
fn open_locked(path: &Path) -> Result<std::fs::File, CassetteError> {
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
    Ok(file)
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
    /// The salt of its first line (`None` for a file with no complete line).
    pub(crate) salt: Option<Salt>,
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
    let mut salt = None;
    for (n, text) in complete.split(|&b| b == b'\n').enumerate() {
        if text.trim_ascii().is_empty() {
            continue;
        }
        let line = n + 1;
        let entry = entry::parse(text, redactor).map_err(|why| refused(path, line, why))?;
        // Exactly one salt, and before any key: every key in the file is under it.
        match (&entry, &salt) {
            (Entry::Salt { salt: s }, None) if entries.is_empty() => salt = Salt::parse(s),
            (Entry::Salt { .. }, _) => {
                return Err(refused(
                    path,
                    line,
                    Refused::Tampered("a second salt line".into()),
                ));
            }
            (_, None) => {
                return Err(refused(
                    path,
                    line,
                    Refused::Corrupt("an entry before the cassette's salt line".into()),
                ));
            }
            _ => entries.push(entry),
        }
    }
    Ok(Loaded {
        sha256,
        salt,
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
