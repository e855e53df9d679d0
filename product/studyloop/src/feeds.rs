//! The live-session feeds the agent writes through `studyloop topic` and
//! `studyloop park`, and the end-of-session summary built from them.
//!
//! Line formats (reference §3.2):
//! - `session-topics.md`: `- [HH:MM] <topic> | status:<status> | <note>` (UTC)
//! - `session-parking.md`: `- <question>`
//!
//! Each line is one `O_APPEND` write, so concurrent writers never lose a line.

use std::path::Path;

use crate::settings::SessionPaths;

/// A topic's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicStatus {
    /// Working on it.
    Learning,
    /// Stuck.
    Struggling,
    /// A connection made.
    Insight,
    /// Learned.
    Win,
    /// Set aside.
    Parked,
}

impl TopicStatus {
    /// Accepted spellings.
    pub const ACCEPTED: &'static str = "learning, struggling, insight, win, parked";

    /// Parse a status.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "learning" => Self::Learning,
            "struggling" => Self::Struggling,
            "insight" => Self::Insight,
            "win" => Self::Win,
            "parked" => Self::Parked,
            _ => return None,
        })
    }

    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Learning => "learning",
            Self::Struggling => "struggling",
            Self::Insight => "insight",
            Self::Win => "win",
            Self::Parked => "parked",
        }
    }

    /// The `study_progress.confidence` it maps to (parked has none).
    pub fn confidence(self) -> Option<&'static str> {
        match self {
            Self::Win | Self::Insight => Some("confident"),
            Self::Struggling => Some("struggling"),
            Self::Learning => Some("learning"),
            Self::Parked => None,
        }
    }
}

/// One parsed topics line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicLine {
    /// `HH:MM`.
    pub time: String,
    /// The topic or concept.
    pub name: String,
    /// Its status.
    pub status: TopicStatus,
    /// Free note (may be empty).
    pub note: String,
}

/// One line of user text: newlines folded, and `|` (the field separator)
/// replaced in names so a line always parses back.
fn one_line(s: &str) -> String {
    s.split(['\n', '\r'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Format a topics line.
pub fn topic_line(hhmm: &str, name: &str, status: TopicStatus, note: &str) -> String {
    format!(
        "- [{hhmm}] {} | status:{} | {}",
        one_line(name).replace('|', "/"),
        status.as_str(),
        one_line(note)
    )
    .trim_end()
    .to_owned()
}

/// Parse a topics line; `None` for anything else.
pub fn parse_topic_line(line: &str) -> Option<TopicLine> {
    let rest = line.strip_prefix("- [")?;
    let (time, rest) = rest.split_once("] ")?;
    let (name, rest) = rest.split_once(" | status:")?;
    let (status, note) = match rest.split_once(" | ") {
        Some((s, n)) => (s, n),
        None => (rest.trim_end_matches(" |"), ""),
    };
    Some(TopicLine {
        time: time.to_owned(),
        name: name.to_owned(),
        status: TopicStatus::parse(status.trim())?,
        note: note.trim().to_owned(),
    })
}

/// Append a topics line.
pub fn append_topic(
    paths: &SessionPaths,
    hhmm: &str,
    name: &str,
    status: TopicStatus,
    note: &str,
) -> std::io::Result<()> {
    crate::fsutil::append_line(
        &paths.topics(),
        &topic_line(hhmm, name, status, note),
        0o600,
    )
}

/// Append a parked question.
pub fn append_parked(paths: &SessionPaths, question: &str) -> std::io::Result<()> {
    crate::fsutil::append_line(
        &paths.parking(),
        &format!("- {}", one_line(question)),
        0o600,
    )
}

/// A feed's lines; absent, unreadable or not a regular file (a planted FIFO
/// or device) reads as empty, never hangs.
fn lines(path: &Path) -> Vec<String> {
    crate::fsutil::read_private(path, crate::fsutil::FEED_LIMIT)
        .ok()
        .flatten()
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Every parsable topics line, in order.
pub fn read_topics(paths: &SessionPaths) -> Vec<TopicLine> {
    lines(&paths.topics())
        .iter()
        .filter_map(|l| parse_topic_line(l))
        .collect()
}

/// Every parked question, in order.
pub fn read_parked(paths: &SessionPaths) -> Vec<String> {
    lines(&paths.parking())
        .iter()
        .filter_map(|l| l.strip_prefix("- ").map(str::to_owned))
        .filter(|q| !q.is_empty())
        .collect()
}

/// What the feeds amount to at the end of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Notes with `Wins:`, `In progress:`, `Struggling:`, `Parked:` sections.
    pub notes: String,
    /// Concepts whose latest status is win or insight.
    pub win_count: i64,
    /// Concepts whose latest status is struggling.
    pub struggle_count: i64,
    /// The latest line per concept, in first-seen order.
    pub latest: Vec<TopicLine>,
    /// Parked questions (from the parking feed and `parked` topics).
    pub parked: Vec<String>,
}

/// Summarise the feeds: the latest status of each concept counts.
pub fn summarize(topics: &[TopicLine], parked: &[String]) -> Summary {
    let mut latest: Vec<TopicLine> = Vec::new();
    for t in topics {
        match latest
            .iter_mut()
            .find(|l| l.name.eq_ignore_ascii_case(&t.name))
        {
            Some(slot) => *slot = t.clone(),
            None => latest.push(t.clone()),
        }
    }
    let item = |t: &TopicLine| {
        if t.note.is_empty() {
            format!("- {}", t.name)
        } else {
            format!("- {}: {}", t.name, t.note)
        }
    };
    let section = |title: &str, pick: &dyn Fn(TopicStatus) -> bool| {
        let items: Vec<String> = latest.iter().filter(|t| pick(t.status)).map(item).collect();
        (!items.is_empty()).then(|| format!("{title}\n{}", items.join("\n")))
    };
    let mut all_parked: Vec<String> = parked.to_vec();
    all_parked.extend(
        latest
            .iter()
            .filter(|t| t.status == TopicStatus::Parked)
            .map(|t| t.name.clone()),
    );
    let parked_section = (!all_parked.is_empty()).then(|| {
        format!(
            "Parked:\n{}",
            all_parked
                .iter()
                .map(|q| format!("- {q}"))
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    let notes = [
        section("Wins:", &|s| {
            matches!(s, TopicStatus::Win | TopicStatus::Insight)
        }),
        section("In progress:", &|s| s == TopicStatus::Learning),
        section("Struggling:", &|s| s == TopicStatus::Struggling),
        parked_section,
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n\n");
    let count = |pick: &dyn Fn(TopicStatus) -> bool| {
        i64::try_from(latest.iter().filter(|t| pick(t.status)).count()).unwrap_or(i64::MAX)
    };
    Summary {
        notes,
        win_count: count(&|s| matches!(s, TopicStatus::Win | TopicStatus::Insight)),
        struggle_count: count(&|s| s == TopicStatus::Struggling),
        latest,
        parked: all_parked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let l = topic_line(
            "09:05",
            "window | frames",
            TopicStatus::Win,
            "ROWS vs\nRANGE",
        );
        assert_eq!(l, "- [09:05] window / frames | status:win | ROWS vs RANGE");
        let p = parse_topic_line(&l).unwrap();
        assert_eq!(
            (p.name.as_str(), p.status, p.note.as_str()),
            ("window / frames", TopicStatus::Win, "ROWS vs RANGE")
        );
        let bare = topic_line("09:05", "x", TopicStatus::Learning, "");
        assert_eq!(parse_topic_line(&bare).unwrap().note, "");
        assert!(parse_topic_line("random text").is_none());
    }

    #[test]
    fn summary_uses_latest_status_per_concept() {
        let t = |n: &str, s| TopicLine {
            time: "00:00".into(),
            name: n.into(),
            status: s,
            note: String::new(),
        };
        let topics = [
            t("joins", TopicStatus::Struggling),
            t("rank", TopicStatus::Learning),
            t("joins", TopicStatus::Win),
            t("frames", TopicStatus::Struggling),
        ];
        let s = summarize(&topics, &["why NULLs sort first?".into()]);
        assert_eq!((s.win_count, s.struggle_count), (1, 1));
        assert_eq!(
            s.notes,
            "Wins:\n- joins\n\nIn progress:\n- rank\n\nStruggling:\n- frames\n\nParked:\n- why NULLs sort first?"
        );
        assert_eq!(summarize(&[], &[]).notes, "");
    }
}
