//! Installed modules: immutable content-addressed snapshots under
//! `<config dir>/modules/snapshots/<digest>` and `modules/modules.lock.json`
//! (id, version, digest, source; git remote + sha for a checkout). `add` and
//! `remove` run under one exclusive `flock` (`modules/.lock`), so concurrent
//! commands serialise and the lockfile never loses an entry; the lockfile is
//! replaced atomically. `add` copies the module into a private staging dir
//! and checks THAT copy, so what is installed is exactly what passed.

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::check::check;
use super::digest;
use super::error::{ModuleError, io};
use super::finding::Finding;
use super::git::{self, GitSource};
use super::tree::{Kind, Tree};
use crate::env::Env;
use crate::fsutil;

/// The lockfile's format version.
const LOCK_VERSION: u32 = 1;
/// The largest lockfile read.
const MAX_LOCKFILE: u64 = 4 << 20;

/// The module store's paths.
#[derive(Debug, Clone)]
pub(crate) struct Store {
    /// `<config dir>/modules`.
    pub(crate) dir: PathBuf,
}

/// One installed module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LockEntry {
    /// The module id.
    pub(crate) id: String,
    /// Its manifest version.
    pub(crate) version: String,
    /// The content digest (sha256 hex) naming the snapshot.
    pub(crate) digest: String,
    /// The directory it was added from.
    pub(crate) source: String,
    /// The checkout it came from, when the path was inside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) git: Option<GitSource>,
    /// When it was added (RFC 3339 UTC).
    pub(crate) added_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Lockfile {
    version: u32,
    modules: Vec<LockEntry>,
}

/// What `add` did.
#[derive(Debug)]
pub(crate) enum Added {
    /// Installed (a new entry).
    Installed(LockEntry),
    /// The same id with the same content was installed already.
    Unchanged(LockEntry),
    /// The module (or the staged copy of it) does not conform; nothing written.
    Refused(Vec<Finding>),
}

/// A snapshot's state on use.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Health {
    /// The content hashes to the recorded digest.
    Intact,
    /// It does not (or cannot be hashed): what was found.
    Tampered(String),
}

impl Store {
    /// The store under the config dir of `env`.
    pub(crate) fn new(env: &Env) -> Result<Self, ModuleError> {
        Ok(Self {
            dir: crate::settings::config_dir(env)?.join("modules"),
        })
    }

    fn snapshots(&self) -> PathBuf {
        self.dir.join("snapshots")
    }

    fn lockfile(&self) -> PathBuf {
        self.dir.join("modules.lock.json")
    }

    /// The snapshot directory of `digest` (refused unless it is a digest).
    pub(crate) fn snapshot(&self, entry: &LockEntry) -> Result<PathBuf, ModuleError> {
        if digest::is_digest(&entry.digest) {
            Ok(self.snapshots().join(&entry.digest))
        } else {
            Err(ModuleError::Tampered {
                id: entry.id.clone(),
                expected: entry.digest.clone(),
                found: "a lockfile digest that is not 64 hex characters".into(),
            })
        }
    }

    fn lock(&self) -> Result<fsutil::FileLock, ModuleError> {
        fsutil::ensure_private_dir(&self.snapshots())
            .map_err(io("cannot create", &self.snapshots()))?;
        let path = self.dir.join(".lock");
        fsutil::FileLock::exclusive(&path).map_err(io("cannot lock", &path))
    }

    /// The installed modules, in the order they were added.
    pub(crate) fn entries(&self) -> Result<Vec<LockEntry>, ModuleError> {
        let path = self.lockfile();
        let bytes = match studyloop_regular_file::read_regular(&path, MAX_LOCKFILE) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(ModuleError::Io {
                    action: "cannot read",
                    path,
                    source,
                });
            }
        };
        let lock: Lockfile =
            serde_json::from_slice(&bytes).map_err(|e| ModuleError::BadLockfile {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        if lock.version != LOCK_VERSION {
            return Err(ModuleError::BadLockfile {
                path,
                detail: format!("version {} is not {LOCK_VERSION}", lock.version),
            });
        }
        Ok(lock.modules)
    }

    fn write_entries(&self, modules: Vec<LockEntry>) -> Result<(), ModuleError> {
        let path = self.lockfile();
        let body = serde_json::to_string_pretty(&Lockfile {
            version: LOCK_VERSION,
            modules,
        })
        .unwrap_or_default()
            + "\n";
        fsutil::atomic_write(&path, body.as_bytes(), 0o600).map_err(io("cannot write", &path))
    }

    /// Checks, stages, re-checks and installs the module at `path`.
    pub(crate) fn add(&self, path: &Path) -> Result<Added, ModuleError> {
        let first = check(path)?;
        if !first.findings.is_empty() {
            return Ok(Added::Refused(first.findings));
        }
        let _lock = self.lock()?;
        self.clear_staging()?;
        let staging = self
            .snapshots()
            .join(format!(".staging-{}", crate::ids::random_hex(8)));
        let result = self.install(&first.tree, &staging);
        if staging.exists() {
            remove_tree(&staging)?;
        }
        result
    }

    fn install(&self, source: &Tree, staging: &Path) -> Result<Added, ModuleError> {
        copy_tree(source, staging)?;
        let again = check(staging)?;
        if !again.findings.is_empty() {
            return Ok(Added::Refused(again.findings));
        }
        let m = again.manifest.unwrap_or_default();
        let (Some(id), Some(version)) = (m.id, m.version) else {
            // Unreachable for a conforming module (MC001), but never a panic.
            return Err(ModuleError::BadId(String::new()));
        };
        let digest = digest::of_tree(&again.tree).map_err(|found| ModuleError::Tampered {
            id: id.clone(),
            expected: "a hashable staging copy".into(),
            found,
        })?;
        let mut entries = self.entries()?;
        if let Some(e) = entries.iter().find(|e| e.id == id) {
            return if e.digest == digest {
                Ok(Added::Unchanged(e.clone()))
            } else {
                Err(ModuleError::AlreadyInstalled {
                    id,
                    digest: e.digest.clone(),
                })
            };
        }
        let entry = LockEntry {
            id,
            version,
            digest,
            source: source.root.display().to_string(),
            git: git::source(&source.root),
            added_at: crate::context::now_rfc3339(),
        };
        let target = self.snapshot(&entry)?;
        if target.exists() {
            // Another id (or an orphan of a crash) with the same content.
            if self.health(&entry) != Health::Intact {
                remove_tree(&target)?;
            }
        }
        if !target.exists() {
            seal(staging)?;
            std::fs::rename(staging, &target).map_err(io("cannot install", &target))?;
        }
        entries.push(entry.clone());
        self.write_entries(entries)?;
        Ok(Added::Installed(entry))
    }

    /// Staging dirs only exist under the lock: any found while holding it are
    /// the leftovers of a killed `add`.
    fn clear_staging(&self) -> Result<(), ModuleError> {
        let dir = self.snapshots();
        for item in std::fs::read_dir(&dir)
            .map_err(io("cannot list", &dir))?
            .flatten()
        {
            if item.file_name().to_string_lossy().starts_with(".staging-") {
                remove_tree(&item.path())?;
            }
        }
        Ok(())
    }

    /// Removes `id`: the lockfile entry first (atomically), then its snapshot
    /// unless another entry shares the digest. A crash in between leaves an
    /// orphan snapshot (harmless, reused or ignored), never a dangling entry.
    pub(crate) fn remove(&self, id: &str) -> Result<LockEntry, ModuleError> {
        let _lock = self.lock()?;
        let mut entries = self.entries()?;
        let Some(at) = entries.iter().position(|e| e.id == id) else {
            return Err(self.not_installed(id, &entries));
        };
        let gone = entries.remove(at);
        self.write_entries(entries.clone())?;
        // A digest that is not one (an edited lockfile) names no snapshot:
        // nothing is deleted through it.
        if !entries.iter().any(|e| e.digest == gone.digest)
            && let Ok(dir) = self.snapshot(&gone)
            && dir.exists()
        {
            remove_tree(&dir)?;
        }
        Ok(gone)
    }

    fn not_installed(&self, id: &str, entries: &[LockEntry]) -> ModuleError {
        let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        ModuleError::NotInstalled {
            id: id.to_owned(),
            installed: if ids.is_empty() {
                "none".into()
            } else {
                ids.join(", ")
            },
        }
    }

    /// Whether the snapshot of `entry` still hashes to its digest.
    pub(crate) fn health(&self, entry: &LockEntry) -> Health {
        let dir = match self.snapshot(entry) {
            Ok(d) => d,
            Err(e) => return Health::Tampered(e.to_string()),
        };
        match Tree::walk(&dir) {
            Err(e) => Health::Tampered(e.to_string()),
            Ok(tree) if tree.root != dir => Health::Tampered("the snapshot is a symlink".into()),
            Ok(tree) => match digest::of_tree(&tree) {
                Ok(d) if d == entry.digest => Health::Intact,
                Ok(d) => Health::Tampered(d),
                Err(why) => Health::Tampered(why),
            },
        }
    }

    /// The installed module `id` with its verified snapshot: the one way a
    /// drill reaches module files (tampering is detected on use).
    pub(crate) fn verified(&self, id: &str) -> Result<(LockEntry, PathBuf), ModuleError> {
        let entries = self.entries()?;
        let Some(entry) = entries.iter().find(|e| e.id == id) else {
            return Err(self.not_installed(id, &entries));
        };
        match self.health(entry) {
            Health::Intact => Ok((entry.clone(), self.snapshot(entry)?)),
            Health::Tampered(found) => Err(ModuleError::Tampered {
                id: id.to_owned(),
                expected: entry.digest.clone(),
                found,
            }),
        }
    }
}

/// Copies the walked `tree` into a new private `dest`: directories 0700 and
/// files 0644/0755 (only the exec bit carries over). Only regular files and
/// directories exist in a conforming tree; anything else stops the copy.
fn copy_tree(tree: &Tree, dest: &Path) -> Result<(), ModuleError> {
    fsutil::ensure_private_dir(dest).map_err(io("cannot create", dest))?;
    for e in &tree.entries {
        let path = dest.join(&e.rel);
        match e.kind {
            Kind::Dir => std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&path)
                .map_err(io("cannot create", &path))?,
            Kind::File { exec, .. } => {
                let bytes = tree.read(&e.rel)?;
                let mode = if exec { 0o755 } else { 0o644 };
                fsutil::atomic_write(&path, &bytes, mode).map_err(io("cannot write", &path))?;
            }
            Kind::Other(what) => {
                // Changed since the check passed: refuse rather than copy.
                return Err(ModuleError::Io {
                    action: "cannot copy",
                    path: tree.root.join(&e.rel),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("it is {what}, not a regular file"),
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Makes a staged snapshot read-only (files 0444/0555, directories 0555),
/// deepest first so the root is sealed last.
fn seal(dir: &Path) -> Result<(), ModuleError> {
    let tree = Tree::walk(dir)?;
    for e in tree.entries.iter().rev() {
        let path = dir.join(&e.rel);
        let mode = match e.kind {
            Kind::Dir | Kind::File { exec: true, .. } => 0o555,
            _ => 0o444,
        };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(io("cannot seal", &path))?;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555))
        .map_err(io("cannot seal", dir))
}

/// Removes a snapshot or staging tree (made writable first; never follows a
/// symlink: `remove_dir_all` unlinks links rather than entering them).
fn remove_tree(dir: &Path) -> Result<(), ModuleError> {
    fn unseal(dir: &Path) {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        if let Ok(items) = std::fs::read_dir(dir) {
            for item in items.flatten() {
                if item.file_type().is_ok_and(|t| t.is_dir()) {
                    unseal(&item.path());
                }
            }
        }
    }
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        unseal(dir);
    }
    std::fs::remove_dir_all(dir).map_err(io("cannot remove", dir))
}
