//! The six harness adapters as data: binary, fresh and resume arguments,
//! where the persona goes. Per-harness side effects (persona files, trust
//! writes, the Kiro agent JSON) are small hooks in the submodules.
//!
//! Where the reference's table (anchor-product §2.2) disagrees with what the
//! pinned CLIs accept today, the real CLI wins; each such row says so.

mod error;
mod kiro;
mod placement;
mod table;
mod trust;

pub use error::AdapterError;
pub(crate) use error::io_err;
pub use kiro::{KIRO_AGENT_NAME, kiro_agents_dir};
pub use placement::{PrepareInput, preflight, prepare, teardown};
pub use table::{HARNESS_ORDER, Harness, Placement, detect};
pub(crate) use trust::claude_config_file;
