//! Evidence bundles: one schema for every tier.
//!
//! A bundle is a private directory (0700) of files (0600), each written
//! temp-then-rename in the same directory, closed by `manifest.json`, which is
//! written last and holds a sha256 inventory of every other regular file. Names
//! inside a bundle are plain relative paths: an absolute path, `..`, or a path
//! through a symlink is refused before anything is written. Acceptance bundles
//! live in the run directory; UAT bundles in the durable root resolved from the
//! real environment (never a scratch one) and are never swept. `verify` re-hashes
//! a bundle and lists every mismatch, missing and extra file, every entry that is
//! not a regular file or directory, every unexplained directory, every mode
//! other than 0700/0600 and every hard link, comparing names as bytes. This module writes
//! and checks bundles; it does not decide what a lane records.

mod bundle;
mod durable;
mod error;
mod inventory;
mod manifest;
mod repo;
mod run_id;
pub mod unique_json;
mod walk;

pub use bundle::BundleWriter;
pub use error::EvidenceError;
// One private atomic writer for the crate (harness provisioning uses it too).
pub(crate) use bundle::atomic_write;
pub use durable::{DurableRootError, durable_root};
pub use inventory::{
    MAX_MANIFEST_BYTES, Mismatch, VerifyError, VerifyReport, hash_bytes, hash_file, inventory,
    manifest_sha256, read_manifest, verify,
};
pub use manifest::{
    Counts, MANIFEST_NAME, Manifest, Outcome, SCHEMA_VERSION, Surface, Tier, platform, sorted,
};
pub use repo::RepoIdentity;
pub use run_id::{InvalidRunId, RunId};
