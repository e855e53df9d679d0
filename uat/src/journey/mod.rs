//! The UAT journeys: the cells the sign-off definition names, as trials of the UAT
//! runner (`tests/uat.rs`, on the acceptance runner glue with `Tier::Uat`, so both
//! `STUDYLOOP_ACC=1` and `STUDYLOOP_UAT=1` are needed).
//!
//! A journey is a case on the acceptance crate's engine (`studyloop_acceptance::case`:
//! slots, steps, converse, finish) plus a grading step:
//!
//! - `journey::smoke` ([`smoke`]): a mechanics check that grades nothing.
//! - `journey::study_session` ([`study`]): a real harness over web ACP, graded by the
//!   council right after its bundle is written ([`grading`]).
//! - `journey::drill` ([`drill`], ungraded): a drill's check result delivered to a real
//!   harness in a live session.
//!
//! Every bundle goes to the durable UAT root resolved from the real environment
//! ([`record::Destination`], written in the UAT layout by [`record::UatBundle`], the
//! engine's destination); the runner's results log records each cell's outcome and
//! bundle, which is what `studyloop-uat signoff <run dir>` reads. The product is driven
//! only as a subprocess, never linked.

mod catalogue;
pub mod db;
pub mod drill;
pub mod grading;
pub mod product;
pub mod record;
pub mod smoke;
pub mod study;
pub mod web;

pub use catalogue::{
    DRILL, NoStudyHarness, SMOKE, STUDY_SESSION, catalogue, catalogue_for, study_harness,
};
