//! `BundleWriter`: private, atomic, path-guarded bundle writing.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::evidence::Manifest;
use crate::evidence::error::EvidenceError;
use crate::evidence::inventory;
use crate::evidence::manifest::MANIFEST_NAME;
use crate::evidence::manifest::Outcome;

/// Writes one bundle. Dropping it unfinished still writes the manifest, with
/// outcome `errored` and a note, so a run that died early leaves evidence.
#[derive(Debug)]
pub struct BundleWriter {
    dir: PathBuf,
    manifest: Manifest,
    finished: bool,
}

impl BundleWriter {
    /// Creates `dir` (and missing parents) private (0700, tightened if it
    /// already exists). A bundle directory belongs to one run: one that already
    /// holds anything (another run's files, a manifest) or is not a plain
    /// directory is refused, never merged into.
    pub fn create(dir: impl Into<PathBuf>, manifest: Manifest) -> Result<Self, EvidenceError> {
        let dir = dir.into();
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if !meta.is_dir() => return Err(EvidenceError::Taken { dir }),
            Ok(_) => {
                let mut entries = std::fs::read_dir(&dir).map_err(|e| io("read", &dir, e))?;
                if entries.next().is_some() {
                    return Err(EvidenceError::Taken { dir });
                }
            }
            Err(_) => {}
        }
        private_dir(&dir)?;
        Ok(Self {
            dir,
            manifest,
            finished: false,
        })
    }

    /// The bundle directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest fields, to fill in as the run goes.
    pub fn manifest_mut(&mut self) -> &mut Manifest {
        &mut self.manifest
    }

    /// Writes `bytes` to `rel` atomically (0600); returns the full path.
    pub fn write_file(&mut self, rel: &str, bytes: &[u8]) -> Result<PathBuf, EvidenceError> {
        let path = guarded_path(&self.dir, rel)?;
        if let Some(parent) = path.parent() {
            private_dir(parent)?;
        }
        atomic_write(&path, bytes)?;
        Ok(path)
    }

    /// Writes `value` as pretty JSON (with a trailing newline) to `rel`.
    pub fn write_json(
        &mut self,
        rel: &str,
        value: &impl serde::Serialize,
    ) -> Result<PathBuf, EvidenceError> {
        let mut text = serde_json::to_vec_pretty(value).map_err(|source| EvidenceError::Json {
            rel: rel.to_owned(),
            source,
        })?;
        text.push(b'\n');
        self.write_file(rel, &text)
    }

    /// Hashes every other file and writes `manifest.json` last; returns the
    /// bundle directory.
    pub fn finish(mut self) -> Result<PathBuf, EvidenceError> {
        self.finished = true;
        self.write_manifest()?;
        Ok(self.dir.clone())
    }

    fn write_manifest(&mut self) -> Result<(), EvidenceError> {
        self.manifest.file_inventory = inventory::inventory(&self.dir)?;
        atomic_write(
            &self.dir.join(MANIFEST_NAME),
            self.manifest.to_json()?.as_bytes(),
        )
    }
}

impl Drop for BundleWriter {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.manifest.outcome = Outcome::Errored;
        self.manifest.notes.push(
            "bundle closed before the run finished (the run ended early or panicked)".to_owned(),
        );
        if let Err(err) = self.write_manifest() {
            eprintln!(
                "studyloop-acceptance: could not close bundle {}: {err}",
                self.dir.display()
            );
        }
    }
}

/// Joins `rel` onto `dir` after checking it is a plain relative path whose
/// existing prefixes are not symlinks.
pub(crate) fn guarded_path(dir: &Path, rel: &str) -> Result<PathBuf, EvidenceError> {
    let unsafe_path = |why| EvidenceError::UnsafePath {
        rel: rel.to_owned(),
        why,
    };
    if rel.is_empty() {
        return Err(unsafe_path("it is empty"));
    }
    let rel_path = Path::new(rel);
    if rel_path.is_absolute() {
        return Err(unsafe_path("it is absolute"));
    }
    // The reserved name in any spelling (`manifest.json/`, `manifest.json/.`,
    // `./manifest.json`, `manifest.json/x`): compared on the normalised first
    // component, never on the raw string.
    if rel_path
        .components()
        .find(|c| !matches!(c, Component::CurDir))
        .is_some_and(|c| c.as_os_str() == MANIFEST_NAME)
    {
        return Err(unsafe_path("manifest.json is written by finish() only"));
    }
    // One spelling per file: a trailing `/`, a `/.` or a doubled `/` would name
    // the same file as its normal form, so it is refused rather than guessed.
    let normal: Vec<&std::ffi::OsStr> = rel_path.components().map(|c| c.as_os_str()).collect();
    if normal.join(std::ffi::OsStr::new("/")) != rel_path.as_os_str() {
        return Err(unsafe_path(
            "it is not in normal form (no trailing /, no /./ or //)",
        ));
    }
    let mut path = dir.to_path_buf();
    for component in rel_path.components() {
        match component {
            Component::Normal(part) => {
                path.push(part);
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(EvidenceError::SymlinkEscape {
                        rel: rel.to_owned(),
                        through: path,
                    });
                }
            }
            Component::ParentDir => return Err(unsafe_path("it contains ..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {
                return Err(unsafe_path("it is not a plain relative path"));
            }
        }
    }
    Ok(path)
}

/// Creates `dir` and missing parents with 0700, and tightens `dir` to 0700
/// whatever the umask or a previous owner left.
pub(crate) fn private_dir(dir: &Path) -> Result<(), EvidenceError> {
    crate::private_fs::create_dir(dir).map_err(|source| io("create", dir, source))
}

/// Writes `bytes` to a 0600 temp file beside `path`, syncs it, and renames it
/// over `path`: a reader sees the old content or the new, never a part.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), EvidenceError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", crate::hex::random(4)));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|source| io("create", &tmp, source))?;
        // The mode above is filtered by the umask; set it exactly.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|source| io("chmod", &tmp, source))?;
        file.write_all(bytes)
            .map_err(|source| io("write", &tmp, source))?;
        file.sync_all().map_err(|source| io("sync", &tmp, source))?;
        std::fs::rename(&tmp, path).map_err(|source| io("rename into place", path, source))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn io(action: &'static str, path: &Path, source: std::io::Error) -> EvidenceError {
    EvidenceError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
#[path = "bundle_tests.rs"]
mod tests;
