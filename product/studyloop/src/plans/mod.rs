//! Study plans: Markdown documents with frontmatter under
//! `<state_dir>/study-plans/<plan_id>.md` (the source of truth), a SQLite
//! index rebuilt from them, and one application layer ([`PlanApp`]) that the
//! CLI (`studyloop plan …`), the web API (`/api/plans…`) and `studyloop-mcp`
//! all call, so the three doors cannot disagree.
//!
//! Modules: `id` (the strict plan id), `doc` (the document model and its
//! rendering), `render` (the one escaping rendering step and the write gate), `parse` (document text → model, errors by file and line),
//! `files` (the plans dir, the safe document read), `error` (refusals with their MCP prefix and HTTP status), `app` (the
//! operations, locked read-modify-write), `record` (evaluate and learning records), `views` (the JSON shapes), `revision` (revisions and request ids),
//! `now` (the "what next" engine), `cli` (the `plan` and `now` commands), `cli_json` (their `--json` script input).

mod app;
pub mod cli;
mod cli_json;
mod doc;
mod error;
mod files;
mod id;
mod input;
pub mod now;
mod parse;
mod record;
mod render;
mod revision;
mod tool_names;
mod views;

pub use app::{CreateRequest, PlanApp, PlanPatch};
pub use doc::{Inner, Kept, Milestone, Owned, Plan, PlanStatus};
pub use error::PlanError;
pub use revision::{
    IfRevision, REQUEST_ID_MAX, evaluation_revision, parse_request_id, required_request_id,
    required_revision,
};

pub use id::PlanId;
pub use tool_names::PLAN_TOOL_NAMES;
pub use views::{Readiness, readiness, summary};

#[cfg(test)]
mod app_tests;
#[cfg(test)]
mod render_tests;
