//! The SQLite history store (`sessions.db`): WAL, foreign keys, forward-only
//! migrations tracked by `PRAGMA user_version`, all run in one
//! `BEGIN IMMEDIATE` transaction. Tables: `study_sessions`, `study_progress`,
//! `sessions` + `messages` with the FTS5 index `messages_fts`; `study_plans`
//! (a rebuildable index of the plan documents) and `study_plan_checkpoints`;
//! `message_vectors` (one embedding per message, for the hybrid search);
//! `turns` (which messages are conversation turns, and their turn ids);
//! `requests` (the request ledger: which entity each `request_id` created).
//!
//! rusqlite is used here and nowhere else; callers get plain Rust rows.

mod database;
mod error;
mod export_rows;
mod hybrid;
mod migrations;
mod plans;
mod requests;
mod search;
mod study;
mod turns;
mod vectors;

pub use database::Store;
pub use error::StoreError;
pub(crate) use error::q;
pub use export_rows::ProgressRow;
pub use hybrid::{FusedHit, RRF_K, SearchMode, SearchOutcome, rrf, search_db};
pub use migrations::SCHEMA_VERSION;
pub use plans::{CheckpointRecord, PlanIndexRow};
pub use requests::RequestRow;
pub use search::{HitKind, MAX_QUERY_WORDS, SearchHit, fts_query};
pub use study::{EndRecord, NewStudySession, Progress, StudySessionRow};
pub use turns::{MAX_TURN_TEXT_BYTES, NewTurn, RecordedTurn, bounded as bounded_turn_text};
