//! [`SigningError`]: why a key could not be made or read, or a run could not be signed
//! or checked at all. A signature that does not verify is a verdict
//! ([`super::Verified::Failed`]), not an error.

use std::path::PathBuf;

use crate::signoff::SignoffError;

/// Why keygen, sign or verify --signed reached no answer (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// The key directory exists and others may read it.
    #[error("key directory `{}` has mode {mode:o}, readable by others; a private key goes into a directory only its owner can open: `chmod 700 {}` or pick a new --out", path.display(), path.display())]
    OpenDirectory {
        /// The directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The key directory is not a directory (a file, a symlink).
    #[error("key directory `{}` is {what}, not a directory; pass a new or existing private directory to --out", path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// A key file already exists: keygen never overwrites a key.
    #[error("`{}` already exists; keygen never overwrites a key (a release manager's old signatures would no longer verify): pick another --out, or move the old pair away yourself", path.display())]
    KeyExists {
        /// The existing file.
        path: PathBuf,
    },
    /// A key or signature file could not be created or written.
    #[error("cannot write `{}`: {source}; check the directory is writable", path.display())]
    Write {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A key file could not be read (missing, a symlink, a FIFO, too large).
    #[error("cannot read the {role} key `{}`: {source}; pass the {file} file `studyloop-uat keygen` wrote (a regular file, not a link)", path.display(), file = key_file(role))]
    KeyUnreadable {
        /// `private` or `public`.
        role: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error (it names a symlink, a FIFO or an oversize file).
        source: std::io::Error,
    },
    /// The private key file is readable by others.
    #[error("the private key `{}` has mode {mode:o}, readable by others; `chmod 600 {}` (and consider the key exposed: make a new pair if others could read it)", path.display(), path.display())]
    KeyTooOpen {
        /// The path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A public key was given where the private key is expected.
    #[error("`{}` is a public key, but --key needs the private key (`{}` beside it, written by `studyloop-uat keygen`)", path.display(), super::names::PRIVATE_KEY_FILE)]
    PublicNotPrivate {
        /// The path.
        path: PathBuf,
    },
    /// A private key was given where the public key is expected.
    #[error("`{}` is a private key, but --pubkey needs the public key (`{}` beside it); never hand the private key to a verifier", path.display(), super::names::PUBLIC_KEY_FILE)]
    PrivateNotPublic {
        /// The path.
        path: PathBuf,
    },
    /// The key file holds something that is not a key of this kind.
    #[error("`{}` is not an ed25519 {role} key: {detail}; pass the {file} file `studyloop-uat keygen` wrote", path.display(), file = key_file(role))]
    KeyGarbled {
        /// `private` or `public`.
        role: &'static str,
        /// The path.
        path: PathBuf,
        /// What was wrong (never the bytes).
        detail: String,
    },
    /// The signature file could not be read (a symlink, a FIFO, too large).
    #[error("cannot read the signature `{}`: {source}; remove it and sign the run again with `studyloop-uat sign`", path.display())]
    SignatureUnreadable {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The run could not be signed off at all.
    #[error(transparent)]
    Signoff(#[from] SignoffError),
    /// The system random source failed.
    #[error("the system random source failed; no key was written: {0}")]
    Random(String),
}

fn key_file(role: &str) -> &'static str {
    if role == "private" {
        super::names::PRIVATE_KEY_FILE
    } else {
        super::names::PUBLIC_KEY_FILE
    }
}
