//! Hashing a bundle's files, and verifying a bundle against its manifest.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::evidence::error::InventoryError;
use crate::evidence::manifest::{MANIFEST_NAME, Manifest, SCHEMA_VERSION};
use crate::evidence::walk::walk;

/// Read size for hashing: large enough that syscalls do not dominate.
const CHUNK: usize = 256 * 1024;

/// Why `verify` could not even compare (as opposed to finding differences).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// `manifest.json` is missing, unreadable, not a regular file or too large.
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
    /// On disk (or not a regular file), absent from the manifest; names that are
    /// not UTF-8 are shown escaped (`\xff`) and never match an inventory key.
    pub extra: Vec<String>,
    /// Directories that hold no inventoried file (an empty or unexplained dir).
    pub unexpected_dirs: Vec<String>,
    /// Entries an inventory cannot vouch for: symlinks, FIFOs, sockets, devices,
    /// names that are not UTF-8; each with why.
    pub irregular: Vec<String>,
    /// The bundle dir, a subdirectory or a file whose mode is not 0700 / 0600.
    pub wrong_modes: Vec<String>,
    /// Files with more than one hard link.
    pub hard_links: Vec<String>,
}

impl VerifyReport {
    /// Nothing mismatched, missing, extra, unexpected, irregular, mis-moded or linked.
    pub fn is_clean(&self) -> bool {
        self.problems().is_empty()
    }

    /// Every problem, one line each (`missing: x`, `mode: …`), in a stable order.
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .mismatched
            .iter()
            .map(|m| format!("altered: {}", m.path))
            .collect();
        out.extend(self.missing.iter().map(|p| format!("missing: {p}")));
        out.extend(
            self.extra
                .iter()
                .map(|p| format!("not in the inventory: {p}")),
        );
        out.extend(
            self.unexpected_dirs
                .iter()
                .map(|p| format!("unexpected directory: {p}")),
        );
        out.extend(self.irregular.iter().map(|p| format!("irregular: {p}")));
        out.extend(self.wrong_modes.iter().map(|p| format!("wrong mode: {p}")));
        out.extend(self.hard_links.iter().map(|p| format!("hard link: {p}")));
        out
    }
}

/// The lowercase hex sha256 of a file's content (opened as a regular file only:
/// a FIFO swapped in cannot block the hash).
pub fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = crate::private_fs::open_regular(path)?;
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

/// The lowercase hex sha256 of `bytes`.
pub fn hash_bytes(bytes: &[u8]) -> String {
    crate::hex::encode(&Sha256::digest(bytes))
}

/// `sha256:<hex>` of a manifest's exact bytes: the digest a results line and a
/// receipt record, and the one verify and the sign-off compare with it.
#[must_use]
pub fn manifest_sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hash_bytes(bytes))
}

/// sha256 of every regular file under `dir` except the top-level
/// `manifest.json`, keyed by `/`-separated relative path. A symlink, a special
/// file or a name that is not UTF-8 is an error.
pub fn inventory(dir: &Path) -> Result<BTreeMap<String, String>, InventoryError> {
    let walk = walk(dir)?;
    if let Some(what) = walk.irregular.first() {
        return Err(InventoryError::Irregular {
            path: dir.to_owned(),
            what: what.clone(),
        });
    }
    hash_all(walk.files)
}

/// The most bytes a manifest may hold: far above any real inventory.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// Reads `manifest.json` of the bundle at `dir`: a regular file (never a FIFO or
/// symlink), at most [`MAX_MANIFEST_BYTES`], schema [`SCHEMA_VERSION`]. Returns
/// the exact bytes and the parsed manifest.
pub fn read_manifest(dir: &Path) -> Result<(Vec<u8>, Manifest), VerifyError> {
    let manifest_path = dir.join(MANIFEST_NAME);
    let bytes =
        crate::private_fs::read_regular(&manifest_path, MAX_MANIFEST_BYTES).map_err(|source| {
            VerifyError::ManifestUnreadable {
                path: manifest_path.clone(),
                source,
            }
        })?;
    let invalid = |source| VerifyError::ManifestInvalid {
        path: manifest_path.clone(),
        source,
    };
    let value: serde_json::Value = super::unique_json::from_slice(&bytes).map_err(invalid)?;
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
    Ok((bytes, manifest))
}

/// Re-hashes the bundle at `dir` and compares it with its manifest: content,
/// names (as bytes), modes (0700 dirs, 0600 files), link counts, and every
/// entry an inventory of regular files cannot vouch for.
pub fn verify(dir: &Path) -> Result<VerifyReport, VerifyError> {
    let (_, manifest) = read_manifest(dir)?;
    let walk = walk(dir)?;
    // Only paths found by walking are ever opened, never a path the manifest
    // names, so a hostile manifest cannot make verify read outside the bundle.
    let mut report = VerifyReport {
        extra: walk.unlisted,
        irregular: walk.irregular,
        wrong_modes: walk.modes,
        hard_links: walk.links,
        ..VerifyReport::default()
    };
    // A directory is accounted for only when an inventoried file lies beneath it.
    report.unexpected_dirs = walk
        .dirs
        .iter()
        .filter(|(rel, _)| {
            let prefix = format!("{rel}/");
            !manifest
                .file_inventory
                .keys()
                .any(|k| k.starts_with(&prefix))
        })
        .map(|(rel, _)| format!("{rel}/"))
        .collect();
    let actual = hash_all(walk.files)?;
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

fn hash_all(files: Vec<(String, PathBuf)>) -> Result<BTreeMap<String, String>, InventoryError> {
    files
        .into_iter()
        .map(|(rel, path)| {
            hash_file(&path)
                .map(|hash| (rel, hash))
                .map_err(|source| InventoryError::Io { path, source })
        })
        .collect()
}
