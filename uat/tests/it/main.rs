//! Ungated integration tests of the UAT tier (the journeys are the separate `uat`
//! runner, `tests/uat.rs`).
//!
//! One integration-test binary per crate (a link per binary is the slow part of a
//! build on the 2-core machines): each former `tests/<name>.rs` is a module here,
//! so its tests are named `<name>::<test>`. Add new test files as modules below; the
//! binary is named for the crate in Cargo.toml (`[[test]]`, path `tests/it/main.rs`).

mod approvals;
mod certify;
mod cli;
mod common;
mod council;
mod council_cassette;
mod gate;
mod journey;
mod local_council;
mod pins;
mod prune;
mod receipts_commit;
mod receipts_coverage;
mod receipts_merge;
mod released_pins;
mod report;
mod report_browser;
mod report_compare;
mod report_grid;
mod report_links;
mod report_long_cast;
mod report_player;
mod report_wording;
mod signing;
mod signoff;
mod signoff_corpus;
mod signoff_output;
mod signoff_rule;
mod signoff_shards;
mod trajectory_export;
