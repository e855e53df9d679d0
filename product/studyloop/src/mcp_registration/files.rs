//! Reading and replacing a harness's config file safely: the file is
//! resolved (symlinks included) and must stay inside the root it belongs to
//! (the home, or the directory the harness's own env variable names), so a
//! symlinked config never makes StudyLoop write outside that tree; the write
//! is atomic and keeps the file's mode (0600 for a new file).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::RegistrationError;

/// Where `p` really is: its nearest existing ancestor resolved (symlinks
/// followed), joined with the components that do not exist yet (which cannot
/// be links). A dangling link on the way is refused as `Err(link)`.
fn resolve(p: &Path) -> Result<PathBuf, PathBuf> {
    let mut rest = Vec::new();
    for a in p.ancestors() {
        if std::fs::symlink_metadata(a).is_ok() {
            let real = std::fs::canonicalize(a).map_err(|_| a.to_owned())?;
            return Ok(rest.iter().rev().fold(real, |acc, c| acc.join(c)));
        }
        if let Some(name) = a.file_name() {
            rest.push(name.to_owned());
        }
    }
    Err(p.to_owned())
}

/// The real file behind `path`, refused unless it lies inside `root` (both
/// resolved); missing parents are then created (0700) inside the root.
pub(super) fn confined(path: &Path, root: &Path) -> Result<PathBuf, RegistrationError> {
    let outside = |target: &Path| RegistrationError::OutsideRoot {
        path: path.to_owned(),
        target: target.to_owned(),
        root: root.to_owned(),
    };
    let real_root = resolve(root).map_err(|link| outside(&link))?;
    let target = resolve(path).map_err(|link| outside(&link))?;
    if !target.starts_with(&real_root) {
        return Err(outside(&target));
    }
    if let Some(parent) = target.parent() {
        crate::fsutil::ensure_private_dir(parent).map_err(|e| RegistrationError::Io {
            action: "create",
            path: parent.to_owned(),
            source: e,
        })?;
    }
    let is_file = std::fs::metadata(&target).map_or(true, |m| m.is_file());
    if !is_file {
        return Err(RegistrationError::NotAFile(target));
    }
    Ok(target)
}

/// The file's text, `None` when it does not exist.
pub(super) fn read(target: &Path) -> Result<Option<String>, RegistrationError> {
    match crate::fsutil::read_user(target, crate::fsutil::USER_FILE_LIMIT) {
        Ok(Some(t)) => String::from_utf8(t)
            .map(Some)
            .map_err(|_| RegistrationError::Io {
                action: "read (not UTF-8)",
                path: target.to_owned(),
                source: std::io::Error::from(std::io::ErrorKind::InvalidData),
            }),
        Ok(None) => Ok(None),
        Err(e) => Err(RegistrationError::Io {
            action: "read",
            path: target.to_owned(),
            source: e,
        }),
    }
}

/// Replace `target` atomically with `text`, keeping its mode.
pub(super) fn write(target: &Path, text: &str) -> Result<(), RegistrationError> {
    let mode = std::fs::metadata(target).map_or(0o600, |m| m.permissions().mode() & 0o777);
    crate::fsutil::atomic_write(target, text.as_bytes(), mode).map_err(|e| RegistrationError::Io {
        action: "write",
        path: target.to_owned(),
        source: e,
    })
}

/// A JSON config as an object (`{}` when the file is missing); a file that
/// is not a JSON object is refused, never overwritten.
pub(super) fn json_object(
    target: &Path,
    text: Option<&str>,
) -> Result<serde_json::Map<String, serde_json::Value>, RegistrationError> {
    match text {
        None => Ok(serde_json::Map::new()),
        Some(t) if t.trim().is_empty() => Ok(serde_json::Map::new()),
        Some(t) => match serde_json::from_str(t) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            _ => Err(RegistrationError::Unparsable(target.to_owned())),
        },
    }
}

/// A `Value` pretty-printed with a trailing newline (infallible).
pub(super) fn pretty(value: &serde_json::Value) -> String {
    format!("{value:#}\n")
}
