//! Hashing a bundle's files, and verifying a bundle against its manifest.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::evidence::bundle::MANIFEST_NAME;
use crate::evidence::manifest::{Manifest, SCHEMA_VERSION};

/// Read size for hashing: large enough that syscalls do not dominate.
const CHUNK: usize = 256 * 1024;

/// Why an inventory could not be built.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// Reading a directory or file failed.
    #[error("failed to read {path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The bundle holds a symlink or special file, which an inventory of
    /// regular files cannot vouch for.
    #[error(
        "bundle entry {path} is not a regular file or directory (remove it; bundles hold regular files only)"
    )]
    Irregular {
        /// The offending path.
        path: PathBuf,
    },
}

/// Why `verify` could not even compare (as opposed to finding differences).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// `manifest.json` is missing or unreadable.
    #[error("failed to read {path}: {source} (is this an evidence bundle directory?)")]
    ManifestUnreadable {
        /// The manifest path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `manifest.json` is not a valid manifest.
    #[error("{path} is not a valid manifest: {source}")]
    ManifestInvalid {
        /// The manifest path.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The manifest declares a schema this build does not read.
    #[error(
        "{path} has schema_version {found}; this build reads version {SCHEMA_VERSION} (use a newer studyloop-evidence)"
    )]
    UnsupportedSchema {
        /// The manifest path.
        path: PathBuf,
        /// The declared version.
        found: serde_json::Value,
    },
    /// Walking the bundle failed.
    #[error(transparent)]
    Walk(#[from] InventoryError),
}

/// One file whose content no longer matches its manifest hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Bundle-relative path.
    pub path: String,
    /// The hash in the manifest.
    pub expected: String,
    /// The hash of the file now.
    pub actual: String,
}

/// The result of re-hashing a bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Files whose hash matched.
    pub matched: usize,
    /// Files whose hash differs.
    pub mismatched: Vec<Mismatch>,
    /// In the manifest, absent on disk.
    pub missing: Vec<String>,
    /// On disk (or not a regular file), absent from the manifest.
    pub extra: Vec<String>,
}

impl VerifyReport {
    /// No mismatch, nothing missing, nothing extra.
    pub fn is_clean(&self) -> bool {
        self.mismatched.is_empty() && self.missing.is_empty() && self.extra.is_empty()
    }
}

/// The lowercase hex sha256 of a file's content.
pub fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(crate::hex::encode(&hasher.finalize()))
}

/// sha256 of every regular file under `dir` except the top-level
/// `manifest.json`, keyed by `/`-separated relative path. A symlink or special
/// file is an error.
pub fn inventory(dir: &Path) -> Result<BTreeMap<String, String>, InventoryError> {
    let walk = walk(dir)?;
    if let Some(rel) = walk.irregular.first() {
        return Err(InventoryError::Irregular {
            path: dir.join(rel),
        });
    }
    hash_all(dir, walk.files)
}

/// Re-hashes the bundle at `dir` and compares it with its manifest.
pub fn verify(dir: &Path) -> Result<VerifyReport, VerifyError> {
    let manifest_path = dir.join(MANIFEST_NAME);
    let text = std::fs::read_to_string(&manifest_path).map_err(|source| {
        VerifyError::ManifestUnreadable {
            path: manifest_path.clone(),
            source,
        }
    })?;
    let invalid = |source| VerifyError::ManifestInvalid {
        path: manifest_path.clone(),
        source,
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(invalid)?;
    let version = value
        .get("schema_version")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    if version.as_u64() != Some(u64::from(SCHEMA_VERSION)) {
        return Err(VerifyError::UnsupportedSchema {
            path: manifest_path,
            found: version,
        });
    }
    let manifest: Manifest = serde_json::from_value(value).map_err(invalid)?;
    let walk = walk(dir)?;
    // Only paths found by walking are ever opened, never a path the manifest
    // names, so a hostile manifest cannot make verify read outside the bundle.
    let actual = hash_all(dir, walk.files)?;
    let mut report = VerifyReport {
        extra: walk.irregular,
        ..VerifyReport::default()
    };
    for (path, expected) in &manifest.file_inventory {
        match actual.get(path) {
            Some(hash) if hash == expected => report.matched += 1,
            Some(hash) => report.mismatched.push(Mismatch {
                path: path.clone(),
                expected: expected.clone(),
                actual: hash.clone(),
            }),
            None => report.missing.push(path.clone()),
        }
    }
    report.extra.extend(
        actual
            .keys()
            .filter(|p| !manifest.file_inventory.contains_key(*p))
            .cloned(),
    );
    report.extra.sort();
    Ok(report)
}

struct Walk {
    files: Vec<String>,
    irregular: Vec<String>,
}

fn walk(dir: &Path) -> Result<Walk, InventoryError> {
    let mut out = Walk {
        files: Vec::new(),
        irregular: Vec::new(),
    };
    walk_into(dir, "", &mut out)?;
    out.files.sort();
    out.irregular.sort();
    Ok(out)
}

fn walk_into(dir: &Path, prefix: &str, out: &mut Walk) -> Result<(), InventoryError> {
    let io = |path: &Path, source| InventoryError::Io {
        path: path.to_owned(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        // `DirEntry::file_type` does not follow symlinks.
        let file_type = entry.file_type().map_err(|e| io(&entry.path(), e))?;
        if file_type.is_dir() {
            walk_into(&entry.path(), &rel, out)?;
        } else if file_type.is_file() {
            if rel != MANIFEST_NAME {
                out.files.push(rel);
            }
        } else {
            out.irregular.push(rel);
        }
    }
    Ok(())
}

fn hash_all(dir: &Path, files: Vec<String>) -> Result<BTreeMap<String, String>, InventoryError> {
    files
        .into_iter()
        .map(|rel| {
            let path = dir.join(&rel);
            hash_file(&path)
                .map(|hash| (rel, hash))
                .map_err(|source| InventoryError::Io { path, source })
        })
        .collect()
}
