//! The acceptance tier: everything the opt-in live lanes stand on.
//!
//! It parses the tier's selection from the environment once, builds disposable
//! scratch worlds (HOME, XDG, state dir, private tmux socket dir) that a guarded
//! sweeper removes without ever touching anything outside them, provisions real
//! harness binaries against a local stub model provider, drives the real
//! `studyloop` product as a subprocess (never by linking it), and writes one
//! evidence-bundle schema shared with the UAT tier. The runner itself is
//! `tests/acceptance.rs`; this library holds the mechanisms it and their ungated
//! tests use.
//!
//! Its public face is what other crates name (uat, this crate's integration
//! tests, benches and bins): the runner's vocabulary (`selection` and its
//! `approval`, `case`, `runner`, `evidence`, `ledger`, `door`, `scratch`, `lane`,
//! `web_acp`, `harness_spec`, `bins`) and a few leaf helpers uat shares rather
//! than copies (`clock`, `hex`, `markup`, `private_fs`, `procfs`, `interrupt`).
//! An item no other crate names is `pub(crate)` (`.ci/pub-count` measures it).

pub use selection::approval;
pub mod bins;
pub mod caller_env;
pub mod case;
pub mod catalogue;
pub mod clock;
pub(crate) mod command;
pub mod door;
pub mod evidence;
pub mod fidelity;
pub(crate) mod gate;
#[cfg(test)]
mod guards;
pub mod harness_spec;
pub mod hex;
pub mod interrupt;
pub mod lane;
pub mod ledger;
pub mod markup;
pub mod pane;
pub mod private_fs;
pub mod probe_trials;
pub mod procfs;
pub mod runner;
pub mod scratch;
pub mod selection;
pub mod study_arc;
pub mod sweep;
pub mod tmux;
pub mod transcript;
pub mod turn_scripts;
pub mod validate;
pub mod web_acp;
