//! Signed release records (issue 33 §2): `studyloop-uat keygen` makes a release
//! manager's ed25519 key pair, `studyloop-uat sign RUN_DIR` signs the run's release
//! record (the sign-off summary recomputed from the run, plus the hash of every file of
//! each graded cell's arbitration) into `RUN_DIR/signoff.sig`, and `studyloop-uat
//! verify --signed RUN_DIR` recomputes the record from the run as it is now and checks
//! both the signature and that nothing signed changed. docs/verifiers.md ("Signed
//! release records") holds the threat model.

mod error;
mod key;
mod names;
mod record;
mod seal;

pub use error::SigningError;
pub use key::{KeyPair, PrivateKey, PublicKey, keygen, read_private, read_public};
pub use names::{PRIVATE_KEY_FILE, PUBLIC_KEY_FILE, SIGNATURE_FILE};
pub use record::{Record, canonical_bytes, release_record};
pub use seal::{Signed, Verified, sign, verify};
