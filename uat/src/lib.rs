//! The UAT sign-off tier: journeys as cells, a strict runner whose verdict can
//! never pass through skips, council grading of redacted evidence against the
//! pinned rubric, arbitration, and the pinned sign-off definition checked by the
//! `studyloop-uat` command, plus retention of the durable evidence bundles.
//!
//! Pinned files owned here: `signoff_v3.yaml` (v1, v2 stay registered) and `council_v1.yaml`, each with its
//! registry; the rubric and redaction rules are pinned in their own crates. The journeys
//! (`journey`, run by the gated runner `tests/uat.rs`) drive the product only as a
//! subprocess, through the acceptance crate's scratch worlds and web ACP driver; the
//! rest of this crate reads the bundles and run directories they write.

mod atomic;
pub mod bundle;
pub mod bundle_summary;
pub mod certify;
pub mod cli;
pub mod council;
pub mod definition;
pub(crate) mod inputs;
pub mod journey;
pub mod merge;
pub mod output;
pub mod pinned_yaml;
pub mod prune;
pub mod receipts;
pub mod report;
pub(crate) mod secrets;
pub mod signing;
pub mod signoff;
pub mod trajectory;
