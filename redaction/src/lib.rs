//! Redaction: the pinned rules files (`rules_v2.yaml` current, `rules_v1.yaml` kept
//! loadable: the allow-listed summary fields and every detection pattern), the redacted-summary generator that is the only artefact
//! allowed to leave a private evidence bundle, and a [`Redactor`] that rewrites free text
//! with stable placeholders.
//!
//! This crate is also the home of the two mechanisms every pinned data file shares:
//! [`pinned`] (version → sha256 registry checks) and [`yaml`] (the one YAML parser). The
//! rubric, council roster and sign-off definition use them rather than their own copies.
//!
//! It does not decide what goes into a summary (the UAT crate builds it) and it does not
//! write files.

mod error;
mod literal;
mod pattern;
pub mod pinned;
mod redactor;
mod rules;
mod summary;
mod violation;
pub mod yaml;

pub use error::RedactionError;
pub use pinned::PinError;
pub use redactor::{Finding, MAX_PASSES, MIN_SECRET_LEN, Redactor};
pub use rules::{
    CURRENT_VERSION, DEFAULT_REGISTRY_FILE, DEFAULT_RULES_FILE, Pattern, REDACT_GROUP,
    RedactionRules,
};
pub use summary::{Part, Violation, redact_summary};
