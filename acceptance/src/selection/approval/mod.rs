//! What may bill is approved per capability, by a person (issue 29; the
//! capability-host contract, seed 002). Every billed or credentialed thing a run can
//! do has a [`Capability`] id (`harness:codex`, `learner:openai/gpt-4o-mini`,
//! `judge:release/openai-gpt4o`) and declared [`Reason`]s from a frozen set. The
//! operator's standing approval is `STUDYLOOP_ACC_APPROVE`, parsed once into
//! [`Approvals`] (each entry exactly one capability: no wildcard, no prefix; every
//! malformed or unknown entry listed at once, before any trial). [`decide`] is the
//! ONE function the acceptance runner, the UAT runner, the council and `certify`
//! ask; an unapproved capability is a named skip ([`Unapproved`]'s `Display`) that
//! never launches or bills.
//!
//! The approval's only source is the runner's own captured environment: no scratch
//! child sees `STUDYLOOP_ACC_APPROVE` (real-auth drops every `STUDYLOOP_*`), and no
//! reply, tool call or file a model writes is ever read as one.

mod capability;
mod learner;
mod policy;

pub use capability::{Capability, REASONS, Reason};
pub use learner::{learner_capability, learner_unapproved};
pub use policy::{
    ACCEPTED_FORMS, ApprovalError, ApprovalErrors, ApprovalRecord, Approvals, Decision,
    MAX_VALUE_BYTES, Unapproved, decide,
};

#[cfg(test)]
mod tests;
