//! A pattern's pass with a prefilter of its own, where the one `regex` picks is weak.
//!
//! Why: `regex` finds where a match can start by the literals every match starts with,
//! cut down to a handful; for `pgpass-line` (`:5432:…`) that cut leaves `:` and `%`, so
//! the pass stops at each of the ~222,000 colons of 16 MiB of JSON prose (3.1 ms). The
//! same literals cut less (`:0` to `:9`, `:*`, `%3A0`, …, 33 of them) stop it at ~3,700
//! (1.5 ms). Which literals a match starts with is read from the syntax tree the way the
//! engine reads it, so the search finds the same matches: a prefilter only says where a
//! match may start, and every match starts with one of these literals.

use regex_automata::util::prefilter::Prefilter;
use regex_automata::{MatchKind, meta};
use regex_syntax::hir::Hir;
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};

/// How many start literals our prefilter may keep (the engine's own cut keeps more
/// candidates before it shortens them, then far fewer after).
const MAX_LITERALS: usize = 64;

/// `expression` compiled with a prefilter on its start literals kept at up to
/// [`MAX_LITERALS`], when their shortest is longer than in the engine's own choice (so
/// it stops at fewer places); `None` when the engine's own prefilter is as good.
pub(crate) fn pass(expression: &str, cache: usize) -> Option<meta::Regex> {
    let hir = regex_syntax::Parser::new().parse(expression).ok()?;
    let own = start_literals(&hir, None);
    let ours = start_literals(&hir, Some(MAX_LITERALS));
    let longer = ours.min_literal_len()? > own.min_literal_len().unwrap_or(0);
    let literals = ours.literals()?;
    if !longer || literals.is_empty() {
        return None;
    }
    let prefilter = Prefilter::new(MatchKind::LeftmostFirst, literals)?;
    meta::Regex::builder()
        .configure(
            meta::Regex::config()
                .prefilter(Some(prefilter))
                .hybrid_cache_capacity(cache),
        )
        .build(expression)
        .ok()
}

/// The literals every match of `hir` starts with, optimised as the engine does for a
/// leftmost-first prefilter (`regex-automata`'s `prefixes`), at most `limit` of them
/// before optimising (the engine's default when `None`).
fn start_literals(hir: &Hir, limit: Option<usize>) -> Seq {
    let mut extractor = Extractor::new();
    extractor.kind(ExtractKind::Prefix);
    if let Some(limit) = limit {
        extractor.limit_total(limit);
    }
    let mut seq = extractor.extract(hir);
    seq.optimize_for_prefix_by_preference();
    seq
}

#[cfg(test)]
mod tests {
    use super::*;

    const PGPASS: &str = r#"(?::[0-9]{2,5}|:\*|%3[Aa](?:[0-9]{2,5}|\*))(?::|%3[Aa])(?:[A-Za-z0-9_.-]+|\*)(?::|%3[Aa])(?:[A-Za-z0-9_.@-]+|\*)(?::|%3[Aa])(?P<redact>[^\s:"'\\&]{6,})"#;

    #[test]
    fn only_a_weak_default_prefilter_is_replaced() {
        assert!(pass(PGPASS, 1 << 20).is_some());
        // One good literal already: the engine's own prefilter stays.
        assert!(pass(r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}", 1 << 20).is_none());
        // No literal every match starts with: nothing to filter on.
        assert!(pass(r"[a-z]+", 1 << 20).is_none());
    }

    #[test]
    fn the_own_prefilter_finds_what_the_engine_finds() {
        let ours = pass(PGPASS, 1 << 20).unwrap();
        let engine = regex::Regex::new(PGPASS).unwrap();
        let text = "a:b \"x\":\"y\" db:5432:app:alice:pa55word and %3A5432%3Aapp%3Abob%3Ahunter22 *:*:*:*:secretsss";
        let spans = |caps: Vec<(usize, usize)>| caps;
        let ours: Vec<_> = ours
            .captures_iter(text)
            .filter_map(|c| c.get_group_by_name("redact"))
            .map(|s| (s.start, s.end))
            .collect();
        let engine: Vec<_> = engine
            .captures_iter(text)
            .filter_map(|c| c.name("redact"))
            .map(|m| (m.start(), m.end()))
            .collect();
        assert_eq!(spans(ours), engine);
        assert_eq!(engine.len(), 3);
    }
}
