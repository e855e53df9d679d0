//! This crate's pinned YAML files (`council_v1.yaml`, `signoff_v3.yaml`) load through
//! the workspace's one loader, `studyloop_pinned::load_yaml_file` (probe the version,
//! check the pin over the exact bytes, then parse strictly), like the redaction rules and
//! the rubric. Re-exported under the names this crate's callers use.

pub(crate) use studyloop_pinned::load_yaml_file as load;
pub use studyloop_pinned::{LoadError as PinnedFileError, Loaded};
