//! Redaction: the pinned rules files (`rules_v4.yaml` current, `rules_v1.yaml` to
//! `rules_v3.yaml` kept loadable: the allow-listed summary fields and every detection pattern), the redacted-summary generator that is the only artefact
//! allowed to leave a private evidence bundle, and a [`Redactor`] that rewrites free text
//! with stable placeholders.
//!
//! The rules file is loaded through `studyloop-pinned` (the one pin check and YAML loader
//! every pinned data file shares), re-exported here as [`pinned`] and [`yaml`].
//!
//! It does not decide what goes into a summary (the UAT crate builds it) and it does not
//! write files.

mod error;
mod joined;
mod literal;
mod pattern;
mod prefilter;
mod redactor;
mod rules;
mod shield;
mod starts;
mod summary;
mod trigger;
mod violation;

pub use error::RedactionError;
pub use redactor::{Finding, MAX_PASSES, MIN_SECRET_LEN, Redactor};
pub use rules::{
    CURRENT_VERSION, DEFAULT_REGISTRY_FILE, DEFAULT_RULES_FILE, Pattern, REDACT_GROUP,
    RedactionRules,
};
pub use studyloop_pinned::PinError;
pub use studyloop_pinned::{self as pinned, yaml};
pub use summary::{Part, Violation, redact_summary};
