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
//! Every free-text field is one line (newlines folded, controls dropped), so
//! no user text can forge a heading, a milestone or a table row.

use std::fmt::Write as _;

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
    /// Free notes (one line).
    pub notes: String,
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

/// A cell of the checkpoints table: `|` would split it.
fn cell(s: &str) -> String {
    s.replace('|', "/")
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
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

    /// The document text.
    #[must_use]
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(1024);
        s.push_str("---\n");
        let _ = writeln!(s, "id: {}", self.id);
        let _ = writeln!(s, "title: {}", json_str(&self.title));
        let _ = writeln!(s, "status: {}", self.status.as_str());
        let _ = writeln!(s, "created: {}", json_str(&self.created));
        let _ = writeln!(s, "updated: {}", json_str(&self.updated));
        if let Some(d) = &self.target_date {
            let _ = writeln!(s, "target_date: {}", json_str(d));
        }
        if let Some(e) = self.energy_floor {
            let _ = writeln!(s, "energy_floor: {e}");
        }
        if let Some(r) = self.review_cadence_days {
            let _ = writeln!(s, "review_cadence_days: {r}");
        }
        let topics = serde_json::to_string(&self.topics).unwrap_or_else(|_| "[]".into());
        let _ = writeln!(s, "topics: {topics}");
        s.push_str("---\n\n");
        let _ = writeln!(s, "# {}\n", self.title);
        s.push_str("## Mission\n\n");
        let _ = writeln!(s, "Why: {}", self.why);
        s.push_str("Success criteria:\n");
        for c in &self.success {
            let _ = writeln!(s, "- {c}");
        }
        let _ = writeln!(s, "Constraints: {}", self.constraints);
        let _ = writeln!(s, "Out of scope: {}", self.out_of_scope);
        s.push_str("Resources:\n");
        for r in &self.resources {
            let _ = writeln!(s, "- {r}");
        }
        s.push_str("\n## Milestones\n\n");
        for m in &self.milestones {
            let _ = write!(s, "- [{}] **{}**", if m.done { 'x' } else { ' ' }, m.title);
            if !m.concepts.is_empty() {
                let _ = write!(s, " — concepts: {}", m.concepts.join(", "));
            }
            s.push('\n');
        }
        s.push_str("\n## Checkpoints\n\n| Date | Phase | Study | Milestones | Note |\n| --- | --- | --- | --- | --- |\n");
        for c in &self.checkpoints {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {}/{} | {} |",
                cell(&c.date),
                cell(&c.phase),
                cell(&c.study_id),
                c.milestone_done,
                c.milestone_total,
                cell(&c.note)
            );
        }
        s.push_str("\n## Learning records\n\n");
        for r in &self.records {
            let _ = writeln!(s, "- **{}** ({}): {}", r.title, r.status, r.body);
        }
        s.push_str("\n## Notes\n\n");
        if !self.notes.is_empty() {
            let _ = writeln!(s, "{}", self.notes);
        }
        s
    }
}
