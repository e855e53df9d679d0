//! Revisions and request ids (issue 30 item 2; seed 001, "CLI and JSON boundary"):
//! a change to an existing plan names the revision it was computed from
//! (`if_revision`), and a create names its request (`request_id`), so a stale edit is
//! refused with the current revision instead of written over a newer one, and a
//! retried create returns what the first one made and creates nothing.
//!
//! A plan's revision is a digest of its rendered document, so it needs no counter
//! kept beside the document (which stays the one truth): every write gives a new one
//! (a write always moves `updated`), and so does a hand edit the parser reads as a
//! change; a cosmetic hand edit that reads back as the same plan keeps it, rightly,
//! since nothing a door could act on changed.

use sha2::{Digest as _, Sha256};

use super::doc::Plan;
use super::error::PlanError;

/// The hex digits of a revision: 64 bits of the document's sha256, so two revisions of
/// one plan never collide in practice, and short enough to read and paste.
const REVISION_HEX: usize = 16;

/// The longest request id accepted.
pub const REQUEST_ID_MAX: usize = 128;

impl Plan {
    /// The plan's revision: `r` and the first 16 hex digits of the sha256 of its
    /// rendered document.
    #[must_use]
    pub fn revision(&self) -> String {
        let digest = crate::ids::hex(&Sha256::digest(self.render().as_bytes()));
        format!("r{}", &digest[..REVISION_HEX])
    }
}

/// What a change to an existing plan expects it to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfRevision<'a> {
    /// Apply only to this revision (what a script, the console and an agent send).
    Given(&'a str),
    /// Apply to whatever is current: only the interactive CLI (`studyloop plan status
    /// …` typed by the person who just read the plan) and tests use this.
    Unchecked,
}

impl IfRevision<'_> {
    /// Refuse `plan` unless it is at the expected revision.
    ///
    /// # Errors
    /// [`PlanError::StaleRevision`] naming the current revision.
    pub(super) fn check(self, plan: &Plan) -> Result<(), PlanError> {
        match self {
            Self::Unchecked => Ok(()),
            Self::Given(given) => {
                let current = plan.revision();
                if given == current {
                    Ok(())
                } else {
                    Err(PlanError::StaleRevision {
                        id: plan.id.to_string(),
                        given: super::doc::clip(given, 40),
                        current,
                    })
                }
            }
        }
    }
}

/// A door's required `if_revision`, or the refusal naming what to send.
///
/// # Errors
/// [`PlanError::Invalid`] when it is missing.
pub fn required_revision<'a>(
    given: Option<&'a str>,
    id: &str,
) -> Result<IfRevision<'a>, PlanError> {
    given.map(IfRevision::Given).ok_or_else(|| {
        PlanError::Invalid(format!(
            "`if_revision` is required to change plan `{}`: read the plan first and send its `revision` back, so a change made meanwhile is never overwritten",
            super::doc::clip(id, 64)
        ))
    })
}

/// The `if_revision` of an evaluation: only a recorded one changes the plan, so only
/// it must name the revision (every door asks through this, so they cannot differ).
///
/// # Errors
/// As [`required_revision`], when `record` is set.
pub fn evaluation_revision<'a>(
    record: bool,
    given: Option<&'a str>,
    id: &str,
) -> Result<IfRevision<'a>, PlanError> {
    if record {
        required_revision(given, id)
    } else {
        Ok(IfRevision::Unchecked)
    }
}

/// Check a request id: an opaque lowercase identifier (seed 001), 1 to
/// [`REQUEST_ID_MAX`] characters of `a-z`, `0-9`, `.`, `_`, `:` and `-`, starting with
/// a letter or digit (a UUID qualifies).
///
/// # Errors
/// [`PlanError::Invalid`] naming the value and the accepted form.
pub fn parse_request_id(raw: &str) -> Result<&str, PlanError> {
    let ok = !raw.is_empty()
        && raw.len() <= REQUEST_ID_MAX
        && raw
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && raw.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b':' | b'-')
        });
    if ok {
        Ok(raw)
    } else {
        Err(PlanError::Invalid(format!(
            "`request_id` `{}` is not accepted; use 1 to {REQUEST_ID_MAX} of a-z, 0-9, `.`, `_`, `:`, `-`, starting with a letter or digit (a new UUID per create, reused only to retry that same create)",
            super::doc::clip(raw, 40)
        )))
    }
}

/// A door's required `request_id`, checked.
///
/// # Errors
/// [`PlanError::Invalid`] when it is missing or malformed.
pub fn required_request_id(given: Option<&str>) -> Result<&str, PlanError> {
    let raw = given.ok_or_else(|| {
        PlanError::Invalid(
            "`request_id` is required to create a plan: a new id (e.g. a UUID) per create, sent again only to retry that same create, so a retry never creates a second plan".into(),
        )
    })?;
    parse_request_id(raw)
}

/// The digest a request id is bound to: the canonical JSON of what was asked (serde_json
/// orders object keys), so the same id sent with another body is told apart.
#[must_use]
pub(super) fn body_digest(body: &serde_json::Value) -> String {
    crate::ids::hex(&Sha256::digest(body.to_string().as_bytes()))
}
