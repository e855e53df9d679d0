//! [`Redactor`]: rewrites free text (transcripts, pane captures, request logs) so that no
//! pattern from the rules and no caller-supplied secret value survives, using stable
//! placeholders (`[HOME]`, `[SECRET:openai-key]`, `[SECRET:OPENAI_API_KEY]`).
//!
//! It is also the scanner behind [`crate::redact_summary`]: scanning is rewriting and
//! counting what was replaced, so the two can never disagree about what counts as a leak.
//!
//! A caller's literal secret is replaced in every spelling it can take in the text we
//! redact (raw, JSON-escaped to any depth, percent-encoded): see the `literal` module.
//!
//! Speed: each pattern's regex starts at (or contains) a literal, so the engine skips
//! clean text with literal searches instead of stepping a DFA over every byte. The
//! patterns whose every match starts with one of a few literals of three bytes or more
//! (27 of v4's 38) share a handful of vectorised scans of at most 64 literals each and
//! are tried only where one of their literals starts (the `starts` module; those
//! starts follow the text through each rewrite); every other pattern is one pass of its
//! own, skipped when the gate finds none of its trigger literals. Measured and
//! rejected: a `RegexSet` of all patterns (no prefilters) and one Aho-Corasick
//! automaton over every pattern's start literals (~200 literals defeat the vectorised
//! searcher: that one pass alone cost more than all the prefiltered ones). What is left to save is work per match and per
//! rewrite: the `unless_inside` shields are computed only for a match that `keep` and
//! `not_after` did not already leave alone (URL-dense prose has thousands of kept
//! matches), and only in that match's line when no shield can cross a line (the
//! `shield` module); a pattern whose default prefilter stops at too many places gets
//! one of its own (the `prefilter` module); and a pattern that rewrites the text writes into a buffer reused across
//! patterns instead of a fresh allocation the size of the text. The old path stays as
//! [`Redactor::rewrite_unfiltered`], the reference `tests/it/engine_identity.rs` compares
//! against.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::error::RedactionError;
use crate::literal::Literals;
use crate::pattern::Pattern;
use crate::rules::RedactionRules;
use crate::shield::Shields;
use crate::starts::Scans;
use crate::trigger;

/// The shortest secret value [`Redactor::with_secret`] accepts; a shorter literal (an env
/// value such as `1` or `true`) would shred ordinary text.
pub const MIN_SECRET_LEN: usize = 8;

/// One hit found while rewriting: which rule matched. Never holds the matched text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The pattern id, or `known-secret:<NAME>` for a caller-supplied value.
    pub rule: String,
}

/// Rewrites text with the rules' patterns plus literal secret values.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Vec<Pattern>,
    /// The shared start-literal scans of the patterns that have them (`crate::starts`).
    scans: Scans,
    allowed_fields: BTreeSet<String>,
    literals: Literals,
}

impl Redactor {
    /// A redactor applying `rules`' patterns in file order.
    #[must_use]
    pub fn new(rules: &RedactionRules) -> Self {
        Self {
            scans: Scans::new(rules.patterns()),
            patterns: rules.patterns().to_vec(),
            allowed_fields: rules.allowed_fields().clone(),
            literals: Literals::default(),
        }
    }

    /// Also replaces every occurrence of `value` with `[SECRET:<name>]` (e.g. the value
    /// of a credential env var, whatever its shape), in each of its spellings (raw,
    /// JSON-escaped to any depth, percent-encoded). Literals are applied before patterns.
    ///
    /// # Errors
    /// [`RedactionError::Secret`] when `name` is not `[A-Za-z0-9_-]+` or `value` is
    /// shorter than [`MIN_SECRET_LEN`]; the message names the secret, never its value.
    pub fn with_secret(mut self, name: &str, value: &str) -> Result<Self, RedactionError> {
        let bad = |detail: &str| RedactionError::Secret {
            name: name.to_owned(),
            detail: detail.to_owned(),
            min: MIN_SECRET_LEN,
        };
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(bad(
                "the name has characters outside letters, digits, `_`, `-`",
            ));
        }
        if value.chars().count() < MIN_SECRET_LEN {
            return Err(bad(
                "the value is too short to redact without shredding ordinary text",
            ));
        }
        // Escaped literals always compile; a failure here would be a size limit.
        self.literals
            .add(name, value)
            .map_err(|e| bad(&e.to_string()))?;
        Ok(self)
    }

    /// The top-level keys a summary may keep (from the rules).
    #[must_use]
    pub fn allowed_fields(&self) -> &BTreeSet<String> {
        &self.allowed_fields
    }

    /// `text` with every secret and pattern match replaced by its placeholder.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        self.rewrite(text).0
    }

    /// What [`Redactor::redact`] would replace in `text`, one finding per hit, in rule
    /// order; empty means the text is clean.
    #[must_use]
    pub fn findings(&self, text: &str) -> Vec<Finding> {
        self.rewrite(text).1
    }

    /// Rewrites `text` and reports every hit.
    ///
    /// Passes repeat until the text stops changing (at most [`MAX_PASSES`]): a
    /// replacement can destroy the context that kept another match (a `[HOME]` that
    /// eats the scheme of the URL shielding a later `/home/…`), and a redacted text must
    /// itself be clean, or what the judges and the leak scan read would differ from a
    /// second look at it. Clean text costs one pass; nothing is ever un-redacted.
    #[must_use]
    pub fn rewrite(&self, text: &str) -> (String, Vec<Finding>) {
        to_fixpoint(text, |t| self.rewrite_once(t))
    }

    /// One pass of the literals, then every pattern in rule order that can match: a
    /// grouped pattern (`crate::starts`) where one of its start literals occurs, tried
    /// only at those starts while the text is still the one scanned; any other where
    /// the gate arms it (`crate::trigger`: a pattern none of whose trigger literals is
    /// in the text cannot match it, so its pass is skipped).
    fn rewrite_once(&self, text: &str) -> (String, Vec<Finding>) {
        let (start, mut findings) = self.replace_literals(text);
        // The text so far and a spare buffer: a pattern that rewrites writes into the
        // spare, and the two swap, so the allocation is made at most twice per call.
        let (mut current, mut spare) = match start {
            Cow::Owned(owned) => (Some(owned), String::new()),
            Cow::Borrowed(_) => (None, String::new()),
        };
        let scanned = current.as_deref().unwrap_or(text);
        let mut starts = self.scans.find(scanned.as_bytes());
        // The gate asks only the patterns no scan covers.
        let (asked, triggers): (Vec<usize>, Vec<_>) = self
            .patterns
            .iter()
            .enumerate()
            .filter(|(i, _)| starts[*i].is_none())
            .map(|(i, p)| (i, (p.trigger.as_ref(), p.reach)))
            .unzip();
        let mut armed: Vec<bool> = starts
            .iter()
            .map(|s| s.as_ref().is_some_and(|s| !s.is_empty()))
            .collect();
        for (i, on) in asked.into_iter().zip(trigger::armed(scanned, &triggers)) {
            armed[i] = on;
        }
        let (mut replaced, mut inserted) = (Vec::new(), Vec::new());
        for (i, pattern) in self.patterns.iter().enumerate() {
            if !armed[i] {
                continue;
            }
            let text = current.as_deref().unwrap_or(text);
            replaced.clear();
            inserted.clear();
            let edits = (&mut replaced, &mut inserted);
            if rewrite_into(
                pattern,
                text,
                starts[i].as_deref(),
                &mut spare,
                &mut findings,
                edits,
            ) {
                let previous = current.replace(std::mem::take(&mut spare));
                spare = previous.unwrap_or_default();
                let now = current.as_deref().unwrap_or_default();
                // The later patterns' starts follow the text; a placeholder and its
                // neighbours can spell a later pattern's start or trigger: arm it then,
                // as the sequential reference would run it on this text.
                self.scans
                    .follow(now.as_bytes(), &replaced, &inserted, &mut starts, i + 1);
                let later = self.patterns.iter().zip(armed.iter_mut()).zip(&starts);
                for ((pattern, on), starts) in later.skip(i + 1) {
                    *on = match starts {
                        Some(starts) => !starts.is_empty(),
                        None => *on || trigger::found_near(pattern, now, &inserted),
                    };
                }
            }
        }
        (current.unwrap_or_else(|| text.to_owned()), findings)
    }

    /// [`Redactor::rewrite`] by one full pass of each pattern's own regex, without the
    /// shared prefilter: the reference the engine is proven identical against.
    #[doc(hidden)]
    #[must_use]
    pub fn rewrite_unfiltered(&self, text: &str) -> (String, Vec<Finding>) {
        to_fixpoint(text, |t| self.rewrite_unfiltered_once(t))
    }

    fn rewrite_unfiltered_once(&self, text: &str) -> (String, Vec<Finding>) {
        let (mut current, mut findings) = self.replace_literals(text);
        for pattern in &self.patterns {
            if let Some(replaced) = replace_pattern(pattern, &current, &mut findings) {
                current = Cow::Owned(replaced);
            }
        }
        (current.into_owned(), findings)
    }

    /// The caller's literal secrets replaced (they go first).
    fn replace_literals<'t>(&self, text: &'t str) -> (Cow<'t, str>, Vec<Finding>) {
        let mut findings = Vec::new();
        let current = self.literals.replace(text, |name| {
            findings.push(Finding {
                rule: format!("known-secret:{name}"),
            });
        });
        (current, findings)
    }
}

/// Byte spans, in order.
type Spans = Vec<(usize, usize)>;

/// How many whole passes [`Redactor::rewrite`] makes at most. Each pass after the first
/// runs only when the one before replaced something, and placeholders never match a
/// rule, so real text settles in two; the bound only stops a rule set that would not.
pub const MAX_PASSES: usize = 4;

/// Applies `pass` until its output equals its input (or [`MAX_PASSES`]), collecting
/// every pass's findings.
fn to_fixpoint(
    text: &str,
    pass: impl Fn(&str) -> (String, Vec<Finding>),
) -> (String, Vec<Finding>) {
    let (mut current, mut findings) = pass(text);
    for _ in 1..MAX_PASSES {
        if findings.is_empty() {
            break;
        }
        let (next, more) = pass(&current);
        if more.is_empty() || next == current {
            break;
        }
        current = next;
        findings.extend(more);
    }
    (current, findings)
}

/// `text` with every match of `pattern` that is not kept rewritten (only the `redact`
/// group when the pattern has one, so the context it needed to match stays), or `None`
/// when nothing is replaced: kept matches (URLs, placeholders) cost no copy. The
/// released path, kept as the reference for [`Redactor::rewrite_unfiltered`].
fn replace_pattern(pattern: &Pattern, text: &str, findings: &mut Vec<Finding>) -> Option<String> {
    // Computed on the first match only: most patterns never match most text.
    let mut shields = None;
    let mut out: Option<String> = None;
    let mut copied = 0;
    for part in pattern.targets(text) {
        let shields = shields.get_or_insert_with(|| pattern.shields(text));
        if pattern.keeps(part, text, shields) {
            continue;
        }
        let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
        buf.push_str(&text[copied..part.start()]);
        buf.push_str(pattern.placeholder());
        copied = part.end();
        findings.push(Finding {
            rule: pattern.id().to_owned(),
        });
    }
    out.map(|mut buf| {
        buf.push_str(&text[copied..]);
        buf
    })
}

/// [`replace_pattern`] (its matches found from `starts` when given, `crate::starts`)
/// writing into `out` (cleared first, its capacity reused) and
/// looking for shields only for a match nothing else keeps, and only in its line where
/// the shield allows (`crate::shield`), and recording each replaced span of `text` and
/// where its placeholder landed in `out`; `false` (and `out` left empty) when nothing
/// is replaced.
fn rewrite_into(
    pattern: &Pattern,
    text: &str,
    starts: Option<&[usize]>,
    out: &mut String,
    findings: &mut Vec<Finding>,
    (replaced, inserted): (&mut Spans, &mut Spans),
) -> bool {
    out.clear();
    let mut shields = Shields::default();
    let mut copied = 0;
    let targets = match starts {
        Some(starts) => pattern.targets_from(text, starts),
        None => pattern.pass_targets(text),
    };
    for part in targets {
        if pattern.keeps_unshielded(part, text) || shields.cover(pattern, text, part) {
            continue;
        }
        if replaced.is_empty() {
            out.reserve(text.len());
        }
        out.push_str(&text[copied..part.0]);
        let at = out.len();
        out.push_str(pattern.placeholder());
        replaced.push(part);
        inserted.push((at, out.len()));
        copied = part.1;
        findings.push(Finding {
            rule: pattern.id().to_owned(),
        });
    }
    if !replaced.is_empty() {
        out.push_str(&text[copied..]);
    }
    !replaced.is_empty()
}
