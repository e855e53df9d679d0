//! Integration tests of the learner actors (the real-LiteLLM trial is the separate
//! `gateway_litellm` runner, `tests/gateway_litellm.rs`).
//!
//! One integration-test binary per crate (a link per binary is the slow part of a
//! build on the 2-core machines): each former `tests/<name>.rs` is a module here,
//! so its tests are named `<name>::<test>`. Add new test files as modules below; the
//! binary is named for the crate in Cargo.toml (`[[test]]`, path `tests/it/main.rs`).

mod cassette_backends;
mod cassette_fixture;
mod common;
mod harness_actor;
mod llm_backends;
mod scripted;
