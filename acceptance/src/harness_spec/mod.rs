//! Harness specs as one table: per harness, how it is installed, which
//! surfaces it has, how it is probed, the screen markers and keys the pane
//! driver needs, whether it resumes, and its stub-provider config writer.
//!
//! Adding a harness, or a real authenticated probe for one, is a table row,
//! never an `if` chain in a lane. Names, binaries and core/preview come from
//! `crate::selection::HarnessName`; this table adds what driving needs. The
//! markers and keys were measured on the pinned versions (harnesses/package.json)
//! against `studyloop-stub-provider`; see `shared/reference/harness-offline-*`.
//! The types are here, the rows in `table.rs`.

pub(crate) mod auth_probe;
pub(crate) mod credential_files;
pub mod credentials;
pub mod drift_rows;
mod install_hint;
pub mod login;
pub mod provision;
pub(crate) mod reply_source;
mod row;
pub(crate) mod stub_config;
mod table;

pub use install_hint::{install_hint, login_hint};
pub use table::{SPECS, spec};

pub use row::{AcpSurface, HarnessSpec, Install, McpSupport, ProbeKind, Resume, ScreenMarkers};
