//! Integration tests of the redaction rules and engine.
//!
//! One integration-test binary per crate (a link per binary is the slow part of a
//! build on the 2-core machines): each former `tests/<name>.rs` is a module here,
//! so its tests are named `<name>::<test>`. Add new test files as modules below; the
//! binary is named for the crate in Cargo.toml (`[[test]]`, path `tests/it/main.rs`).

mod canary;
mod common;
mod corpus;
mod engine_identity;
mod issue34;
mod loader;
mod patterns;
mod regressions;
mod summary_paths;
