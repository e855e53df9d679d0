//! A release manager's ed25519 key pair: made by [`keygen`], read back by
//! [`read_private`] (PKCS#8 v2 DER, 0600) and [`read_public`] (64 lowercase hex
//! characters and a newline).

use std::io::Read as _;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use ring::rand::SystemRandom;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair as _, UnparsedPublicKey};

use super::SigningError;
use super::names::{PRIVATE_KEY_FILE, PUBLIC_KEY_FILE};

/// Far above any key file (a PKCS#8 ed25519 key is 83 bytes, the hex public key 65).
const MAX_KEY_BYTES: u64 = 4096;

/// A private key, read and checked. Its bytes never leave this type (no `Debug`).
pub struct PrivateKey {
    pair: Ed25519KeyPair,
}

impl PrivateKey {
    /// The matching public key.
    #[must_use]
    pub fn public(&self) -> PublicKey {
        let mut raw = [0u8; 32];
        raw.copy_from_slice(self.pair.public_key().as_ref());
        PublicKey { raw }
    }

    /// The ed25519 signature of `bytes`.
    #[must_use]
    pub fn sign(&self, bytes: &[u8]) -> Vec<u8> {
        self.pair.sign(bytes).as_ref().to_vec()
    }
}

/// A public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    raw: [u8; 32],
}

impl PublicKey {
    /// `sha256:<hex>` of the 32 raw key bytes: how a signature names its key.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        studyloop_acceptance::evidence::manifest_sha256(&self.raw)
    }

    /// Whether `signature` is this key's ed25519 signature of `bytes`.
    #[must_use]
    pub fn verifies(&self, bytes: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ED25519, &self.raw)
            .verify(bytes, signature)
            .is_ok()
    }

    /// The public key file's text.
    fn text(&self) -> String {
        let mut text: String = self.raw.iter().map(|b| format!("{b:02x}")).collect();
        text.push('\n');
        text
    }
}

/// The files [`keygen`] wrote.
#[derive(Debug, Clone)]
pub struct KeyPair {
    /// The private key (0600).
    pub private: PathBuf,
    /// The public key (0644).
    pub public: PathBuf,
    /// The public key's fingerprint.
    pub fingerprint: String,
}

/// Makes a new ed25519 key pair in `dir` (created 0700 when absent; an existing one
/// must be a directory only its owner can open): the private key [`PRIVATE_KEY_FILE`]
/// written 0600 and the public key [`PUBLIC_KEY_FILE`] 0644, each atomically and
/// never over an existing file.
///
/// # Errors
/// [`SigningError`] naming the directory or file and the fix.
pub fn keygen(dir: &Path) -> Result<KeyPair, SigningError> {
    private_dir(dir)?;
    let private = dir.join(PRIVATE_KEY_FILE);
    let public = dir.join(PUBLIC_KEY_FILE);
    // Both names are checked before either is written, so a refusal leaves no half pair.
    for path in [&private, &public] {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(SigningError::KeyExists { path: path.clone() });
        }
    }
    let rng = SystemRandom::new();
    let pkcs8 =
        Ed25519KeyPair::generate_pkcs8(&rng).map_err(|e| SigningError::Random(e.to_string()))?;
    let key = PrivateKey {
        pair: Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
            .map_err(|e| SigningError::Random(e.to_string()))?,
    };
    let write = |path: &Path, bytes: &[u8], mode| {
        crate::atomic::write_new(path, bytes, mode).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AlreadyExists {
                SigningError::KeyExists {
                    path: path.to_owned(),
                }
            } else {
                SigningError::Write {
                    path: path.to_owned(),
                    source,
                }
            }
        })
    };
    write(&private, pkcs8.as_ref(), 0o600)?;
    let pubkey = key.public();
    write(&public, pubkey.text().as_bytes(), 0o644)?;
    Ok(KeyPair {
        private,
        public,
        fingerprint: pubkey.fingerprint(),
    })
}

/// `dir` exists as a directory with no group or other permission bits, creating it
/// 0700 when absent.
fn private_dir(dir: &Path) -> Result<(), SigningError> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(SigningError::NotADirectory {
            path: dir.to_owned(),
            what: "a symlink",
        }),
        Ok(meta) if !meta.is_dir() => Err(SigningError::NotADirectory {
            path: dir.to_owned(),
            what: "a file",
        }),
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => Err(SigningError::OpenDirectory {
            path: dir.to_owned(),
            mode: meta.permissions().mode() & 0o7777,
        }),
        Ok(_) => Ok(()),
        Err(_) => {
            let fail = |source| SigningError::Write {
                path: dir.to_owned(),
                source,
            };
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(fail)?;
            // The create mode is filtered by the umask; set it exactly.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(fail)
        }
    }
}

/// Reads the private key at `path`: a regular file (never a link or a FIFO), 0600 or
/// stricter, holding a PKCS#8 ed25519 key.
///
/// # Errors
/// [`SigningError`] naming the file: unreadable, too open, a public key, or not a key.
pub fn read_private(path: &Path) -> Result<PrivateKey, SigningError> {
    let unreadable = |source| SigningError::KeyUnreadable {
        role: "private",
        path: path.to_owned(),
        source,
    };
    let file = studyloop_regular_file::open_regular(path).map_err(unreadable)?;
    let mode = file.metadata().map_err(unreadable)?.permissions().mode();
    let bytes = bounded(file, path).map_err(unreadable)?;
    if parse_public(&bytes).is_some() {
        return Err(SigningError::PublicNotPrivate {
            path: path.to_owned(),
        });
    }
    let pair = Ed25519KeyPair::from_pkcs8(&bytes).map_err(|e| SigningError::KeyGarbled {
        role: "private",
        path: path.to_owned(),
        detail: format!("not a PKCS#8 v2 ed25519 key ({e})"),
    })?;
    // Checked after the content, so a public key given here is named as such first.
    if mode & 0o077 != 0 {
        return Err(SigningError::KeyTooOpen {
            path: path.to_owned(),
            mode: mode & 0o7777,
        });
    }
    Ok(PrivateKey { pair })
}

/// Reads the public key at `path`: a regular file holding 64 hex characters (the file
/// [`keygen`] writes).
///
/// # Errors
/// [`SigningError`] naming the file: unreadable, a private key, or not a key.
pub fn read_public(path: &Path) -> Result<PublicKey, SigningError> {
    let bytes = studyloop_regular_file::read_regular(path, MAX_KEY_BYTES).map_err(|source| {
        SigningError::KeyUnreadable {
            role: "public",
            path: path.to_owned(),
            source,
        }
    })?;
    if let Some(key) = parse_public(&bytes) {
        return Ok(key);
    }
    if Ed25519KeyPair::from_pkcs8(&bytes).is_ok() {
        return Err(SigningError::PrivateNotPublic {
            path: path.to_owned(),
        });
    }
    Err(SigningError::KeyGarbled {
        role: "public",
        path: path.to_owned(),
        detail: format!(
            "expected one line of 64 hex characters, found {} byte(s) that are not",
            bytes.len()
        ),
    })
}

/// The public key in `bytes` (64 hex characters, surrounding whitespace allowed).
fn parse_public(bytes: &[u8]) -> Option<PublicKey> {
    let text = std::str::from_utf8(bytes).ok()?.trim();
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut raw = [0u8; 32];
    for (i, byte) in raw.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(PublicKey { raw })
}

/// The file's bytes, refusing more than [`MAX_KEY_BYTES`].
fn bounded(file: std::fs::File, path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(MAX_KEY_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_KEY_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} holds more than {MAX_KEY_BYTES} bytes, far more than a key",
                path.display()
            ),
        ));
    }
    Ok(bytes)
}
