//! Shared start-literal scans: the patterns whose every match starts with one of a few
//! literals of three bytes or more are searched together, a few dozen literals per
//! vectorised (Teddy) scan, and each such pattern is then tried only where one of its
//! own literals starts (an anchored search there), instead of streaming the whole text
//! through a prefilter of its own.
//!
//! Why: with ~38 patterns, one literal scan of the text per pattern was the floor of the
//! engine (`docs/measurements.md`, fourth pass: ~0.5-4.5 ms each per 16 MiB of prose,
//! 45 ms together for the 27 patterns this module takes). One Aho-Corasick automaton
//! over all ~200 of their literals is slower still (35 ms, no vectorised searcher takes
//! that many), but packed Teddy scans of at most [`GROUP`] literals each find every
//! start of all of them in ~17 ms.
//!
//! A rewrite by one pattern moves the text under the later ones: their starts follow it
//! ([`Scans::follow`]) instead of a new scan, so a text with secrets keeps the shared
//! scans too.
//!
//! Why the positions are exact: a match of a grouped pattern starts where one of its
//! start literals does (read from its syntax tree as the engine reads it), so the
//! leftmost match at or after a position is the first anchored match at the first such
//! start there; the pass below walks the starts in order as `find_iter` walks the text.
//! A scan reports, at each position where some literal of a group starts, the longest
//! one there (leftmost-longest, restarted one byte on, so overlapping starts are all
//! seen); every other literal of the group starting there is a prefix of it, so the
//! position belongs to each pattern owning a prefix of the reported literal.

use aho_corasick::Span;
use aho_corasick::packed::{Config, MatchKind, Searcher};
use regex_automata::{Anchored, Input, PatternID, meta};
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use crate::pattern::{Pattern, REDACT_GROUP};

/// The shortest start literal a grouped pattern may have: a one- or two-byte literal
/// (`A`, `gh`, `:`) starts at a large share of the text's bytes and would turn the
/// scan into a byte-by-byte walk.
const MIN_LEN: usize = 3;
/// The most start literals one pattern may bring to a scan.
const MAX_LITERALS: usize = 64;
/// The most literals in one scan (measured on 16 MiB of prose, all grouped patterns'
/// starts: groups of 8 cost 23 ms, of 24-32 16-17 ms, of 48-64 17 ms; of 128, which
/// no Teddy takes, 60-70 ms).
pub(crate) const GROUP: usize = 64;

/// The literals every match of `expression` starts with (optimised as the engine does
/// for its prefilter, so a literal may be cut to a prefix of the real start), when
/// there are at most [`MAX_LITERALS`] of them and each is at least [`MIN_LEN`] bytes;
/// `None`: the pattern keeps a pass of its own.
pub(crate) fn literals(expression: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::Parser::new().parse(expression).ok()?;
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    let mut seq = extractor.extract(&hir);
    seq.optimize_for_prefix_by_preference();
    let literals = seq.literals()?;
    let usable = !literals.is_empty()
        && literals.len() <= MAX_LITERALS
        && literals.iter().all(|lit| lit.len() >= MIN_LEN);
    usable.then(|| literals.iter().map(|lit| lit.as_bytes().to_vec()).collect())
}

/// `expression` compiled for anchored searches at a start (no prefilter is ever asked).
pub(crate) fn anchored(expression: &str, cache: usize) -> Option<meta::Regex> {
    meta::Regex::builder()
        .configure(meta::Regex::config().hybrid_cache_capacity(cache))
        .build(expression)
        .ok()
}

/// The scans of one redactor's grouped patterns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scans {
    groups: Vec<Group>,
    /// Per pattern (rule order): whether one of `groups` finds its starts.
    grouped: Vec<bool>,
}

/// One scan: its searcher, and for each of its literals (by the searcher's pattern id)
/// the patterns that own a prefix of it, so start there.
#[derive(Debug, Clone)]
struct Group {
    searcher: Searcher,
    owners: Vec<Vec<usize>>,
    /// Its longest literal's length.
    longest: usize,
}

impl Scans {
    /// The scans for `patterns`, packed in rule order, each of at most [`GROUP`]
    /// literals ([`MAX_LITERALS`] per pattern, so one pattern always fits).
    pub(crate) fn new(patterns: &[Pattern]) -> Self {
        let mut scans = Self {
            groups: Vec::new(),
            grouped: vec![false; patterns.len()],
        };
        let mut members: Vec<usize> = Vec::new();
        let mut size = 0;
        for (i, pattern) in patterns.iter().enumerate() {
            let Some(starts) = &pattern.starts else {
                continue;
            };
            if size + starts.len() > GROUP && !members.is_empty() {
                scans.add(patterns, &members);
                (members, size) = (Vec::new(), 0);
            }
            members.push(i);
            size += starts.len();
        }
        if !members.is_empty() {
            scans.add(patterns, &members);
        }
        scans
    }

    /// A scan of `members`' literals; when no packed searcher can be built for them
    /// (no vector instructions), they keep their own passes.
    fn add(&mut self, patterns: &[Pattern], members: &[usize]) {
        let mut literals: Vec<&[u8]> = members
            .iter()
            .filter_map(|&i| patterns[i].starts.as_ref())
            .flatten()
            .map(Vec::as_slice)
            .collect();
        literals.sort_unstable();
        literals.dedup();
        let mut config = Config::new();
        config
            .match_kind(MatchKind::LeftmostLongest)
            .heuristic_pattern_limits(false);
        let mut builder = config.builder();
        builder.extend(literals.iter().copied());
        let Some(searcher) = builder.build() else {
            return;
        };
        let owners = literals
            .iter()
            .map(|literal| {
                members
                    .iter()
                    .copied()
                    .filter(|&i| {
                        patterns[i]
                            .starts
                            .iter()
                            .flatten()
                            .any(|own| literal.starts_with(own))
                    })
                    .collect()
            })
            .collect();
        for &i in members {
            self.grouped[i] = true;
        }
        let longest = literals.iter().map(|l| l.len()).max().unwrap_or(0);
        self.groups.push(Group {
            searcher,
            owners,
            longest,
        });
    }

    /// Per pattern (rule order): every position of `text` where one of its start
    /// literals begins, ascending, or `None` for a pattern no scan covers.
    pub(crate) fn find(&self, text: &[u8]) -> Vec<Option<Vec<usize>>> {
        let mut found: Vec<Option<Vec<usize>>> = self
            .grouped
            .iter()
            .map(|&grouped| grouped.then(Vec::new))
            .collect();
        for group in &self.groups {
            group.find(text, (0, text.len()), None, &mut found);
        }
        found
    }

    /// Moves `starts` (from [`Scans::find`] or an earlier call) from the text before a
    /// rewrite to `text`, the text after it, for the patterns from `first` on: a start
    /// before, between or after the `replaced` spans (old text) moves with the text
    /// around it, a start inside one is gone, and the starts a placeholder creates (each
    /// `inserted` span, new text, with the literals that can reach into it) are added.
    /// The same starts as a fresh [`Scans::find`] of `text` would give, or more: a kept
    /// start whose literal ran into a replaced span may no longer be one, and its
    /// anchored search then fails there as it would anywhere.
    pub(crate) fn follow(
        &self,
        text: &[u8],
        replaced: &[(usize, usize)],
        inserted: &[(usize, usize)],
        starts: &mut [Option<Vec<usize>>],
        first: usize,
    ) {
        for list in starts.iter_mut().skip(first).flatten() {
            let (mut edit, mut shift) = (0, 0isize);
            list.retain_mut(|start| {
                while edit < replaced.len() && replaced[edit].1 <= *start {
                    let old = replaced[edit].1 - replaced[edit].0;
                    let new = inserted[edit].1 - inserted[edit].0;
                    shift += new.cast_signed() - old.cast_signed();
                    edit += 1;
                }
                if edit < replaced.len() && replaced[edit].0 <= *start {
                    return false;
                }
                *start = start.cast_signed().wrapping_add(shift).cast_unsigned();
                true
            });
        }
        let mut added: Vec<Option<Vec<usize>>> = vec![None; starts.len()];
        for group in &self.groups {
            for &(from, to) in inserted {
                let window = (
                    from.saturating_sub(group.longest.saturating_sub(1)),
                    (to + group.longest.saturating_sub(1)).min(text.len()),
                );
                group.find(text, window, Some(to), &mut added);
            }
        }
        for (i, new) in added.into_iter().enumerate().skip(first) {
            if let (Some(mut new), Some(list)) = (new, &mut starts[i]) {
                // Few new starts into many kept ones: sort the few, merge the two.
                new.sort_unstable();
                *list = merged(list, &new);
            }
        }
    }
}

/// The union of two ascending lists, ascending, each position once.
fn merged(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x <= y => {
                i += 1;
                j += usize::from(x == y);
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => break,
        };
        if out.last() != Some(&next) {
            out.push(next);
        }
    }
    out
}

impl Group {
    /// Every start in `text[window]` of this group's literals (only those before
    /// `before` when given), pushed to each owner's list (`found` entries that are
    /// `None` get one).
    fn find(
        &self,
        text: &[u8],
        (from, to): (usize, usize),
        before: Option<usize>,
        found: &mut [Option<Vec<usize>>],
    ) {
        let before = before.unwrap_or(to);
        let mut at = from;
        while let Some(hit) = self.searcher.find_in(text, Span::from(at..to)) {
            if hit.start() >= before {
                break;
            }
            for &owner in &self.owners[hit.pattern().as_usize()] {
                found[owner].get_or_insert_with(Vec::new).push(hit.start());
            }
            at = hit.start() + 1;
        }
    }
}

impl Pattern {
    /// [`Pattern::targets`] as spans, found by anchored searches at `starts` (every
    /// position where a match of this pattern can start, ascending): the same spans as
    /// the whole-text pass. Falls back to that pass for a pattern without an anchored
    /// regex.
    pub(crate) fn targets_from<'a>(
        &'a self,
        text: &'a str,
        starts: &'a [usize],
    ) -> Box<dyn Iterator<Item = (usize, usize)> + 'a> {
        let Some(anchored) = &self.anchored else {
            return self.pass_targets(text);
        };
        let redact = anchored
            .group_info()
            .to_index(PatternID::ZERO, REDACT_GROUP);
        let mut caps = anchored.create_captures();
        // Where `find_iter` would search next: a match's end (no match is empty, each
        // starts with a literal).
        let mut from = 0;
        let mut starts = starts.iter();
        Box::new(std::iter::from_fn(move || {
            for &start in starts.by_ref() {
                if start < from {
                    continue;
                }
                let input = Input::new(text).range(start..).anchored(Anchored::Yes);
                let Some(index) = redact else {
                    let Some(found) = anchored.search(&input) else {
                        continue;
                    };
                    from = found.end();
                    return Some((found.start(), found.end()));
                };
                anchored.search_captures(&input, &mut caps);
                let Some(found) = caps.get_match() else {
                    continue;
                };
                from = found.end();
                if let Some(part) = caps.get_group(index) {
                    return Some((part.start, part.end));
                }
            }
            None
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(literals: Option<Vec<Vec<u8>>>) -> Option<Vec<String>> {
        literals.map(|l| {
            l.into_iter()
                .map(|b| String::from_utf8(b).unwrap())
                .collect()
        })
    }

    #[test]
    fn only_patterns_with_few_long_start_literals_are_grouped() {
        assert_eq!(
            strings(literals(r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}")).unwrap(),
            ["sk-ant-"]
        );
        assert_eq!(
            strings(literals(r"(?:bearer|Bearer)\s+x")).unwrap(),
            ["bearer", "Bearer"]
        );
        // One- and two-byte starts, no start literal, and an empty start are refused.
        assert_eq!(literals(r"(?:AKIA|ASIA)[A-Z0-9]{16}"), None);
        assert_eq!(literals(r"gh[pousr]_[A-Za-z0-9]{30,}"), None);
        assert_eq!(literals(r"[0-9]{8,10}:AA"), None);
        assert_eq!(literals(r"[a-z]+x"), None);
        assert_eq!(literals(r"x*abc"), None);
        assert_eq!(literals("("), None);
    }

    /// Pieces dense in overlapping start literals of the current rules.
    const PIECES: &[&str] = &[
        "sk-",
        "sk-ant-",
        "sk_live_",
        "to",
        "ken",
        "token",
        "Token",
        "secret",
        "-----BEGIN",
        "-----",
        "BEGIN",
        "/home/",
        "/ho",
        "me/",
        "://",
        "bearer",
        "Bearer ",
        "api_key",
        "xoxb-",
        "xo",
        "xb-",
        "eyJ",
        "ey",
        "J",
        "machine",
        "AccountKey",
        " ",
        "=",
        ":",
        "\n",
        "é",
        "[SECRET:x]",
        "a",
        "PRIVATE",
    ];

    /// A small deterministic generator (the lib tests have no corpus `Rng`).
    fn draw(state: &mut u64, below: usize) -> usize {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(*state >> 33).unwrap() % below
    }

    fn text(state: &mut u64) -> String {
        (0..draw(state, 60))
            .map(|_| PIECES[draw(state, PIECES.len())])
            .collect()
    }

    /// Every position where one of `pattern`'s start literals begins, by brute force.
    fn naive(pattern: &Pattern, text: &[u8]) -> Vec<usize> {
        let starts = pattern.starts.as_ref().unwrap();
        (0..text.len())
            .filter(|&at| starts.iter().any(|lit| text[at..].starts_with(lit)))
            .collect()
    }

    fn patterns() -> Vec<Pattern> {
        crate::RedactionRules::load_shipped(crate::CURRENT_VERSION)
            .unwrap()
            .patterns()
            .to_vec()
    }

    #[test]
    fn a_scan_finds_every_start_of_every_grouped_pattern() {
        let patterns = patterns();
        let scans = Scans::new(&patterns);
        assert!(
            scans.groups.len() > 1,
            "one group would not test the packing"
        );
        assert!(patterns.iter().filter(|p| p.starts.is_some()).count() > 20);
        let mut state = 7;
        for _ in 0..300 {
            let text = text(&mut state);
            let found = scans.find(text.as_bytes());
            for (pattern, starts) in patterns.iter().zip(&found) {
                match starts {
                    Some(starts) => {
                        assert_eq!(*starts, naive(pattern, text.as_bytes()), "{}", pattern.id);
                    }
                    None => assert!(pattern.starts.is_none(), "{}", pattern.id),
                }
            }
        }
    }

    #[test]
    fn starts_followed_through_a_rewrite_hold_every_fresh_start() {
        let patterns = patterns();
        let scans = Scans::new(&patterns);
        let mut state = 11;
        for _ in 0..300 {
            let old = text(&mut state);
            let mut starts = scans.find(old.as_bytes());
            // Replace a few random spans (cut at char boundaries) with placeholders.
            let (mut new, mut replaced, mut inserted, mut copied) =
                (String::new(), Vec::new(), Vec::new(), 0);
            while copied < old.len() {
                let from = copied + draw(&mut state, 12);
                let to = from + 1 + draw(&mut state, 10);
                if to > old.len() || !old.is_char_boundary(from) || !old.is_char_boundary(to) {
                    break;
                }
                new.push_str(&old[copied..from]);
                let at = new.len();
                new.push_str(["[HOME]", "sk-", "x", "[SECRET:token]"][draw(&mut state, 4)]);
                (replaced, inserted) = (
                    [replaced, vec![(from, to)]].concat(),
                    [inserted, vec![(at, new.len())]].concat(),
                );
                copied = to;
            }
            new.push_str(&old[copied.min(old.len())..]);
            let first = draw(&mut state, patterns.len());
            scans.follow(new.as_bytes(), &replaced, &inserted, &mut starts, first);
            let fresh = scans.find(new.as_bytes());
            for (i, (followed, fresh)) in starts.iter().zip(&fresh).enumerate().skip(first) {
                let (Some(followed), Some(fresh)) = (followed, fresh) else {
                    assert_eq!(followed.is_some(), fresh.is_some());
                    continue;
                };
                assert!(followed.windows(2).all(|w| w[0] < w[1]), "unsorted");
                for start in fresh {
                    assert!(
                        followed.contains(start),
                        "{}: start {start} of {new:?} lost (old {old:?})",
                        patterns[i].id
                    );
                }
                assert!(followed.iter().all(|&s| s < new.len()));
            }
        }
    }
}
