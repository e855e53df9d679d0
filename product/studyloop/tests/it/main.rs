//! Integration tests of the `studyloop` product binary and library.
//!
//! One integration-test binary per crate (a link per binary is the slow part of a
//! build on the 2-core machines): each former `tests/<name>.rs` is a module here,
//! so its tests are named `<name>::<test>`. Add new test files as modules below; the
//! binary is named for the crate in Cargo.toml (`[[test]]`, path `tests/it/main.rs`).

mod adapters;
mod commands;
mod common;
mod contain;
mod doctor_prereqs;
mod drill_bounds;
mod drill_paste;
mod embed;
mod envelope;
mod export;
mod gates;
mod integrity;
mod journal;
mod labs_web;
mod lifecycle;
mod repair;
mod resume;
mod spec;
mod special;
