//! [`sign`] writes `RUN_DIR/signoff.sig`; [`verify`] checks it against the run as it
//! is now.
//!
//! The file holds the record that was signed (so a failed check can name what changed
//! since), the key's fingerprint (so "another key" is named as such) and the base64
//! ed25519 signature of the record's [`canonical_bytes`]. Nothing in the file is trusted:
//! the signature is checked with the public key the caller gives, and the record is
//! recomputed from the run and compared byte for byte.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use studyloop_redaction::Redactor;

use super::names::SIGNATURE_FILE;
use super::record::{canonical_bytes, release_record};
use super::{PrivateKey, PublicKey, SigningError};
use crate::signoff::Pins;

/// The signature file's format version.
const SIGNATURE_SCHEMA: u32 = 1;
/// The one algorithm.
const ALGORITHM: &str = "ed25519";
/// Far above any signature file (the record is a few kilobytes per cell).
const MAX_SIGNATURE_BYTES: u64 = 16 << 20;
/// At most this many changed fields are named.
const MAX_CHANGES: usize = 12;

/// `signoff.sig`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureFile {
    schema_version: u32,
    algorithm: String,
    key_fingerprint: String,
    signature: String,
    record: Value,
}

/// What [`sign`] did.
#[derive(Debug)]
pub enum Signed {
    /// The record was signed into `path`.
    Written {
        /// `RUN_DIR/signoff.sig`.
        path: PathBuf,
        /// The signing key's fingerprint.
        fingerprint: String,
        /// Cells in the record.
        cells: usize,
    },
    /// The run's sign-off is FAIL: a failed sign-off is not a release record.
    Refused {
        /// The sign-off's reasons (redacted).
        reasons: Vec<String>,
    },
}

/// What [`verify`] found.
#[derive(Debug)]
pub enum Verified {
    /// The signature is the given key's, and nothing signed has changed.
    Valid {
        /// The key's fingerprint.
        fingerprint: String,
    },
    /// Not a valid signed release, with every reason.
    Failed {
        /// Why, each naming what failed.
        reasons: Vec<String>,
    },
}

/// Signs the release record of `run_dir` with `key` into `run_dir/signoff.sig`
/// (atomically; a PASS sign-off only).
///
/// # Errors
/// [`SigningError`] when the sign-off reaches no verdict or the file cannot be written.
pub fn sign(
    pins: &Pins,
    run_dir: &Path,
    key: &PrivateKey,
    redactor: &Redactor,
) -> Result<Signed, SigningError> {
    let record = release_record(pins, run_dir, redactor)?;
    if !record.verdict.passed() {
        return Ok(Signed::Refused {
            reasons: record.verdict.reasons,
        });
    }
    let bytes = canonical_bytes(&record.value);
    let fingerprint = key.public().fingerprint();
    let cells = record.value["summary"]["journeys"]
        .as_object()
        .map_or(0, serde_json::Map::len);
    let file = SignatureFile {
        schema_version: SIGNATURE_SCHEMA,
        algorithm: ALGORITHM.to_owned(),
        key_fingerprint: fingerprint.clone(),
        signature: base64::engine::general_purpose::STANDARD.encode(key.sign(&bytes)),
        record: record.value,
    };
    let value =
        studyloop_acceptance::evidence::sorted(serde_json::to_value(&file).unwrap_or(Value::Null));
    let text = format!("{value:#}\n");
    let path = run_dir.join(SIGNATURE_FILE);
    // Beside the run's own records, private like them.
    crate::atomic::write(&path, text.as_bytes(), 0o600).map_err(|source| SigningError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(Signed::Written {
        path,
        fingerprint,
        cells,
    })
}

/// Checks `run_dir/signoff.sig` with `key`: present, made by `key` over its record,
/// and its record equal to the release record recomputed from the run now.
///
/// # Errors
/// [`SigningError`] when the signature file cannot be read as a regular file or the
/// sign-off reaches no verdict. Everything else is a [`Verified::Failed`].
pub fn verify(
    pins: &Pins,
    run_dir: &Path,
    key: &PublicKey,
    redactor: &Redactor,
) -> Result<Verified, SigningError> {
    let path = run_dir.join(SIGNATURE_FILE);
    let fail = |reason: String| {
        Ok(Verified::Failed {
            reasons: vec![reason],
        })
    };
    let bytes = match studyloop_regular_file::read_regular(&path, MAX_SIGNATURE_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return fail(format!(
                "not signed: `{}` does not exist; the release manager signs the run with `studyloop-uat sign {} --key PRIVATE_KEY`",
                path.display(),
                run_dir.display()
            ));
        }
        Err(source) => return Err(SigningError::SignatureUnreadable { path, source }),
    };
    let file: SignatureFile = match studyloop_acceptance::evidence::unique_json::from_slice(&bytes)
    {
        Ok(file) => file,
        Err(e) => {
            return fail(format!(
                "`{}` is not a signature `studyloop-uat sign` writes ({e}); it was edited or written by another tool: sign the run again",
                path.display()
            ));
        }
    };
    if file.schema_version != SIGNATURE_SCHEMA || file.algorithm != ALGORITHM {
        return fail(format!(
            "`{}` is schema {} algorithm `{}`; only schema {SIGNATURE_SCHEMA} `{ALGORITHM}` is verified: sign the run again",
            path.display(),
            file.schema_version,
            file.algorithm
        ));
    }
    let fingerprint = key.fingerprint();
    if file.key_fingerprint != fingerprint {
        return fail(format!(
            "signed by another key: `{}` names key {}, the public key given is {fingerprint}; verify with the signer's public key, or have the run signed by this key's holder",
            path.display(),
            file.key_fingerprint
        ));
    }
    let signature = base64::engine::general_purpose::STANDARD
        .decode(file.signature.as_bytes())
        .unwrap_or_default();
    if !key.verifies(&canonical_bytes(&file.record), &signature) {
        return fail(format!(
            "the signature in `{}` does not verify with key {fingerprint}: the signed record or the signature was edited after signing; sign the run again",
            path.display()
        ));
    }
    let now = release_record(pins, run_dir, redactor)?;
    if canonical_bytes(&now.value) == canonical_bytes(&file.record) {
        return Ok(Verified::Valid { fingerprint });
    }
    let mut changes = Vec::new();
    differences("", &file.record, &now.value, &mut changes);
    let total = changes.len();
    let mut reasons: Vec<String> = changes
        .into_iter()
        .take(MAX_CHANGES)
        .map(|c| format!("changed since signing: {c}"))
        .collect();
    if total > MAX_CHANGES {
        reasons.push(format!(
            "… and {} more changed field(s)",
            total - MAX_CHANGES
        ));
    }
    if !now.verdict.passed() {
        reasons.extend(
            now.verdict
                .reasons
                .iter()
                .map(|r| format!("the run's sign-off now FAILs: {r}")),
        );
    }
    Ok(Verified::Failed { reasons })
}

/// Every leaf where `signed` and `now` differ, as `path: signed X, now Y`.
fn differences(path: &str, signed: &Value, now: &Value, out: &mut Vec<String>) {
    match (signed, now) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(&sub, x, y, out),
                    (Some(x), None) => out.push(format!("{sub}: signed {}, now absent", short(x))),
                    (None, Some(y)) => {
                        out.push(format!("{sub}: absent when signed, now {}", short(y)))
                    }
                    (None, None) => {}
                }
            }
        }
        (a, b) if a != b => out.push(format!("{path}: signed {}, now {}", short(a), short(b))),
        _ => {}
    }
}

/// A value as a reason quotes it: compact JSON, at most 160 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        let cut: String = text.chars().take(160).collect();
        format!("{cut}…")
    } else {
        text
    }
}
