//! The UAT sign-off tier: journeys as cells, a strict runner whose verdict can
//! never pass through skips, council grading of redacted evidence against the
//! pinned rubric, arbitration, and the pinned sign-off definition checked by the
//! `studyloop-uat` command, plus retention of the durable evidence bundles.
//!
//! Pinned files owned here: `signoff_v1.yaml` and `council_v1.yaml`, each with its
//! registry; the rubric and redaction rules are pinned in their own crates. This crate
//! reads bundles and run directories written by the acceptance crate and never drives
//! the product itself (the gated runner `tests/uat.rs` does).

mod atomic;
pub mod bundle;
pub mod council;
pub mod definition;
pub mod inputs;
pub mod pinned_yaml;
pub mod prune;
pub mod receipts;
pub mod secrets;
pub mod signoff;
pub mod strict;
pub mod summary;
