//! Validators a live lane runs beyond the mechanical ones: what reached the
//! model (the stub's request log) and whether a reply is proven. What the
//! product stored is read through `crate::door`; what was left behind
//! (processes after the sweep) is `crate::scratch::leftovers`.
//!
//! Each returns a [`CheckError`] naming the value seen and the one expected.

mod check_error;
mod stub_log;

pub use check_error::CheckError;
pub use stub_log::STUDY_PERSONA;
pub use stub_log::{prove_reply, stub_history};
