//! Ungated integration tests of the acceptance framework (the live trials are the
//! separate `acceptance` runner, `tests/acceptance.rs`).
//!
//! One integration-test binary per crate (a link per binary is the slow part of a
//! build on the 2-core machines): each former `tests/<name>.rs` is a module here,
//! so its tests are named `<name>::<test>`. Add new test files as modules below; the
//! binary is named for the crate in Cargo.toml (`[[test]]`, path `tests/it/main.rs`).

mod acp_auth;
mod acp_console;
mod acp_kit;
mod browser_arc;
mod docs_links;
mod drift_install;
mod env_chapter;
mod env_literals;
mod gate;
mod interrupt;
mod junit_schema;
mod login_preflight;
mod markdown;
mod pane_driver;
mod reaper;
mod recipes;
mod reexec;
mod repeats;
mod rerun;
mod scale_counts;
mod scratch;
mod scratch_sockets;
mod shards;
mod sweep;
mod sweep_sentinel;
mod verify_recorded;
mod web_acp_browser;
mod web_acp_driver;
mod workflow;
