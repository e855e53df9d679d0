//! The file names of a key pair and of a run's signature: one place, read by the key
//! files' reader and writer, the signature, and the errors that name them.

/// The private key's file name inside `keygen --out DIR`.
pub const PRIVATE_KEY_FILE: &str = "release-signing.pk8";
/// The public key's file name beside it.
pub const PUBLIC_KEY_FILE: &str = "release-signing.pub";
/// The signature's file name inside the run directory.
pub const SIGNATURE_FILE: &str = "signoff.sig";
