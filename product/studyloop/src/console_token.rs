//! Where the console token of `studyloop web` (`web::token`) lives and how a client
//! sends it: a leaf both the console and the CLI that talks to it (a drill delivering
//! a `practice_check`, `modules::deliver`) import, so neither imports the other.

use std::path::{Path, PathBuf};

/// The request header that carries the token (non-browser clients).
pub const TOKEN_HEADER: &str = "x-studyloop-token";
/// `<session dir>/web/<port>.token`: where the token of the server on `port` lives.
#[must_use]
pub fn token_file(session_dir: &Path, port: u16) -> PathBuf {
    token_dir(session_dir).join(format!("{port}.token"))
}

/// The directory of the token files (hidden from drill phases).
#[must_use]
pub fn token_dir(session_dir: &Path) -> PathBuf {
    session_dir.join("web")
}

/// The token of the server on `port`, as its file says (`None`: no file or
/// unreadable; the caller's request is then refused with a clear error).
#[must_use]
pub fn read_token(session_dir: &Path, port: u16) -> Option<String> {
    let text = std::fs::read_to_string(token_file(session_dir, port)).ok()?;
    let text = text.trim();
    (!text.is_empty() && text.len() <= 256).then(|| text.to_owned())
}
