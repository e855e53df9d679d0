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
//! Speed: one [`regex::RegexSet`] pass finds which patterns match at all; only those run
//! their own replacing pass, so clean text costs one scan.

use std::borrow::Cow;
use std::collections::BTreeSet;

use regex::{Captures, RegexSet};

use crate::error::RedactionError;
use crate::literal::Literals;
use crate::rules::{Pattern, REDACT_GROUP, RedactionRules};

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
    set: RegexSet,
    allowed_fields: BTreeSet<String>,
    literals: Literals,
}

impl Redactor {
    /// A redactor applying `rules`' patterns in file order.
    #[must_use]
    pub fn new(rules: &RedactionRules) -> Self {
        Self {
            patterns: rules.patterns().to_vec(),
            set: rules.set().clone(),
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
        let mut hits = self.set.matches(&current);
        for (index, pattern) in self.patterns.iter().enumerate() {
            if !hits.matched(index) {
                continue;
            }
            let before = findings.len();
            let replaced = pattern
                .regex()
                .replace_all(&current, |caps: &Captures<'_>| {
                    if pattern.keeps(caps) {
                        return caps[0].to_owned();
                    }
                    findings.push(Finding {
                        rule: pattern.id().to_owned(),
                    });
                    replace_one(caps, pattern.placeholder())
                })
                .into_owned();
            if findings.len() > before {
                current = Cow::Owned(replaced);
                // A replacement can change what the later patterns see.
                hits = self.set.matches(&current);
            }
        }
        (current.into_owned(), findings)
    }
}

/// The replacement for one match: only the `redact` group when the pattern has one (so
/// the context the pattern needed to match is kept), else the whole match.
fn replace_one(caps: &Captures<'_>, placeholder: &str) -> String {
    let whole = &caps[0];
    match (caps.get(0), caps.name(REDACT_GROUP)) {
        (Some(m), Some(group)) => {
            let (start, end) = (group.start() - m.start(), group.end() - m.start());
            format!("{}{placeholder}{}", &whole[..start], &whole[end..])
        }
        _ => placeholder.to_owned(),
    }
}
