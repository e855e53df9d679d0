//! The sign-off rubric: `rubric_v1.md` (YAML frontmatter with criteria, scales,
//! anchors, cited evidence and `reject_if`), pinned by sha256 in `registry.json`, and the
//! loader that refuses an unregistered or tampered rubric by name.
//!
//! It also evaluates `reject_if` against [`Facts`] the arbitrator supplies, so the veto
//! rules and their meaning live beside each other. It does not talk to models, read
//! bundles or decide a sign-off: that is the UAT crate.

mod error;
mod glob;
mod reject;
mod rubric;

pub use error::RubricError;
pub use glob::matches as evidence_matches;
pub use reject::{BUNDLE_OUTCOMES, Facts, RejectRule, Rejection, Rule};
pub use rubric::{Criterion, DEFAULT_REGISTRY_FILE, DEFAULT_RUBRIC_FILE, Rubric};
