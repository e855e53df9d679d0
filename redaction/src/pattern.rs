//! [`Pattern`]: one compiled detection rule (built by the rules loader in `rules`) and
//! the questions the redactor asks of it: where its matches are, which part of a match
//! is replaced, and whether a match is left alone (`keep`, `not_after`,
//! `unless_inside`). Split from `rules` so each file reads on its own: this one is the
//! matching, that one the loading and pin checks.

use regex::Regex;

/// The only named capture group a pattern may use: the part of a match to replace.
pub const REDACT_GROUP: &str = "redact";

/// One detection pattern: what it finds and what replaces it.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub(crate) id: String,
    pub(crate) description: String,
    pub(crate) regex: Regex,
    /// `regex` with a prefilter of its own (`crate::prefilter`), for the redactor's pass;
    /// `None`: the pass uses `regex`.
    pub(crate) pass: Option<regex_automata::meta::Regex>,
    /// Anchored: a match whose replaced part this matches whole is left alone.
    pub(crate) keep: Option<Regex>,
    /// A match whose replaced part lies inside a match of this is left alone.
    pub(crate) unless_inside: Option<Regex>,
    /// `unless_inside` can be searched one line at a time (`crate::shield`).
    pub(crate) shield_by_line: bool,
    /// Anchored single-character class: a match whose replaced part comes right after
    /// such a character is left alone (a lookbehind the `regex` crate does not have).
    pub(crate) not_after: Option<Regex>,
    pub(crate) placeholder: String,
    /// The literals every match starts with, when this pattern's starts are found by a
    /// shared scan (`crate::starts`); `None`: it has a pass of its own.
    pub(crate) starts: Option<Vec<Vec<u8>>>,
    /// `regex` for anchored searches at those starts (`Some` exactly when `starts` is).
    pub(crate) anchored: Option<regex_automata::meta::Regex>,
    /// Literals every match contains (`crate::trigger`; its start literals when
    /// `starts` is set, so a rewrite that creates a start arms it); `None`: always run.
    pub(crate) trigger: Option<regex::bytes::Regex>,
    /// How far a trigger literal can reach past a block boundary.
    pub(crate) reach: usize,
}

impl Pattern {
    /// The stable id named in violations, e.g. `openai-key`.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }
    /// One line on what the pattern catches.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }
    /// The compiled expression (linear-time `regex` crate).
    #[must_use]
    pub fn regex(&self) -> &Regex {
        &self.regex
    }
    /// The text that replaces a match, e.g. `[SECRET:openai-key]`.
    #[must_use]
    pub fn placeholder(&self) -> &str {
        &self.placeholder
    }
    /// The spans of `text` this pattern's matches are left alone in (its
    /// `unless_inside` matches, e.g. http(s) URLs for the home-path rules), in order.
    #[must_use]
    pub fn shields(&self, text: &str) -> Vec<(usize, usize)> {
        self.unless_inside.as_ref().map_or_else(Vec::new, |shield| {
            shield
                .find_iter(text)
                .map(|m| (m.start(), m.end()))
                .collect()
        })
    }
    /// Whether a match in `text` is to be left alone: its replaced part is wholly matched
    /// by the pattern's `keep` expression (a placeholder value, a plain word), comes right
    /// after a `not_after` character, or lies inside one of `shields` (from
    /// [`Pattern::shields`] of the same text).
    #[must_use]
    pub fn keeps(&self, part: regex::Match<'_>, text: &str, shields: &[(usize, usize)]) -> bool {
        let part = (part.start(), part.end());
        self.keeps_unshielded(part, text) || shielded(part, shields)
    }
    /// The part of [`Pattern::keeps`] that needs no shields: `keep` or `not_after`.
    pub(crate) fn keeps_unshielded(&self, (start, end): (usize, usize), text: &str) -> bool {
        let kept = self
            .keep
            .as_ref()
            .is_some_and(|keep| keep.is_match(&text[start..end]));
        kept || self.not_after.as_ref().is_some_and(|class| {
            text[..start]
                .chars()
                .next_back()
                .is_some_and(|c| class.is_match(c.encode_utf8(&mut [0; 4])))
        })
    }
    /// Whether `text` holds at least one match this pattern would replace.
    #[must_use]
    pub fn finds(&self, text: &str) -> bool {
        let shields = self.shields(text);
        self.targets(text)
            .any(|part| !self.keeps(part, text, &shields))
    }
    /// The replaced part of every match in `text`, in order: the `redact` group where
    /// the pattern has one (the slower capture engine runs only then), else the match.
    pub fn targets<'a, 't: 'a>(
        &'a self,
        text: &'t str,
    ) -> Box<dyn Iterator<Item = regex::Match<'t>> + 'a> {
        if self
            .regex
            .capture_names()
            .flatten()
            .any(|n| n == REDACT_GROUP)
        {
            Box::new(
                self.regex
                    .captures_iter(text)
                    .filter_map(|caps| caps.name(REDACT_GROUP)),
            )
        } else {
            Box::new(self.regex.find_iter(text))
        }
    }
}

impl Pattern {
    /// [`Pattern::targets`] as spans, searched with the pass's own prefilter where the
    /// pattern has one: the same spans either way.
    pub(crate) fn pass_targets<'a, 't: 'a>(
        &'a self,
        text: &'t str,
    ) -> Box<dyn Iterator<Item = (usize, usize)> + 'a> {
        let Some(pass) = &self.pass else {
            return Box::new(self.targets(text).map(|m| (m.start(), m.end())));
        };
        if pass
            .group_info()
            .to_index(regex_automata::PatternID::ZERO, REDACT_GROUP)
            .is_some()
        {
            Box::new(
                pass.captures_iter(text)
                    .filter_map(|caps| caps.get_group_by_name(REDACT_GROUP))
                    .map(|span| (span.start, span.end)),
            )
        } else {
            Box::new(pass.find_iter(text).map(|m| (m.start(), m.end())))
        }
    }
}

/// Whether `text[start..end]` lies inside one of `shields`.
pub(crate) fn shielded((start, end): (usize, usize), shields: &[(usize, usize)]) -> bool {
    let at = shields.partition_point(|&(from, _)| from <= start);
    at > 0 && shields[at - 1].1 >= end
}
