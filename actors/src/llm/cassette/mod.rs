//! Record and replay of model traffic (`STUDYLOOP_ACC_CASSETTE=record|replay`), at the
//! one place every model request passes: [`ChatClient`](super::ChatClient). The
//! gateway and direct learners and the council's seats all get it by being handed a
//! [`Tap`]; none of them has its own copy.
//!
//! Record: every answered request is appended to a JSON-lines cassette (0600, 0700
//! directory, flock-serialised appends), keyed by a salted sha256 of its canonical form
//! before redaction (the salt is the file's first line), stored redacted and sealed by
//! a digest; keys and headers never enter it, and every string in
//! it has passed the pinned redaction rules. Replay: requests are answered from the
//! cassette by (cell, request hash, call), usage counts included, and a miss is a
//! [`CassetteError::Miss`] naming the hash, the cassette and the fix: nothing is ever
//! sent. A cell that replayed says so in its manifest (`cassette`), with the
//! cassette's sha256, and the sign-off refuses it.

#[cfg(test)]
mod attack_tests;
mod entry;
mod error;
mod file;
mod handle;
#[cfg(test)]
mod key_tests;
mod setting;
#[cfg(test)]
mod tests;

pub use error::CassetteError;
pub use file::MAX_CASSETTE_BYTES;
pub use handle::{CASSETTE_FILE_NAME, Cassette, CassetteEvidence, Tap};
pub use setting::{
    CassetteMode, CassetteSetting, STUDYLOOP_ACC_CASSETTE, STUDYLOOP_ACC_CASSETTE_FILE,
};
