//! A pattern's trigger: a set of literals at least one of which every match of the
//! pattern contains, read from the pattern's syntax tree (so it cannot disagree with the
//! regex), and the gate that uses them to skip the patterns a text cannot match.
//!
//! Why: the redactor runs each pattern as its own pass, and each pass streams the whole
//! text through its prefilter; with ~36 patterns that streaming, not matching, is what
//! clean text costs. The gate asks each pattern's trigger once per cache-sized block
//! instead (a literal search on bytes already in cache), stops asking once a pattern is
//! armed, and only armed patterns run their pass. A pattern whose trigger cannot be read
//! (no literal every match needs) is always armed, so skipping is never a guess: a
//! pattern is skipped only when text holds none of the literals its every match holds.

use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use regex_syntax::hir::{Hir, HirKind};

use crate::pattern::Pattern;

/// The block the gate searches at a time: small enough to stay in L2 while every
/// unarmed trigger is asked about it.
const BLOCK: usize = 128 << 10;
/// More literals than this and a trigger search stops being a vectorised scan.
const MAX_LITERALS: usize = 64;

/// The literals of `pattern` every match contains, as one literal-alternation regex, or
/// `None` when no such set was found (then the pattern always runs).
pub(crate) fn trigger(pattern: &str) -> Option<Regex> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let seq = required(&hir)?;
    alternation(seq.literals()?.iter().map(|lit| lit.as_bytes()))
}

/// `literals` as one literal-alternation regex (`None` when one is not UTF-8).
pub(crate) fn alternation<'l>(literals: impl IntoIterator<Item = &'l [u8]>) -> Option<Regex> {
    let alternation = literals
        .into_iter()
        .map(|lit| std::str::from_utf8(lit).map(regex::escape))
        .collect::<Result<Vec<_>, _>>()
        .ok()?
        .join("|");
    RegexBuilder::new(&alternation).unicode(false).build().ok()
}

/// The longest literal any trigger has, so a block search can overlap the next block
/// by that much and miss no literal cut by a block boundary.
pub(crate) fn overlap(trigger: &Regex) -> usize {
    // Escaped literals joined by `|`: the longest escaped part bounds the literal.
    trigger.as_str().split('|').map(str::len).max().unwrap_or(0)
}

/// Which of `triggers` occur in `text` (`None`: always armed), searched block by block.
pub(crate) fn armed(text: &str, triggers: &[(Option<&Regex>, usize)]) -> Vec<bool> {
    let bytes = text.as_bytes();
    let mut armed: Vec<bool> = triggers.iter().map(|(t, _)| t.is_none()).collect();
    let mut left = armed.iter().filter(|a| !**a).count();
    let mut start = 0;
    while left > 0 && start < bytes.len() {
        let end = (start + BLOCK).min(bytes.len());
        for (i, (trigger, reach)) in triggers.iter().enumerate() {
            if armed[i] {
                continue;
            }
            let Some(trigger) = trigger else { continue };
            let window = &bytes[start..(end + reach).min(bytes.len())];
            if trigger.is_match(window) {
                armed[i] = true;
                left -= 1;
            }
        }
        start = end;
    }
    armed
}

/// Whether `pattern`'s trigger occurs in `text` within its reach of one of the
/// `inserted` spans (placeholders just written): the only places a rewrite can create
/// a literal that was not there before.
pub(crate) fn found_near(pattern: &Pattern, text: &str, inserted: &[(usize, usize)]) -> bool {
    let Some(trigger) = &pattern.trigger else {
        return true;
    };
    let bytes = text.as_bytes();
    inserted.iter().any(|&(start, end)| {
        let from = start.saturating_sub(pattern.reach);
        let to = (end + pattern.reach).min(bytes.len());
        trigger.is_match(&bytes[from..to])
    })
}

/// A literal set every match of `hir` contains one of: for a concatenation, the best
/// set of any of its parts (each part is matched inside the whole); for an alternation,
/// the union of each branch's set (all branches need one); else the prefix literals.
fn required(hir: &Hir) -> Option<Seq> {
    let own = usable(Extractor::new().kind(ExtractKind::Prefix).extract(hir));
    let inner = match hir.kind() {
        HirKind::Capture(capture) => required(&capture.sub),
        HirKind::Repetition(rep) if rep.min >= 1 => required(&rep.sub),
        HirKind::Concat(parts) => parts.iter().filter_map(required).max_by_key(score),
        HirKind::Alternation(branches) => {
            let mut union = Seq::empty();
            for branch in branches {
                union.union(&mut required(branch)?);
            }
            usable(union)
        }
        _ => None,
    };
    [own, inner].into_iter().flatten().max_by_key(score)
}

/// `seq` if it can serve as a trigger: finite, no empty literal, few enough literals.
fn usable(mut seq: Seq) -> Option<Seq> {
    seq.dedup();
    let literals = seq.literals()?;
    let ok = !literals.is_empty()
        && literals.len() <= MAX_LITERALS
        && literals.iter().all(|lit| !lit.is_empty());
    ok.then_some(seq)
}

/// Longer shortest literal first (rarer in text), then fewer literals.
fn score(seq: &Seq) -> (usize, std::cmp::Reverse<usize>) {
    (
        seq.min_literal_len().unwrap_or(0),
        std::cmp::Reverse(seq.len().unwrap_or(usize::MAX)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literals(pattern: &str) -> Option<Vec<String>> {
        let t = trigger(pattern)?;
        let mut out: Vec<String> = t.as_str().split('|').map(str::to_owned).collect();
        out.sort();
        Some(out)
    }

    #[test]
    fn a_trigger_is_a_literal_every_match_holds() {
        assert_eq!(literals(r"(?-u:\b)ghp_[A-Za-z0-9]{30,}").unwrap(), ["ghp_"]);
        // An inner literal when the prefix is a class.
        assert_eq!(
            literals(r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}").unwrap(),
            [":AA"]
        );
        // A union when every branch has one.
        assert_eq!(
            literals(r"(?:AKIA|ASIA)[A-Z0-9]{16}").unwrap(),
            ["AKIA", "ASIA"]
        );
        // Inside the redact group.
        assert!(
            literals(r"(?P<redact>/root)(?:$|/)")
                .unwrap()
                .contains(&"/root".to_owned())
        );
    }

    #[test]
    fn no_trigger_when_some_match_needs_no_literal() {
        assert_eq!(literals(r"[a-z]+|ghp_x"), None);
        assert_eq!(literals(r"(?:x)?[a-z]+"), None);
        // Every match holds a digit: the ten digits are its trigger.
        assert_eq!(literals(r"(?:x)?[0-9]+").map(|l| l.len()), Some(10));
    }

    #[test]
    fn a_literal_cut_by_a_block_boundary_is_found() {
        let t = trigger("AKIA").unwrap();
        let mut text = "x".repeat(BLOCK - 2);
        text.push_str("AKIA");
        assert_eq!(armed(&text, &[(Some(&t), overlap(&t))]), [true]);
        assert_eq!(
            armed(&"x".repeat(3 * BLOCK), &[(Some(&t), overlap(&t))]),
            [false]
        );
        assert_eq!(armed("", &[(None, 0)]), [true]);
    }
}
