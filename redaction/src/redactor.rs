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
//! Speed: each pattern is one pass whose regex starts at (or contains) a literal, so the
//! engine skips clean text with a literal prefilter instead of stepping a DFA over every
//! byte (a `RegexSet` of all patterns cannot use prefilters and measured slower).

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::error::RedactionError;
use crate::literal::Literals;
use crate::rules::{Pattern, RedactionRules};

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
    allowed_fields: BTreeSet<String>,
    literals: Literals,
}

impl Redactor {
    /// A redactor applying `rules`' patterns in file order.
    #[must_use]
    pub fn new(rules: &RedactionRules) -> Self {
        Self {
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
    #[must_use]
    pub fn rewrite(&self, text: &str) -> (String, Vec<Finding>) {
        let mut findings = Vec::new();
        let mut current = Cow::Borrowed(text);
        if let Cow::Owned(replaced) = self.literals.replace(text, |name| {
            findings.push(Finding {
                rule: format!("known-secret:{name}"),
            });
        }) {
            current = Cow::Owned(replaced);
        }
        for pattern in &self.patterns {
            if let Some(replaced) = replace_pattern(pattern, &current, &mut findings) {
                current = Cow::Owned(replaced);
            }
        }
        (current.into_owned(), findings)
    }
}

/// `text` with every match of `pattern` that is not kept rewritten (only the `redact`
/// group when the pattern has one, so the context it needed to match stays), or `None`
/// when nothing is replaced: kept matches (URLs, placeholders) cost no copy.
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
