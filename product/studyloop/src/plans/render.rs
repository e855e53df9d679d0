//! The one rendering step of a plan document, and the one gate before a
//! document is written ([`to_document`]): the size bounds, then the
//! rendering, then `parse(render(plan)) == plan`, or the write is refused.
//! Every value goes through an escape for where it lands: JSON in the
//! frontmatter, one line (every line break a reader takes for one folded)
//! in the body, `|` swapped in table cells, and a Notes line that would read
//! as a heading prefixed with `\`.

use std::fmt::Write as _;
use std::path::Path;

use super::doc::{Inner, Owned, Plan, limits};
use super::{PlanError, parse};

/// Whether `c` ends a line for some reader: LF, CR, VT, FF, NEL, and the
/// Unicode line and paragraph separators.
fn is_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// A value placed on one body line: line breaks become spaces, other
/// controls go, so it can never start a line of its own.
fn line(s: &str) -> String {
    s.chars()
        .map(|c| if is_break(c) { ' ' } else { c })
        .filter(|c| !c.is_control())
        .collect()
}

/// A cell of the checkpoints table: `|` would split it.
fn cell(s: &str) -> String {
    line(s).replace('|', "/")
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A Notes line as written: one that would read as a section heading (or
/// that starts with the escape itself) gets a leading `\`, which
/// [`unescape_note`] removes.
fn escape_note(l: &str) -> String {
    let l = line(l);
    if l.starts_with("## ") || l.starts_with('\\') {
        format!("\\{l}")
    } else {
        l
    }
}

impl Plan {
    /// The document text (every value escaped for where it lands).
    #[must_use]
    pub fn render(&self) -> String {
        render(self)
    }
}

/// The document text ([`escape_note`]'s inverse is `parse::unescape_note`).
fn render(p: &Plan) -> String {
    let mut s = String::with_capacity(1024);
    s.push_str("---\n");
    let _ = writeln!(s, "id: {}", p.id);
    let _ = writeln!(s, "title: {}", json_str(&p.title));
    let _ = writeln!(s, "status: {}", p.status.as_str());
    let _ = writeln!(s, "created: {}", json_str(&p.created));
    let _ = writeln!(s, "updated: {}", json_str(&p.updated));
    if let Some(d) = &p.target_date {
        let _ = writeln!(s, "target_date: {}", json_str(d));
    }
    if let Some(e) = p.energy_floor {
        let _ = writeln!(s, "energy_floor: {e}");
    }
    if let Some(r) = p.review_cadence_days {
        let _ = writeln!(s, "review_cadence_days: {r}");
    }
    let topics = serde_json::to_string(&p.topics).unwrap_or_else(|_| "[]".into());
    let _ = writeln!(s, "topics: {topics}");
    for l in &p.kept.front {
        let _ = writeln!(s, "{}", line(l));
    }
    s.push_str("---\n\n");
    put(
        &mut s,
        p,
        Owned::Preamble,
        &format!("# {}\n", line(&p.title)),
    );
    s.push_str("\n## Mission\n\n");
    put(&mut s, p, Owned::Mission, &mission(p));
    s.push_str("\n## Milestones\n\n");
    put(&mut s, p, Owned::Milestones, &milestones(p));
    s.push_str("\n## Checkpoints\n\n");
    put(&mut s, p, Owned::Checkpoints, &checkpoints(p));
    s.push_str("\n## Learning records\n\n");
    put(&mut s, p, Owned::Records, &records(p));
    s.push_str("\n## Notes\n\n");
    if !p.notes.is_empty() {
        for l in p.notes.split('\n') {
            let _ = writeln!(s, "{}", escape_note(l));
        }
    }
    for section in &p.kept.sections {
        s.push('\n');
        for l in section {
            let _ = writeln!(s, "{}", line(l));
        }
    }
    s
}

/// Writes an owned section's `body` with the hand-written lines kept in it
/// (`Kept::inner`) back where they stood: before the section's own line
/// they preceded, or at its end when it has fewer lines now.
fn put(s: &mut String, p: &Plan, section: Owned, body: &str) {
    let mut inner = p
        .kept
        .inner
        .iter()
        .filter(|i| i.section == section)
        .peekable();
    let mut own = 0;
    for l in body.lines() {
        if !l.trim().is_empty() {
            while let Some(i) = inner.next_if(|i| i.before <= own) {
                let _ = writeln!(s, "{}", line(&i.line));
            }
            own += 1;
        }
        let _ = writeln!(s, "{l}");
    }
    for i in inner {
        let _ = writeln!(s, "{}", line(&i.line));
    }
}

fn mission(p: &Plan) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Why: {}", line(&p.why));
    s.push_str("Success criteria:\n");
    for c in &p.success {
        let _ = writeln!(s, "- {}", line(c));
    }
    let _ = writeln!(s, "Constraints: {}", line(&p.constraints));
    let _ = writeln!(s, "Out of scope: {}", line(&p.out_of_scope));
    s.push_str("Resources:\n");
    for r in &p.resources {
        let _ = writeln!(s, "- {}", line(r));
    }
    s
}

fn milestones(p: &Plan) -> String {
    let mut s = String::new();
    for m in &p.milestones {
        let mark = if m.done { 'x' } else { ' ' };
        let _ = write!(s, "- [{mark}] **{}**", line(&m.title));
        if !m.concepts.is_empty() {
            let concepts: Vec<String> = m.concepts.iter().map(|c| line(c)).collect();
            let _ = write!(s, " — concepts: {}", concepts.join(", "));
        }
        s.push('\n');
    }
    s
}

fn checkpoints(p: &Plan) -> String {
    let mut s = String::from(
        "| Date | Phase | Study | Milestones | Note |\n| --- | --- | --- | --- | --- |\n",
    );
    for c in &p.checkpoints {
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
    s
}

fn records(p: &Plan) -> String {
    let mut s = String::new();
    for r in &p.records {
        let _ = writeln!(
            s,
            "- **{}** ({}): {}",
            line(&r.title),
            line(&r.status),
            line(&r.body)
        );
    }
    s
}

/// Refuse a plan over the bounds a plan is held to (a page, not a dump),
/// whichever door it came through: interview answers, a posted or imported
/// document, a hand edit.
fn bounds(p: &Plan) -> Result<(), PlanError> {
    let over = |what: &str, n: usize, max: usize| {
        (n > max).then(|| {
            PlanError::Invalid(format!(
                "the plan has {n} {what}; at most {max} are accepted (split it into several plans)"
            ))
        })
    };
    let concepts = p.milestones.iter().map(|m| m.concepts.len()).max();
    let longest = [&p.why, &p.constraints, &p.out_of_scope]
        .into_iter()
        .chain(&p.success)
        .chain(&p.resources)
        .chain(&p.topics)
        .chain(p.milestones.iter().map(|m| &m.title))
        .map(|t| t.chars().count())
        .max()
        .unwrap_or(0);
    let checks = [
        over("milestones", p.milestones.len(), limits::ITEMS),
        over("success criteria", p.success.len(), limits::ITEMS),
        over("resources", p.resources.len(), limits::ITEMS),
        over("topics", p.topics.len(), limits::ITEMS),
        over(
            "concepts in one milestone",
            concepts.unwrap_or(0),
            limits::ITEMS,
        ),
        over("checkpoints", p.checkpoints.len(), limits::LOG),
        over("learning records", p.records.len(), limits::LOG),
        over("title characters", p.title.chars().count(), limits::TITLE),
        over("characters in one field", longest, limits::TEXT),
    ];
    checks.into_iter().flatten().next().map_or(Ok(()), Err)
}

/// The text to write for `p`, or why it must not be written: over a bound,
/// larger than a document may be, or not read back as the same plan (what
/// would otherwise leave a document no door can read).
///
/// # Errors
/// [`PlanError::Invalid`] naming the bound or the field that would change.
pub(crate) fn to_document(p: &Plan) -> Result<String, PlanError> {
    bounds(p)?;
    let text = render(p);
    if text.len() > limits::DOC_BYTES {
        return Err(PlanError::Invalid(format!(
            "the document would be {} bytes; at most {} are accepted",
            text.len(),
            limits::DOC_BYTES
        )));
    }
    let back =
        parse::parse(Path::new("(the document to write)"), &text, Some(&p.id)).map_err(|e| {
            PlanError::Invalid(format!(
                "the plan would not read back ({e}); nothing was written"
            ))
        })?;
    // A kept line anchored past a section's end (milestones removed since)
    // reads back at the end: the same line, moved, is the same plan.
    let mut want = std::borrow::Cow::Borrowed(p);
    if same_lines(&p.kept.inner, &back.kept.inner) {
        want.to_mut().kept.inner.clone_from(&back.kept.inner);
    }
    if back != *want {
        return Err(PlanError::Invalid(format!(
            "the plan would not read back as written (its {} would change); nothing was written: shorten or rephrase that field",
            first_difference(p, &back)
        )));
    }
    Ok(text)
}

/// Whether `a` and `b` hold the same kept lines in the same sections, in
/// order (their anchors may differ).
fn same_lines(a: &[Inner], b: &[Inner]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.section == y.section && x.line == y.line)
}

/// The first field where `a` and `b` differ, for the refusal.
fn first_difference(a: &Plan, b: &Plan) -> &'static str {
    let fields: [(&str, bool); 10] = [
        ("title", a.title == b.title),
        (
            "mission",
            a.why == b.why && a.constraints == b.constraints && a.out_of_scope == b.out_of_scope,
        ),
        ("success criteria", a.success == b.success),
        ("resources", a.resources == b.resources),
        ("milestones", a.milestones == b.milestones),
        ("checkpoints", a.checkpoints == b.checkpoints),
        ("learning records", a.records == b.records),
        ("notes", a.notes == b.notes),
        ("topics", a.topics == b.topics),
        ("hand-edited parts", a.kept == b.kept),
    ];
    fields
        .into_iter()
        .find(|(_, same)| !same)
        .map_or("frontmatter", |(f, _)| f)
}
