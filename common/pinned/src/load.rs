//! Loading a pinned YAML document: the one order every pinned file follows (refuse a
//! repeated key, probe the declared `version`, verify the pin over the exact bytes, and
//! only then parse strictly), so an edited file is reported as tampered rather than as
//! whatever the edit broke.

use serde::de::DeserializeOwned;

use crate::pin::{PinError, PinnedFile};
use crate::yaml;

/// A pinned YAML document as loaded: the strictly parsed content, its declared version and
/// its pinned sha256 (hex).
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    /// The parsed content.
    pub doc: T,
    /// The declared version.
    pub version: u32,
    /// The pinned sha256 (hex) of the file's bytes.
    pub sha256: String,
}

/// Why a pinned YAML document was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not UTF-8, no integer `version`, bad YAML, or unknown or missing fields.
    #[error("`{file}` is malformed: {detail}")]
    Format {
        /// The file's name.
        file: String,
        /// What is wrong and how to fix it.
        detail: String,
    },
    /// Unregistered version or tampered bytes.
    #[error(transparent)]
    Pin(#[from] PinError),
}

/// The file's bytes as UTF-8 text, or a [`LoadError::Format`] naming the file.
///
/// # Errors
/// [`LoadError::Format`] when the bytes are not UTF-8.
pub fn utf8<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, LoadError> {
    std::str::from_utf8(bytes).map_err(|e| LoadError::Format {
        file: file.to_owned(),
        detail: format!("not UTF-8 ({e}); save the file as UTF-8"),
    })
}

/// Loads a pinned YAML document: reads `version` from `yaml_text`, verifies the pin of
/// `file` (named so in errors) over its whole `bytes` (which may hold more than
/// `yaml_text`, e.g. a rubric's markdown body after its frontmatter) against `registry`,
/// then parses `yaml_text` strictly into `T`.
///
/// # Errors
/// [`LoadError::Format`] for a missing integer `version` or a strict-parse failure;
/// [`LoadError::Pin`] as [`PinnedFile::verify`].
pub fn load_yaml<T: DeserializeOwned>(
    yaml_text: &str,
    file: &str,
    bytes: &[u8],
    registry: &str,
    registry_bytes: &[u8],
) -> Result<Loaded<T>, LoadError> {
    #[derive(serde::Deserialize)]
    struct VersionProbe {
        version: u32,
    }
    let format = |detail: String| LoadError::Format {
        file: file.to_owned(),
        detail,
    };
    // A repeated key is named as such, not as whatever the probe makes of it.
    yaml::check_keys(yaml_text).map_err(|e| format(e.detail))?;
    let probe: VersionProbe =
        yaml::parse(yaml_text).map_err(|e| format(format!("no integer `version`: {e}")))?;
    let sha256 = PinnedFile {
        file,
        version: probe.version,
        bytes,
        registry,
        registry_bytes,
    }
    .verify()?;
    let doc = yaml::parse(yaml_text).map_err(|e| format(e.detail))?;
    Ok(Loaded {
        doc,
        version: probe.version,
        sha256,
    })
}

/// Loads a pinned YAML file that is all YAML (the council roster, the sign-off
/// definition): [`utf8`], then [`load_yaml`] over the whole text.
///
/// # Errors
/// As [`utf8`] and [`load_yaml`].
pub fn load_yaml_file<T: DeserializeOwned>(
    file: &str,
    bytes: &[u8],
    registry: &str,
    registry_bytes: &[u8],
) -> Result<Loaded<T>, LoadError> {
    load_yaml(utf8(file, bytes)?, file, bytes, registry, registry_bytes)
}
