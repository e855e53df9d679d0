//! The live lanes, as cases on the engine (`crate::case`): the cli-tmux lane
//! (`cli_tmux`), the web ACP lane (`web_acp`, socket and browser variants),
//! the paste proof (`paste_trial`), the drill proof (`drill`), the Ctrl-C proof (`interrupt_trial`), the
//! not-logged-in proof (`logged_out`), the
//! first steps every live lane shares (`setup`) and the product checks
//! (`checks`; the validators themselves are `crate::validate`, which the case
//! engine uses too).

pub(crate) mod arc_tmux;
pub(crate) mod certify_drill;
mod certify_proxy;
pub(crate) mod checks;
pub(crate) mod cli_tmux;
pub mod drill;
mod entry;
pub(crate) mod interrupt_trial;
pub(crate) mod logged_out;
pub(crate) mod mcp_trial;
pub(crate) mod paste_trial;
pub mod setup;
pub mod sigint;
pub mod web_acp;

pub(crate) use entry::{gated_trial, run_lane, run_lane_as};
