//! A bundle's conversation exported for other tools (issue 28 item 8): an ATIF
//! trajectory (Harbor's Agent Trajectory Interchange Format, [`atif`]) and
//! OpenTelemetry GenAI-convention spans as an OTLP/JSON trace export
//! ([`otlp`]), both read from the bundle's transcript ([`conversation`]) with
//! every text passed through the pinned redaction rules first. What it is not:
//! a trace of the harness's own model calls (the bundle does not hold them),
//! so no token counts or model names are invented.

pub mod atif;
pub mod conversation;
pub mod otlp;

pub use conversation::{Conversation, ExportError, ExportTurn};
