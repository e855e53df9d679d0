//! The seventeen rules' codes and one finding: `MCnnn <file>:<line>: <message>`.
//! Lines are 1-based; a finding about a whole file (or a missing one) points at
//! line 1, so every finding is a clickable location.

use std::fmt;

/// One conformance rule (docs/modules.md defines each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Rule(pub(crate) u8);

impl Rule {
    /// Every rule, in order.
    #[cfg(test)]
    pub(crate) const ALL: [Self; 17] = {
        let mut all = [Self(0); 17];
        let mut i = 0;
        while i < 17 {
            all[i] = Self(i as u8 + 1);
            i += 1;
        }
        all
    };
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MC{:03}", self.0)
    }
}

/// A violation of one rule at one place.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Finding {
    /// The rule broken.
    pub(crate) rule: Rule,
    /// The file, relative to the module root.
    pub(crate) file: String,
    /// The 1-based line.
    pub(crate) line: usize,
    /// What is wrong and how to fix it.
    pub(crate) message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}:{}: {}",
            self.rule, self.file, self.line, self.message
        )
    }
}

/// Collects findings for one file.
#[derive(Debug, Default)]
pub(crate) struct Findings(pub(crate) Vec<Finding>);

impl Findings {
    /// Records a finding.
    pub(crate) fn add(&mut self, rule: u8, file: &str, line: usize, message: impl Into<String>) {
        self.0.push(Finding {
            rule: Rule(rule),
            file: file.to_owned(),
            line: line.max(1),
            message: message.into(),
        });
    }
}

/// The 1-based line of the first occurrence of `needle` in `text` at or after
/// line `from`, else `from` (a best-effort location for a value found in parsed
/// data, whose parser keeps no positions).
pub(crate) fn line_of(text: &str, needle: &str, from: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| l.contains(needle))
        .map_or(from.max(1), |(i, _)| i + 1)
}

/// The line of a YAML mapping key `key:` (first at or after `from`).
pub(crate) fn key_line(text: &str, key: &str, from: usize) -> usize {
    let bare = format!("{key}:");
    let quoted = format!("\"{key}\":");
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with(&bare) || t.starts_with(&quoted)
        })
        .map_or(from.max(1), |(i, _)| i + 1)
}
