//! Why a bundle could not be written or inventoried: the errors the writer, the
//! inventory and the walk share, in a leaf of their own so none of them imports another
//! for its error type.

use std::path::PathBuf;

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A name inside the bundle is not a plain relative path.
    #[error("refusing bundle path {rel:?}: {why} (use a plain relative path such as turns/1.json)")]
    UnsafePath {
        /// The name as given.
        rel: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A path inside the bundle goes through a symlink.
    #[error("refusing bundle path {rel:?}: {through} is a symlink, which could escape the bundle")]
    SymlinkEscape {
        /// The name as given.
        rel: String,
        /// The symlink on the way.
        through: PathBuf,
    },
    /// The bundle directory already exists with content (or is not a directory).
    #[error(
        "refusing to write a bundle into {dir}: it already exists and is not an empty directory (a run id belongs to one run; generate a new run id)"
    )]
    Taken {
        /// The directory.
        dir: PathBuf,
    },
    /// A filesystem operation failed; no partial file is left at its final name.
    #[error("failed to {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The inventory could not be built.
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    /// A value could not be serialised.
    #[error("failed to serialise {rel}: {source}")]
    Json {
        /// The bundle file.
        rel: String,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
}

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
        "bundle {path} holds an entry an inventory cannot vouch for: {what} (remove it; bundles hold regular files with UTF-8 names only)"
    )]
    Irregular {
        /// The bundle directory.
        path: PathBuf,
        /// The entry and what it is.
        what: String,
    },
}
