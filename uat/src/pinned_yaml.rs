//! Loading this crate's pinned YAML files (`council_v1.yaml`, `signoff_v1.yaml`): read the
//! version, check the pin over the exact bytes, then parse strictly. Same order as the
//! redaction rules and the rubric, through the same shared checker and YAML module.

use serde::de::DeserializeOwned;
use studyloop_redaction::{PinError, pinned::PinnedFile, yaml};

/// Why a pinned UAT file was refused.
#[derive(Debug, thiserror::Error)]
pub enum PinnedFileError {
    /// Not UTF-8, bad YAML, unknown or missing fields, or content that breaks a rule.
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

/// A parsed pinned file with its version and digest.
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    /// The parsed content.
    pub doc: T,
    /// The declared version.
    pub version: u32,
    /// The pinned sha256 (hex).
    pub sha256: String,
}

#[derive(serde::Deserialize)]
struct VersionProbe {
    version: u32,
}

/// Reads `version`, verifies the pin, then parses `T` strictly.
pub(crate) fn load<T: DeserializeOwned>(
    file: &str,
    bytes: &[u8],
    registry: &str,
    registry_bytes: &[u8],
) -> Result<Loaded<T>, PinnedFileError> {
    let format = |detail: String| PinnedFileError::Format {
        file: file.to_owned(),
        detail,
    };
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format(format!("not UTF-8 ({e}); save it as UTF-8")))?;
    let probe: VersionProbe =
        yaml::parse(text).map_err(|e| format(format!("no integer `version`: {e}")))?;
    let sha256 = PinnedFile {
        file,
        version: probe.version,
        bytes,
        registry,
        registry_bytes,
    }
    .verify()?;
    let doc = yaml::parse(text).map_err(|e| format(e.detail))?;
    Ok(Loaded {
        doc,
        version: probe.version,
        sha256,
    })
}
