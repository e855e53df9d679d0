//! The one way the framework reads a file it was handed: a turn script, a rubric or
//! redaction rules file, a run directory's records, a bundle's manifest, an arbitration.
//!
//! [`open_regular`] / [`read_regular`] open with `O_NONBLOCK | O_NOFOLLOW |
//! O_CLOEXEC` and `fstat` the open fd: a FIFO planted in place of `results.jsonl`
//! or a turn script would otherwise block `open(2)` forever (a hung sign-off is a
//! sign-off nobody can finish), a final symlink would make the reader vouch for a
//! file outside the tree it was given, and a device or a huge sparse file would be
//! read without end. It is a leaf crate so the actors (turn scripts), the
//! acceptance framework, the redaction rules and the rubric loaders share it.
//!
//! What it is not: a writer (evidence is written by `studyloop-acceptance`'s
//! bundle writer, temp-then-rename) or a directory walker.

use std::io::Read;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};

/// Opens `path` read-only with `O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC` (so neither
/// a FIFO nor a final symlink can block or redirect it), then `fstat`s the open
/// fd and refuses anything but a regular file. A missing file keeps its
/// `NotFound` kind so callers can treat absence as they always did.
///
/// # Errors
/// The OS error, or `InvalidInput` naming what the path is instead of a
/// regular file.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    open_regular_in(rustix::fs::CWD, path)
}

/// [`open_regular`] relative to the open directory `dir`.
fn open_regular_in(
    dir: std::os::fd::BorrowedFd<'_>,
    path: &Path,
) -> std::io::Result<std::fs::File> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, path, flags, Mode::empty()) {
        Ok(fd) => fd,
        // O_NOFOLLOW on a symlink fails with ELOOP: name it.
        Err(rustix::io::Errno::LOOP) => return Err(not_regular(path, "a symlink")),
        Err(e) => return Err(e.into()),
    };
    let stat = rustix::fs::fstat(&fd)?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(not_regular(path, kind_word(kind)));
    }
    Ok(std::fs::File::from(fd))
}

/// Reads the regular file at `path` (opened as [`open_regular`] does), refusing
/// one larger than `limit` bytes.
///
/// # Errors
/// As [`open_regular`], or `InvalidData` when the file holds more than `limit`
/// bytes.
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    read_bounded(open_regular(path)?, path, limit)
}

/// Reads the file at `path` as [`read_regular`] does, except that symlinks are
/// followed: for a file the user owns and may keep as a link (a dotfile
/// manager's `config.yaml`, `~/.claude.json`). What the link leads to is still
/// opened non-blocking and `fstat`ed, so a link to `/dev/zero` or a FIFO is
/// refused as the device or FIFO it is, and the read stays bounded.
///
/// # Errors
/// As [`read_regular`], less the symlink refusal.
pub fn read_regular_through_links(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(rustix::fs::CWD, path, flags, Mode::empty())?;
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
    if kind != FileType::RegularFile {
        return Err(not_regular(path, kind_word(kind)));
    }
    read_bounded(std::fs::File::from(fd), path, limit)
}

/// Reads the regular file `name` inside the open directory `dir` (opened as
/// [`open_regular`] does, relative to `dir`), refusing one larger than `limit`
/// bytes. A walker that holds each directory open (`O_DIRECTORY |
/// O_NOFOLLOW`, component by component) reads through this, so a directory
/// swapped for a symlink after the walk cannot redirect the read outside the
/// tree. `name` must be one path component.
///
/// # Errors
/// As [`read_regular`]; `InvalidInput` when `name` is not one component.
pub fn read_regular_at(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &Path,
    limit: u64,
) -> std::io::Result<Vec<u8>> {
    if name.components().count() != 1 || name.to_str().is_none_or(|n| n == ".." || n == ".") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not one file name", name.display()),
        ));
    }
    read_bounded(open_regular_in(dir, name)?, name, limit)
}

fn read_bounded(file: std::fs::File, path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let too_big = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} holds more than {limit} bytes, more than any file the framework writes there; it was planted or corrupted",
                path.display()
            ),
        )
    };
    if file.metadata()?.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    // The size can grow after fstat: never read past the limit whatever it says.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

fn not_regular(path: &Path, what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{} is {what}, not a regular file; only regular files are read as records or evidence (remove it and re-run)",
            path.display()
        ),
    )
}

/// A word for a non-regular file type.
pub fn kind_word(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symlink",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "an unknown file type",
    }
}

/// Makes a FIFO (0600) at `path`: the file a hostile tree plants to hang a reader.
/// For tests of every reader that must refuse one (here and in the crates using it).
///
/// # Panics
/// When the FIFO cannot be made (a test set-up failure).
#[doc(hidden)]
pub fn make_fifo_for_tests(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mknod a FIFO");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        make_fifo_for_tests(path);
    }

    #[test]
    fn a_fifo_a_symlink_a_dir_and_a_big_file_are_refused_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        self::fifo(&fifo);
        let err = read_regular(&fifo, 10).unwrap_err().to_string();
        assert!(err.contains("a FIFO, not a regular file"), "{err}");
        let file = tmp.path().join("f");
        std::fs::write(&file, b"0123456789ab").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let err = read_regular(&link, 100).unwrap_err().to_string();
        assert!(err.contains("a symlink"), "{err}");
        let err = read_regular(tmp.path(), 100).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
        let err = read_regular(&file, 10).unwrap_err().to_string();
        assert!(err.contains("more than 10 bytes"), "{err}");
        assert_eq!(read_regular(&file, 12).unwrap(), b"0123456789ab");
        let missing = read_regular(&tmp.path().join("nope"), 1).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn reads_through_links_refuse_what_the_link_leads_to_when_not_regular() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, b"abc").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_regular_through_links(&link, 3).unwrap(), b"abc");
        let zero = tmp.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_regular_through_links(&zero, 1 << 30)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a character device"), "{err}");
        fifo(&tmp.path().join("fifo"));
        std::os::unix::fs::symlink(tmp.path().join("fifo"), tmp.path().join("to-fifo")).unwrap();
        let err = read_regular_through_links(&tmp.path().join("to-fifo"), 9)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a FIFO"), "{err}");
    }

    #[test]
    fn reads_at_a_directory_fd_refuse_what_read_regular_refuses_and_other_components() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("f"), b"abc").unwrap();
        fifo(&tmp.path().join("fifo"));
        std::os::unix::fs::symlink("/etc/hostname", tmp.path().join("link")).unwrap();
        let dir = std::fs::File::open(tmp.path()).unwrap();
        let fd = std::os::fd::AsFd::as_fd(&dir);
        assert_eq!(read_regular_at(fd, Path::new("f"), 3).unwrap(), b"abc");
        let err = read_regular_at(fd, Path::new("fifo"), 3)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a FIFO"), "{err}");
        let err = read_regular_at(fd, Path::new("link"), 99)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a symlink"), "{err}");
        for bad in ["../f", "a/f", "..", "/etc/hostname"] {
            let err = read_regular_at(fd, Path::new(bad), 99).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
        }
    }
}
