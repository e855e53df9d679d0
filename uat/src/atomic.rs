//! Atomic file writes with an explicit mode: temp file in the same directory, synced,
//! then renamed over the destination, so a reader sees the old content or the new and a
//! failure leaves nothing at the final name.
//!
//! The evidence writer has the same mechanism privately (fixed at 0600); this one takes
//! the mode because the released summary is meant to be shared (0644) while arbitration
//! files stay private (0600).

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Writes `bytes` to `path` atomically with permissions exactly `mode`.
///
/// # Errors
/// The I/O error of whichever step failed; the temp file is removed.
pub fn write(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let tmp = synced_temp(path, bytes, mode)?;
    let result = std::fs::rename(&tmp, path);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// As [`write`], but never replaces anything at `path`: the complete temp file is
/// hard-linked to the final name, which `link(2)` refuses when the name exists (a
/// private key must never be overwritten, and a check-then-rename would race).
///
/// # Errors
/// `AlreadyExists` when `path` exists; otherwise the I/O error of whichever step
/// failed. The temp file is removed either way.
pub fn write_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let tmp = synced_temp(path, bytes, mode)?;
    let result = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    result
}

/// A complete, synced temp file beside `path` holding `bytes` with mode `mode`.
fn synced_temp(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<std::path::PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.tmp",
        studyloop_acceptance::hex::random(4)
    ));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        // The open mode is filtered by the umask; set the final mode exactly.
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
