//! Reading a finished evidence bundle for grading and sign-off: its manifest, the digest
//! of the manifest's exact bytes (which binds a grading and a summary to this bundle),
//! and every problem the evidence verifier finds.
//!
//! Read-only: bundles are written by the acceptance crate's writer and never changed here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use studyloop_acceptance::evidence::{self, MANIFEST_NAME, Manifest, VerifyError};

/// Why a directory could not be read as a bundle.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// `manifest.json` is missing or unreadable.
    #[error("`{}` is not an evidence bundle: {source}; pass a bundle directory (it holds manifest.json) or a run directory (it holds results.jsonl)", path.display())]
    NoManifest {
        /// The manifest path tried.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `manifest.json` is not a schema-1 manifest.
    #[error("`{}` is not a valid manifest: {detail}; it was edited or written by another tool", path.display())]
    BadManifest {
        /// The manifest path.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
}

/// A bundle as found on disk.
#[derive(Debug, Clone)]
pub struct Bundle {
    dir: PathBuf,
    manifest: Manifest,
    digest: String,
    problems: Vec<String>,
}

impl Bundle {
    /// Reads the bundle at `dir` and verifies it against its own inventory.
    ///
    /// # Errors
    /// [`BundleError`] when there is no readable, valid manifest. A manifest that reads
    /// but does not match the files is not an error: it is listed in
    /// [`Bundle::problems`], which the rubric's `bundle_missing_inventory_file` rule uses.
    pub fn open(dir: &Path) -> Result<Self, BundleError> {
        let path = dir.join(MANIFEST_NAME);
        // One read of the manifest (a regular file only: a FIFO is an error, never a
        // hang): the parsed fields and the digest come from the same bytes.
        let (bytes, manifest) = evidence::read_manifest(dir).map_err(|e| match e {
            VerifyError::ManifestUnreadable { source, .. } => BundleError::NoManifest {
                path: path.clone(),
                source,
            },
            other => BundleError::BadManifest {
                path: path.clone(),
                detail: other.to_string(),
            },
        })?;
        let digest = evidence::manifest_sha256(&bytes);
        let problems = match evidence::verify(dir) {
            Ok(report) => report.problems(),
            Err(e) => vec![format!("cannot verify: {e}")],
        };
        Ok(Self {
            dir: dir.to_owned(),
            manifest,
            digest,
            problems,
        })
    }

    /// The bundle directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The parsed manifest.
    #[must_use]
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
    /// `sha256:<hex>` of the manifest's exact bytes.
    #[must_use]
    pub fn digest(&self) -> String {
        self.digest.clone()
    }
    /// Every mismatch between the files and the manifest's inventory; empty = clean.
    #[must_use]
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
    /// The inventory's paths plus `manifest.json` itself: what a seat may cite.
    #[must_use]
    pub fn citable(&self) -> BTreeSet<String> {
        let mut paths: BTreeSet<String> = self.manifest.file_inventory.keys().cloned().collect();
        paths.insert(MANIFEST_NAME.to_owned());
        paths
    }
    /// Where this bundle's grading lives: a private sibling `<bundle>.arbitration/`
    /// (never inside the bundle, whose inventory is closed).
    #[must_use]
    pub fn arbitration_dir(&self) -> PathBuf {
        arbitration_dir_for(&self.dir)
    }
}

/// The grading directory beside the bundle at `dir`.
#[must_use]
pub(crate) fn arbitration_dir_for(dir: &Path) -> PathBuf {
    let mut name = dir
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".arbitration");
    dir.with_file_name(name)
}
