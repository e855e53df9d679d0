//! Loading this crate's pinned YAML files (`council_v1.yaml`, `signoff_v2.yaml`) through
//! the workspace's one loader, `studyloop_redaction::pinned::load_yaml` (probe the version,
//! check the pin over the exact bytes, then parse strictly), like the redaction rules and
//! the rubric.

use serde::de::DeserializeOwned;
pub use studyloop_redaction::pinned::{LoadError as PinnedFileError, Loaded};
use studyloop_redaction::pinned::{load_yaml, utf8};

/// Reads `version`, verifies the pin, then parses `T` strictly.
pub(crate) fn load<T: DeserializeOwned>(
    file: &str,
    bytes: &[u8],
    registry: &str,
    registry_bytes: &[u8],
) -> Result<Loaded<T>, PinnedFileError> {
    load_yaml(utf8(file, bytes)?, file, bytes, registry, registry_bytes)
}
