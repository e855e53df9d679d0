//! The `unless_inside` spans (shields) a match is checked against, found one line at a
//! time when the shield expression can never match across a line break.
//!
//! Why: `home-path`'s shields (every http(s) URL, redirect parameter and request line)
//! cost a full scan of the text (3.2 ms per 16 MiB of prose, the costliest single step
//! after the key-word patterns) as soon as one home path needs the check, although only
//! the lines holding such a path can shield it. When no match of the shield holds a `\n`
//! (read from its syntax tree), the shields of the whole text are, line by line, exactly
//! the shields found by searching each line alone: a search never runs into the next
//! line, so each line's first search starts fresh. Those are the only shields that can
//! hold a match that lies in that line. So a line's shields are found when a match in it
//! first needs them, and lines without such a match are never searched.

use regex::Regex;
use regex_syntax::hir::{Class, Hir, HirKind, Look};

use crate::pattern::{Pattern, shielded};

/// Whether the shield `expression` can be searched one line at a time with the same
/// result as over the whole text: none of its matches is empty or holds a `\n`, and no
/// assertion of it reads differently at a line's end than at the text's end (`$`
/// without `m`, or CRLF-mode `$`, would match at the end of a line cut from its text).
pub(crate) fn line_local(expression: &str) -> bool {
    let Ok(hir) = regex_syntax::Parser::new().parse(expression) else {
        return false;
    };
    hir.properties().minimum_len().is_some_and(|min| min > 0) && !crosses_lines(&hir)
}

/// Whether some match of `hir` could hold a `\n` or depends on what follows a line.
fn crosses_lines(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty => false,
        HirKind::Literal(literal) => literal.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Class(Class::Bytes(class)) => class
            .ranges()
            .iter()
            .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Look(look) => matches!(look, Look::End | Look::EndCRLF),
        HirKind::Repetition(rep) => crosses_lines(&rep.sub),
        HirKind::Capture(capture) => crosses_lines(&capture.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(crosses_lines),
    }
}

/// The shields one pattern's pass has found so far in one text: the whole text's, or
/// (for a line-local shield) the current line's.
#[derive(Debug, Default)]
pub(crate) struct Shields {
    /// The span of the text `spans` was found in; `None` until the first check.
    range: Option<(usize, usize)>,
    spans: Vec<(usize, usize)>,
}

impl Shields {
    /// Whether `part` of `text` lies inside one of `pattern`'s shields, exactly as
    /// [`shielded`] over [`Pattern::shields`] of the whole text would say.
    pub(crate) fn cover(&mut self, pattern: &Pattern, text: &str, part: (usize, usize)) -> bool {
        let Some(shield) = pattern.unless_inside.as_ref() else {
            return false;
        };
        if !pattern.shield_by_line {
            if self.range.is_none() {
                self.spans = pattern.shields(text);
                self.range = Some((0, text.len()));
            }
            return shielded(part, &self.spans);
        }
        // A shield holds no line break, so a part that spans one is in none.
        if text.as_bytes()[part.0..part.1].contains(&b'\n') {
            return false;
        }
        let cached = self
            .range
            .is_some_and(|(from, to)| from <= part.0 && part.0 <= to);
        if !cached {
            let (from, to) = line_around(text, part.0);
            find_in_line(shield, text, from, to, &mut self.spans);
            self.range = Some((from, to));
        }
        shielded(part, &self.spans)
    }
}

/// The line holding byte `at`: from after the `\n` before it to the `\n` at or after it.
fn line_around(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let from = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let to = bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| at + i);
    (from, to)
}

/// Every match of `shield` in `text[from..to]`, searched as `find_iter` over the whole
/// text would meet them: each search sees the text before it (look-behind), and the line
/// ends at its `\n`, which no match holds. Matches are never empty (`line_local`), so
/// each search starts at the previous end.
fn find_in_line(
    shield: &Regex,
    text: &str,
    from: usize,
    to: usize,
    spans: &mut Vec<(usize, usize)>,
) {
    spans.clear();
    let line = &text[..to];
    let mut at = from;
    while let Some(found) = shield.find_at(line, at) {
        spans.push((found.start(), found.end()));
        at = found.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shield_is_line_local_only_when_no_match_can_cross_a_line() {
        assert!(line_local(r#"(?i:https?)://[^\s"'<>\\?]*"#));
        assert!(line_local(r"\[[A-Z]+:[A-Za-z0-9_-]+\]"));
        assert!(line_local(r"(?m:x$)"));
        // `\s` and `[^x]` hold a line break, an empty match restarts differently, and
        // `$` reads the end of a cut line as the text's end.
        assert!(!line_local(r"a\sb"));
        assert!(!line_local(r"a[^x]b"));
        assert!(!line_local("a\nb"));
        assert!(!line_local(r"x*"));
        assert!(!line_local(r"x$"));
        assert!(!line_local(r"(?Rm:x$)"));
        assert!(!line_local("("));
    }

    #[test]
    fn a_line_is_cut_at_its_breaks() {
        assert_eq!(line_around("ab\ncd\nef", 4), (3, 5));
        assert_eq!(line_around("ab\ncd\nef", 0), (0, 2));
        assert_eq!(line_around("ab\ncd\nef", 7), (6, 8));
        assert_eq!(line_around("ab\n", 2), (0, 2));
    }
}
