//! Small file-system primitives every writer uses: private directories,
//! atomic replace (temp file in the same dir, then rename), single-write
//! appends, an exclusive `flock` guard, and the bounded readers every product
//! file goes through ([`read_private`], [`read_user`]: the one regular-file
//! reader of `studyloop-regular-file`, so a FIFO or `/dev/zero` planted at a
//! product path can neither hang a command nor make it read without end).
//!
//! Atomic here means "a reader never sees a half-written file"; files are not
//! fsynced (a power cut may lose the last write, never corrupt it).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Create `dir` (and missing parents) with mode 0700. An existing dir is left as is.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn temp_sibling(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".tmp-{}-{}",
        std::process::id(),
        crate::ids::random_hex(4)
    ));
    Ok(path.with_file_name(tmp))
}

/// Write `bytes` to `path` atomically with `mode` (temp file + rename).
pub fn atomic_write(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let tmp = temp_sibling(path)?;
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(bytes)?;
        // The umask may have narrowed the mode; never widen it, but make it exact.
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The most a state-tree record (state, journal) holds; real ones are < 64 KiB.
pub const STATE_LIMIT: u64 = 4 << 20;
/// The most a feed (topics, parking lot) holds: weeks of notes, not a device.
pub const FEED_LIMIT: u64 = 64 << 20;
/// The most a config the user edits (`config.yaml`, a harness config such as
/// `~/.claude.json`, which keeps project history, or the kiro template) holds.
pub const USER_FILE_LIMIT: u64 = 64 << 20;

/// Reads a file of the state tree: only a regular file, never through a
/// final symlink, non-blocking, at most `limit` bytes. `None` when absent.
pub fn read_private(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    absent_is_none(studyloop_regular_file::read_regular(path, limit))
}

/// Reads a file the user owns (a config): as [`read_private`], but a symlink
/// is followed (dotfile managers link them); where it leads must be regular.
pub fn read_user(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    absent_is_none(studyloop_regular_file::read_regular_through_links(
        path, limit,
    ))
}

/// Whether `path` is absent or a regular file (through links), checked
/// without opening it for reading: SQLite opens the history DB only after
/// this, since it would block on a FIFO or map a device.
pub fn absent_or_regular(path: &Path) -> io::Result<()> {
    match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file; remove it and re-run",
                path.display(),
                studyloop_regular_file::kind_word(rustix::fs::FileType::from_raw_mode(
                    std::os::unix::fs::MetadataExt::mode(&m)
                ))
            ),
        )),
    }
}

/// Whether `e` is a refusal of the regular-file reader (not a regular file,
/// or over its bound) rather than an OS failure: the file was planted or
/// corrupted, which the caller reports as damage.
pub fn is_not_regular(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData
    )
}

fn absent_is_none(r: io::Result<Vec<u8>>) -> io::Result<Option<Vec<u8>>> {
    match r {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens `path` to append, creating it with `mode`: never through a final
/// symlink and never blocking (a FIFO without a reader fails with ENXIO);
/// anything but a regular file is refused.
fn open_append(path: &Path, mode: u32) -> io::Result<File> {
    open_regular_no_follow(
        OpenOptions::new().append(true).create(true).mode(mode),
        path,
        "",
        "re-run",
    )
}

/// Opens `path` with `options` never through a final symlink and never blocking
/// (a FIFO without a peer fails with ENXIO), then refuses anything but a regular
/// file, naming it (`what` before the path, `fix` after "remove it and").
fn open_regular_no_follow(
    options: &mut OpenOptions,
    path: &Path,
    what: &str,
    fix: &str,
) -> io::Result<File> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = options
        .custom_flags(flags.bits().cast_signed())
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{what}{} is not a regular file; remove it and {fix}",
                path.display()
            ),
        ));
    }
    Ok(file)
}

/// Append one line (a `\n` is added) with a single `write` on an `O_APPEND`
/// descriptor, so concurrent writers never interleave or lose lines. Creates
/// the file with `mode` if missing.
pub fn append_line(path: &Path, line: &str, mode: u32) -> io::Result<()> {
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    let mut f = open_append(path, mode)?;
    let n = f.write(buf.as_bytes())?;
    if n != buf.len() {
        return Err(io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short append to {}", path.display()),
        ));
    }
    Ok(())
}

/// Create an empty file with `mode` if it does not exist.
pub fn touch(path: &Path, mode: u32) -> io::Result<()> {
    open_append(path, mode).map(drop)
}

/// Remove a file; a missing file is fine.
pub fn remove_if_exists(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// An exclusive advisory lock held until drop (the fd closes, the lock goes).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Opens (creating 0600) the lock file itself: never through a symlink, which
    /// could create or hold a file outside the state tree (a dangling link is
    /// followed by a plain create), and never a FIFO or other special file.
    fn open(path: &Path) -> io::Result<File> {
        open_regular_no_follow(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600),
            path,
            "lock file ",
            "retry",
        )
    }

    /// Block until `path` (created 0600 if needed) is exclusively locked.
    pub fn exclusive(path: &Path) -> io::Result<Self> {
        let file = Self::open(path)?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(Self { _file: file })
    }

    /// Lock `path` exclusively if nobody holds it; `Ok(None)` when it is held.
    pub fn try_exclusive(path: &Path) -> io::Result<Option<Self>> {
        let file = Self::open(path)?;
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_sets_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        atomic_write(&p, b"{}", 0o600).unwrap();
        atomic_write(&p, b"{\"a\":1}", 0o600).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn private_dir_is_0700() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b");
        ensure_private_dir(&p).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }

    #[test]
    fn a_lock_never_follows_a_symlink_or_opens_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        // A dangling link: a plain create would make the target outside the tree.
        let outside = dir.path().join("outside");
        let link = dir.path().join("a.lock");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(FileLock::exclusive(&link).is_err());
        assert!(FileLock::try_exclusive(&link).is_err());
        assert!(
            !outside.exists(),
            "the lock created a file through the link"
        );
        // A link to an existing file is refused too.
        fs::write(&outside, b"keep").unwrap();
        assert!(FileLock::exclusive(&link).is_err());
        // A FIFO is refused at once (no hang).
        let fifo = dir.path().join("f.lock");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let err = FileLock::exclusive(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        // A normal lock still works and is 0600.
        let ok = dir.path().join("ok.lock");
        let held = FileLock::exclusive(&ok).unwrap();
        assert!(FileLock::try_exclusive(&ok).unwrap().is_none());
        drop(held);
        assert_eq!(
            fs::metadata(&ok).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
