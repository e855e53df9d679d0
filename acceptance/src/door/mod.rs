//! The doors from the framework to the product, in one place a reviewer can audit. The
//! framework drives `studyloop` as a black box: it calls its CLI ([`studyloop`], under
//! [`CLI_TIMEOUT`]; [`status`] typed), reads its session state through a typed view ([`SessionState`]),
//! reads its SQLite database through one read-only reader ([`ProductDb`]), asks its
//! doctor, and compares it with the texts it ships ([`shipped`]). The web server is the
//! other door (`crate::web_acp`, over HTTP/WS).
//!
//! No lane or journey names a product state key, file name or SQL statement: they are
//! here, so a product change breaks one file.

mod cli;
mod db;
mod db_record;
mod doctor;
pub mod shipped;
mod state;
mod status;

pub use cli::{CLI_TIMEOUT, json_result, studyloop};
pub use db::{DB_FILE, DbReadError, ProductDb};
pub use db_record::{SessionRecord, TableRows};
pub(crate) use doctor::doctor;
pub use state::{STATE_FILE, SessionState, StateField, TOPIC_FEED};
pub use status::{Status, status};
