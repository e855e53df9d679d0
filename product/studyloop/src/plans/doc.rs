//! The plan document model and its rendering. A plan renders to:
//!
//! ```text
//! ---
//! id: sql-windows
//! title: "SQL window functions"
//! status: active
//! ...
//! ---
//!
//! # SQL window functions
//!
//! ## Mission
//! Why: ...
//! Success criteria:
//! - ...
//!
//! ## Milestones
//! - [x] **OVER clause** — concepts: PARTITION BY, ORDER BY
//!
//! ## Checkpoints
//! | Date | Phase | Study | Milestones | Note |
//!
//! ## Learning records
//! - **Title** (active): body
//!
//! ## Notes
//! ```
//!
//! Rendering is `render`'s one step, which escapes every value, so no user
//! text (input or a hand-edited frontmatter) can forge a heading, a
//! milestone or a table row.

use serde::Serialize;

use super::{PlanError, PlanId};

/// A plan's lifecycle status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanStatus {
    /// Being written; not yet gated.
    Draft,
    /// Being followed (needs readiness).
    Active,
    /// On hold.
    Paused,
    /// Finished.
    Complete,
    /// Given up.
    Abandoned,
}

impl PlanStatus {
    /// Every status, in display order.
    pub const ALL: [Self; 5] = [
        Self::Draft,
        Self::Active,
        Self::Paused,
        Self::Complete,
        Self::Abandoned,
    ];
    /// The accepted names, for messages.
    pub const ACCEPTED: &'static str = "draft, active, paused, complete, abandoned";

    /// Parse a status name.
    ///
    /// # Errors
    /// [`PlanError::Invalid`] naming the value and the accepted set.
    pub fn parse(raw: &str) -> Result<Self, PlanError> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == raw)
            .ok_or_else(|| {
                PlanError::Invalid(format!(
                    "status `{}` is not accepted; use one of: {}",
                    clip(raw, 40),
                    Self::ACCEPTED
                ))
            })
    }

    /// The name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Active => "active",
            Self::Paused => "paused",
            Self::Complete => "complete",
            Self::Abandoned => "abandoned",
        }
    }
}

/// One milestone (`- [x] **Title** — concepts: a, b`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Milestone {
    /// Its title.
    pub title: String,
    /// Whether it is done.
    pub done: bool,
    /// Concepts it covers.
    pub concepts: Vec<String>,
}

/// One row of the Checkpoints table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointRow {
    /// When (RFC 3339).
    pub date: String,
    /// start, mid or end.
    pub phase: String,
    /// The study session it belongs to ("" when none).
    pub study_id: String,
    /// Milestones done at the time.
    pub milestone_done: usize,
    /// Milestones in total at the time.
    pub milestone_total: usize,
    /// A one-line summary.
    pub note: String,
}

/// One learning record (`- **Title** (status): body`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LearningRecord {
    /// Its title (the idempotency key).
    pub title: String,
    /// Its status word.
    pub status: String,
    /// The body.
    pub body: String,
}

/// A whole plan document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The id (the file stem).
    #[serde(rename = "plan_id")]
    pub id: PlanId,
    /// Title.
    pub title: String,
    /// Status.
    pub status: PlanStatus,
    /// Created (RFC 3339).
    pub created: String,
    /// Last saved (RFC 3339).
    pub updated: String,
    /// Target date (`YYYY-MM-DD`).
    pub target_date: Option<String>,
    /// Lowest energy (1..10) at which the plan should be worked on.
    pub energy_floor: Option<u8>,
    /// Days between reviews (1..90).
    pub review_cadence_days: Option<u16>,
    /// Topics.
    pub topics: Vec<String>,
    /// Mission: why.
    pub why: String,
    /// Mission: success criteria.
    pub success: Vec<String>,
    /// Mission: constraints.
    pub constraints: String,
    /// Mission: out of scope.
    pub out_of_scope: String,
    /// Resources.
    pub resources: Vec<String>,
    /// Milestones, in order.
    pub milestones: Vec<Milestone>,
    /// Checkpoint log.
    pub checkpoints: Vec<CheckpointRow>,
    /// Learning records.
    pub records: Vec<LearningRecord>,
    /// Free notes (lines; a hand-edited multi-line note keeps its lines).
    pub notes: String,
    /// What a hand edit added that the model does not own (see [`Kept`]).
    #[serde(skip)]
    pub kept: Kept,
}

/// The parts of a hand-edited document the parser does not own, kept so the
/// next write puts them back (the document is the truth): frontmatter lines
/// of unknown keys and `#` comments, in order, and whole `## ` sections the
/// model does not know (heading and body), in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// Frontmatter lines the parser skipped, verbatim.
    pub front: Vec<String>,
    /// Unknown sections, each its lines verbatim (the `## ` heading first).
    pub sections: Vec<Vec<String>>,
    /// Lines a hand edit put inside a section the model owns: HTML comments
    /// (`<!-- … -->`, every line of a multi-line one) and headings other
    /// than `## ` (`### Week 1`), each where it stood.
    pub inner: Vec<Inner>,
}

/// A section the renderer writes (and the parser reads strictly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {
    /// The `# Title` line before the first `## ` section.
    Preamble,
    /// `## Mission`.
    Mission,
    /// `## Milestones`.
    Milestones,
    /// `## Checkpoints`.
    Checkpoints,
    /// `## Learning records`.
    Records,
}

/// One hand-written line inside an owned section, anchored by the number of
/// the section's own (non-blank) lines before it: a comment above the third
/// milestone stays above the third milestone, one after the last stays at
/// the section's end (past every line the section has when fewer remain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inner {
    /// The section it stands in.
    pub section: Owned,
    /// How many of the section's own lines come before it.
    pub before: usize,
    /// The line, verbatim.
    pub line: String,
}

/// Input bounds (a plan is a page, not a dump).
pub mod limits {
    /// Title characters.
    pub const TITLE: usize = 200;
    /// Any other one-line field.
    pub const TEXT: usize = 2000;
    /// Items in a list (milestones, success criteria, topics, …).
    pub const ITEMS: usize = 100;
    /// Learning records and checkpoints kept in the document.
    pub const LOG: usize = 500;
    /// A whole document, in bytes.
    pub const DOC_BYTES: usize = 1024 * 1024;
}

/// Cut `s` to `n` characters (for quoting bad values in messages).
pub(crate) fn clip(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// One line of user text: controls dropped, whitespace runs folded, trimmed.
/// Over `max` characters is refused (no silent truncation).
pub(crate) fn one_line(field: &str, raw: &str, max: usize) -> Result<String, PlanError> {
    let mut out = String::with_capacity(raw.len());
    let mut space = false;
    for c in raw.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
        } else if !c.is_control() {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    let n = out.chars().count();
    if n > max {
        return Err(PlanError::Invalid(format!(
            "`{field}` is {n} characters; at most {max} are accepted"
        )));
    }
    Ok(out)
}

/// A title-like field: one line, not empty, no `**` and no trailing `*`
/// (`**` delimits titles: `**a***` would end the title early).
pub(crate) fn title_text(field: &str, raw: &str, max: usize) -> Result<String, PlanError> {
    let mut t = one_line(field, raw, max)?;
    while t.contains("**") {
        t = t.replace("**", "*");
    }
    let t = t.trim_end_matches('*').trim_end();
    if t.is_empty() {
        return Err(PlanError::Invalid(format!(
            "`{field}` is empty; give it a title"
        )));
    }
    Ok(t.to_owned())
}

impl Plan {
    /// A plan with no mission, milestones or log yet.
    #[must_use]
    pub fn empty(id: PlanId, title: String, status: PlanStatus, created: String) -> Self {
        Self {
            id,
            title,
            status,
            updated: created.clone(),
            created,
            target_date: None,
            energy_floor: None,
            review_cadence_days: None,
            topics: Vec::new(),
            why: String::new(),
            success: Vec::new(),
            constraints: String::new(),
            out_of_scope: String::new(),
            resources: Vec::new(),
            milestones: Vec::new(),
            checkpoints: Vec::new(),
            records: Vec::new(),
            notes: String::new(),
            kept: Kept::default(),
        }
    }

    /// Milestones done.
    #[must_use]
    pub fn milestone_done(&self) -> usize {
        self.milestones.iter().filter(|m| m.done).count()
    }

    /// The first milestone not done, with its index.
    #[must_use]
    pub fn next_milestone(&self) -> Option<(usize, &Milestone)> {
        self.milestones.iter().enumerate().find(|(_, m)| !m.done)
    }
}
