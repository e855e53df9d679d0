//! The UAT journeys: the cells the sign-off definition names, as trials of the UAT
//! runner (`tests/uat.rs`, on the acceptance runner glue with `Tier::Uat`, so both
//! `STUDYLOOP_ACC=1` and `STUDYLOOP_UAT=1` are needed).
//!
//! A journey is a case on the acceptance crate's engine (`studyloop_acceptance::case`:
//! slots, steps, converse, finish) plus a grading step:
//!
//! - `journey::smoke` ([`smoke`]): a mechanics check that grades nothing.
//! - `journey::study_session` ([`study`]): a real harness over web ACP, graded by the
//!   council right after its bundle is written ([`grading`]); sign-off v1 and v2.
//! - `journey::architect_launch` (`architect`), `journey::mcp_lifecycle` (`mcp`) and
//!   `journey::now_with_active_plan` (`now`): the study-plan doors (Chromium through
//!   `browser`, stdio MCP, the now engine); ungraded.
//! - `journey::study_arc` ([`arc`], checks in [`arc_checks`]): the full arc through
//!   the browser (start, conversation, the mentor's MCP logging, wind-down, end,
//!   resume the next day, review, search), graded the same way.
//! - `journey::faults` (`faults`): provider faults mid-conversation; ungraded.
//! - `journey::drill` ([`drill`], ungraded): a drill's check result delivered to a real
//!   harness in a live session.
//!
//! Each cell's learner budget comes from the shipped sign-off definition when it writes
//! one (v3 does for every cell) and wins over `STUDYLOOP_ACC_MAX_*`; a cell the definition
//! names but no journey runs is a failing trial naming it.
//!
//! Every bundle goes to the durable UAT root resolved from the real environment
//! ([`record::Destination`], written in the UAT layout by [`record::UatBundle`], the
//! engine's destination); the runner's results log records each cell's outcome and
//! bundle, which is what `studyloop-uat signoff <run dir>` reads. The product is driven
//! only as a subprocess, never linked.

mod approvals;
pub mod arc;
pub mod arc_checks;
mod architect;
mod browser;
mod catalogue;
#[cfg(test)]
mod catalogue_tests;
pub mod drill;
mod faults;
pub mod grading;
mod mcp;
mod now;
pub mod product;
pub mod record;
pub mod smoke;
pub mod study;
pub mod web;

pub use catalogue::{
    ARCHITECT_LAUNCH, DRILL, FAULTS, MCP_LIFECYCLE, NOW_WITH_ACTIVE_PLAN, NoStudyHarness, SMOKE,
    STUDY_ARC, STUDY_SESSION, catalogue, catalogue_for, study_harness,
};
