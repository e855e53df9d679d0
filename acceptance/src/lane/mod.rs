//! The cli-tmux lanes, as cases on the engine (`crate::case`): the lane
//! itself (`cli_tmux`), the paste proof (`paste_trial`), the Ctrl-C proof
//! (`interrupt_trial`), the first steps every live lane shares (`setup`) and
//! the validators (`validate`, `checks`).

mod check_error;
pub(crate) mod checks;
pub mod cli_tmux;
mod gate;
pub mod interrupt_trial;
pub mod paste_trial;
pub mod product;
pub mod setup;
pub mod sigint;
pub mod validate;

pub(crate) use gate::{gated_trial, run_lane};
