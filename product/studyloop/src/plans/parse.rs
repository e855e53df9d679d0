//! Document text → [`Plan`]. Strict inside the sections it owns: a line it
//! does not understand there is a [`PlanError::Malformed`] naming the file
//! and line. What a hand edit adds around them (frontmatter keys it does not
//! know, `#` comments, whole `## ` sections of the user's own, and HTML
//! comments or non-`## ` headings inside the sections it owns) is kept in
//! [`Plan::kept`] and written back, never dropped.

use std::path::Path;

use super::doc::{CheckpointRow, Inner, Kept, LearningRecord, Milestone, Owned, Plan, PlanStatus};
use super::{PlanError, PlanId};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Preamble,
    Mission,
    Milestones,
    Checkpoints,
    Records,
    Notes,
    /// A `## ` section of the user's own (kept verbatim).
    Kept,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    Success,
    Resources,
}

struct Ctx<'a> {
    path: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, line: usize, message: impl Into<String>) -> PlanError {
        PlanError::Malformed {
            path: self.path.to_owned(),
            line,
            message: message.into(),
        }
    }
}

/// Parse a frontmatter value: a JSON literal (what we write) or a bare word.
fn value(raw: &str) -> Option<serde_json::Value> {
    let raw = raw.trim();
    if raw.starts_with(['"', '[', '{']) || raw.parse::<f64>().is_ok() || raw == "null" {
        serde_json::from_str(raw).ok()
    } else {
        Some(serde_json::Value::String(raw.to_owned()))
    }
}

fn string_of(
    c: &Ctx<'_>,
    line: usize,
    key: &str,
    v: &serde_json::Value,
) -> Result<String, PlanError> {
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| c.err(line, format!("`{key}` must be a string")))
}

/// Parse a whole document; `expect_id` (the file stem) must match its `id`.
///
/// # Errors
/// [`PlanError::Malformed`] with the 1-based line.
#[expect(clippy::too_many_lines, reason = "one linear pass over the sections")]
pub(crate) fn parse(
    path: &Path,
    text: &str,
    expect_id: Option<&PlanId>,
) -> Result<Plan, PlanError> {
    let c = Ctx { path };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, "---")) => {}
        _ => return Err(c.err(1, "a plan document starts with `---` (frontmatter)")),
    }
    let (mut id, mut title, mut status) = (None, None, None);
    let mut plan_created = String::new();
    let mut plan_updated = String::new();
    let (mut target_date, mut energy_floor, mut cadence) = (None, None, None);
    let mut topics = Vec::new();
    let mut kept = Kept::default();
    let mut closed = false;
    for (n, line) in lines.by_ref() {
        if line == "---" {
            closed = true;
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        if line.trim_start().starts_with('#') {
            kept.front.push(line.trim_end().to_owned());
            continue;
        }
        let (key, raw) = line
            .split_once(':')
            .ok_or_else(|| c.err(n, "expected `key: value` in the frontmatter"))?;
        let v = value(raw)
            .ok_or_else(|| c.err(n, format!("cannot read the value of `{}`", key.trim())))?;
        match key.trim() {
            "id" => {
                id = Some(
                    PlanId::parse(&string_of(&c, n, "id", &v)?)
                        .map_err(|e| c.err(n, e.to_string()))?,
                )
            }
            "title" => title = Some(string_of(&c, n, "title", &v)?),
            "status" => {
                status = Some(
                    PlanStatus::parse(&string_of(&c, n, "status", &v)?)
                        .map_err(|e| c.err(n, e.to_string()))?,
                )
            }
            "created" => plan_created = string_of(&c, n, "created", &v)?,
            "updated" => plan_updated = string_of(&c, n, "updated", &v)?,
            "target_date" => target_date = v.as_str().map(str::to_owned),
            "energy_floor" => {
                energy_floor = match v.as_u64() {
                    Some(e @ 1..=10) => Some(u8::try_from(e).unwrap_or(10)),
                    None if v.is_null() => None,
                    _ => return Err(c.err(n, "`energy_floor` must be 1..10")),
                }
            }
            "review_cadence_days" => {
                cadence = match v.as_u64() {
                    Some(d @ 1..=90) => Some(u16::try_from(d).unwrap_or(90)),
                    None if v.is_null() => None,
                    _ => return Err(c.err(n, "`review_cadence_days` must be 1..90")),
                }
            }
            "topics" => {
                topics = match &v {
                    serde_json::Value::Array(a) => a
                        .iter()
                        .filter_map(|t| t.as_str().map(str::to_owned))
                        .collect(),
                    serde_json::Value::String(s) => s
                        .split(',')
                        .map(|t| t.trim().to_owned())
                        .filter(|t| !t.is_empty())
                        .collect(),
                    _ => return Err(c.err(n, "`topics` must be a list")),
                }
            }
            // Unknown keys are kept (a hand edit, or a newer StudyLoop).
            _ => kept.front.push(line.trim_end().to_owned()),
        }
    }
    if !closed {
        return Err(c.err(
            text.lines().count().max(1),
            "the frontmatter is not closed with `---`",
        ));
    }
    let id = id.ok_or_else(|| c.err(1, "the frontmatter has no `id`"))?;
    if let Some(want) = expect_id
        && *want != id
    {
        return Err(c.err(
            1,
            format!("the frontmatter id `{id}` does not match the file name `{want}.md`"),
        ));
    }
    let mut plan = Plan::empty(
        id,
        title.ok_or_else(|| c.err(1, "the frontmatter has no `title`"))?,
        status.unwrap_or(PlanStatus::Draft),
        plan_created,
    );
    plan.updated = plan_updated;
    plan.target_date = target_date;
    plan.energy_floor = energy_floor;
    plan.review_cadence_days = cadence;
    plan.topics = topics;
    let mut section = Section::Preamble;
    let mut list = List::None;
    let mut notes: Vec<&str> = Vec::new();
    // The section's own lines so far (the anchor of a hand-written line),
    // and the line of an HTML comment still open.
    let mut own_lines = 0;
    let mut comment: Option<usize> = None;
    for (n, line) in lines {
        // A comment or heading inside an owned section is the user's: kept
        // where it stands (a `## ` inside a comment opens no section).
        if let Some(owned) = section.owned()
            && (comment.is_some() || is_hand_line(line, owned))
        {
            comment = match comment {
                Some(_) if line.contains("-->") => None,
                Some(open) => Some(open),
                None => comment_opens(line).then_some(n),
            };
            kept.inner.push(Inner {
                section: owned,
                before: own_lines,
                line: line.trim_end().to_owned(),
            });
            continue;
        }
        if let Some(h) = line.strip_prefix("## ") {
            own_lines = 0;
            section = match h.trim() {
                "Mission" => Section::Mission,
                "Milestones" => Section::Milestones,
                "Checkpoints" => Section::Checkpoints,
                "Learning records" => Section::Records,
                "Notes" => Section::Notes,
                _ => {
                    kept.sections.push(vec![line.trim_end().to_owned()]);
                    Section::Kept
                }
            };
            list = List::None;
            continue;
        }
        let t = line.trim_end();
        match section {
            Section::Kept => {
                if let Some(s) = kept.sections.last_mut() {
                    s.push(t.to_owned());
                }
                continue;
            }
            Section::Notes => {
                notes.push(unescape_note(t));
                continue;
            }
            _ => {}
        }
        if t.is_empty() {
            continue;
        }
        match section {
            Section::Preamble => {
                if !t.starts_with("# ") {
                    return Err(c.err(n, "text before the first `## ` section"));
                }
            }
            Section::Mission => {
                if let Some(v) = t.strip_prefix("Why:") {
                    plan.why = v.trim().to_owned();
                    list = List::None;
                } else if t == "Success criteria:" {
                    list = List::Success;
                } else if t == "Resources:" {
                    list = List::Resources;
                } else if let Some(v) = t.strip_prefix("Constraints:") {
                    plan.constraints = v.trim().to_owned();
                    list = List::None;
                } else if let Some(v) = t.strip_prefix("Out of scope:") {
                    plan.out_of_scope = v.trim().to_owned();
                    list = List::None;
                } else if let Some(item) = t.strip_prefix("- ") {
                    match list {
                        List::Success => plan.success.push(item.trim().to_owned()),
                        List::Resources => plan.resources.push(item.trim().to_owned()),
                        List::None => return Err(c.err(n, "a list item outside `Success criteria:` or `Resources:`")),
                    }
                } else {
                    return Err(c.err(n, "expected `Why:`, `Success criteria:`, `Constraints:`, `Out of scope:`, `Resources:` or a `- ` item"));
                }
            }
            Section::Milestones => plan.milestones.push(milestone(t).ok_or_else(|| {
                c.err(n, "a milestone line reads `- [ ] **Title**` or `- [x] **Title** — concepts: a, b`")
            })?),
            Section::Checkpoints => {
                // The header rows are the section's own lines too.
                let header =
                    t.starts_with("| Date") || t.starts_with("| ---") || t.starts_with("|---");
                if !header {
                    plan.checkpoints.push(checkpoint(t).ok_or_else(|| {
                        c.err(n, "a checkpoint row reads `| date | phase | study | done/total | note |`")
                    })?);
                }
            }
            Section::Records => plan.records.push(record(t).ok_or_else(|| {
                c.err(n, "a learning record reads `- **Title** (status): body`")
            })?),
            Section::Notes | Section::Kept => {}
        }
        own_lines += 1;
    }
    if let Some(open) = comment {
        return Err(c.err(
            open,
            "this HTML comment is not closed with `-->` (it would hide the rest of the document)",
        ));
    }
    // Blank lines around the notes and after a kept section are layout.
    let first = notes.iter().position(|l| !l.trim().is_empty());
    let last = notes.iter().rposition(|l| !l.trim().is_empty());
    if let (Some(a), Some(b)) = (first, last) {
        plan.notes = notes[a..=b].join("\n");
    }
    for s in &mut kept.sections {
        while s.last().is_some_and(|l| l.trim().is_empty()) {
            s.pop();
        }
    }
    plan.kept = kept;
    Ok(plan)
}

impl Section {
    /// The owned section this is, where hand-written lines are kept in place.
    fn owned(self) -> Option<Owned> {
        match self {
            Section::Preamble => Some(Owned::Preamble),
            Section::Mission => Some(Owned::Mission),
            Section::Milestones => Some(Owned::Milestones),
            Section::Checkpoints => Some(Owned::Checkpoints),
            Section::Records => Some(Owned::Records),
            Section::Notes | Section::Kept => None,
        }
    }
}

/// A line the model does not own inside `section`: an HTML comment's first
/// line, or a heading of any level but 2 (which starts a section; a `# `
/// line is the title's place in the preamble).
fn is_hand_line(line: &str, section: Owned) -> bool {
    let t = line.trim_start();
    if t.starts_with("<!--") {
        return true;
    }
    let hashes = t.chars().take_while(|c| *c == '#').count();
    let rest = &t[hashes..];
    let heading = (1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with(' '));
    heading && hashes != 2 && !(hashes == 1 && section == Owned::Preamble)
}

/// Whether `line` opens an HTML comment it does not close.
fn comment_opens(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("<!--")
        .is_some_and(|rest| !rest.contains("-->"))
}

/// A Notes line as read: the `\` that rendering puts before a line that
/// would read as a heading (or starts with `\`) is removed.
fn unescape_note(l: &str) -> &str {
    l.strip_prefix('\\').unwrap_or(l)
}

fn bold_title(rest: &str) -> Option<(&str, &str)> {
    let rest = rest.strip_prefix("**")?;
    let end = rest.find("**")?;
    let title = &rest[..end];
    (!title.trim().is_empty()).then_some((title, &rest[end + 2..]))
}

fn milestone(line: &str) -> Option<Milestone> {
    let rest = line.strip_prefix("- [")?;
    let (mark, rest) = (rest.chars().next()?, rest.get(1..)?);
    let done = match mark {
        'x' | 'X' => true,
        ' ' => false,
        _ => return None,
    };
    let rest = rest.strip_prefix("] ")?;
    let (title, tail) = bold_title(rest)?;
    let tail = tail.trim();
    let concepts = if tail.is_empty() {
        Vec::new()
    } else {
        let list = tail
            .strip_prefix("— concepts:")
            .or_else(|| tail.strip_prefix("- concepts:"))?;
        list.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    Some(Milestone {
        title: title.to_owned(),
        done,
        concepts,
    })
}

fn checkpoint(line: &str) -> Option<CheckpointRow> {
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    let [date, phase, study, counts, note] = cells.as_slice() else {
        return None;
    };
    let (done, total) = counts.split_once('/')?;
    Some(CheckpointRow {
        date: (*date).to_owned(),
        phase: (*phase).to_owned(),
        study_id: (*study).to_owned(),
        milestone_done: done.trim().parse().ok()?,
        milestone_total: total.trim().parse().ok()?,
        note: (*note).to_owned(),
    })
}

fn record(line: &str) -> Option<LearningRecord> {
    let rest = line.strip_prefix("- ")?;
    let (title, tail) = bold_title(rest)?;
    let tail = tail.strip_prefix(" (")?;
    let (status, body) = tail.split_once("):")?;
    Some(LearningRecord {
        title: title.to_owned(),
        status: status.to_owned(),
        body: body.trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plans::doc::PlanStatus;

    fn sample() -> Plan {
        Plan {
            id: PlanId::parse("sql-windows").unwrap(),
            title: "SQL \"window\" functions: ranking".into(),
            status: PlanStatus::Active,
            created: "2026-01-01T00:00:00Z".into(),
            updated: "2026-01-02T00:00:00Z".into(),
            target_date: Some("2026-12-24".into()),
            energy_floor: Some(4),
            review_cadence_days: Some(7),
            topics: vec!["sql".into(), "a, b".into()],
            why: "Reports at work: need it".into(),
            success: vec!["Write a running total".into()],
            constraints: "30 min a day".into(),
            out_of_scope: "".into(),
            resources: vec!["the docs".into()],
            milestones: vec![
                Milestone {
                    title: "OVER clause".into(),
                    done: true,
                    concepts: vec!["PARTITION BY".into(), "ORDER BY".into()],
                },
                Milestone {
                    title: "Frames".into(),
                    done: false,
                    concepts: vec![],
                },
            ],
            checkpoints: vec![CheckpointRow {
                date: "2026-01-02T00:00:00Z".into(),
                phase: "start".into(),
                study_id: "".into(),
                milestone_done: 1,
                milestone_total: 2,
                note: "on track".into(),
            }],
            records: vec![LearningRecord {
                title: "Frames (rows)".into(),
                status: "active".into(),
                body: "ROWS vs RANGE: x".into(),
            }],
            notes: "Keep going.".into(),
            kept: Kept::default(),
        }
    }

    #[test]
    fn render_parse_round_trip() {
        let p = sample();
        let text = p.render();
        assert!(
            text.contains("- [x] **OVER clause** — concepts: PARTITION BY, ORDER BY"),
            "{text}"
        );
        let back = parse(Path::new("/p/sql-windows.md"), &text, Some(&p.id)).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.render(), text);
    }

    #[test]
    fn malformed_names_file_and_line() {
        let text = sample()
            .render()
            .replace("- [ ] **Frames**", "- [?] Frames");
        let err = parse(Path::new("/p/sql-windows.md"), &text, None).unwrap_err();
        let line = text.lines().position(|l| l == "- [?] Frames").unwrap() + 1;
        let msg = err.to_string();
        assert!(
            msg.starts_with("plan_error:") && msg.contains(&format!("/p/sql-windows.md:{line}")),
            "{msg}"
        );
        for (bad, want) in [
            ("no frontmatter", 1),
            ("---\nid: a\ntitle: x\n", 3),
            ("---\nid: ../x\n---\n", 2),
            ("---\nid: a\ntitle: x\n---\n## Milestones\nnot one\n", 6),
        ] {
            let msg = parse(Path::new("/p/a.md"), bad, None)
                .unwrap_err()
                .to_string();
            assert!(msg.contains(&format!("/p/a.md:{want}:")), "{bad:?}: {msg}");
        }
        let msg = parse(
            Path::new("/p/b.md"),
            &sample().render(),
            Some(&PlanId::parse("b").unwrap()),
        )
        .unwrap_err()
        .to_string();
        assert!(msg.contains("does not match the file name"), "{msg}");
    }
}
