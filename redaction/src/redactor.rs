//! [`Redactor`]: rewrites free text (transcripts, pane captures, request logs) so that no
//! pattern from the rules and no caller-supplied secret value survives, using stable
//! placeholders (`[HOME]`, `[SECRET:openai-key]`, `[SECRET:OPENAI_API_KEY]`).
//!
//! It is also the scanner behind [`crate::redact_summary`]: scanning is rewriting and
//! counting what was replaced, so the two can never disagree about what counts as a leak.

use std::borrow::Cow;
use std::collections::BTreeSet;

use regex::{Captures, Regex};

use crate::error::RedactionError;
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
    allowed_fields: BTreeSet<String>,
    /// (name, value), longest value first so an overlapping shorter one never wins.
    secrets: Vec<(String, String)>,
    literal: Option<Regex>,
}

impl Redactor {
    /// A redactor applying `rules`' patterns in file order.
    #[must_use]
    pub fn new(rules: &RedactionRules) -> Self {
        Self {
            patterns: rules.patterns().to_vec(),
            allowed_fields: rules.allowed_fields().clone(),
            secrets: Vec::new(),
            literal: None,
        }
    }

    /// Also replaces every occurrence of `value` with `[SECRET:<name>]` (e.g. the value
    /// of a credential env var, whatever its shape). Literals are applied before patterns.
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
        if !self.secrets.iter().any(|(_, v)| v == value) {
            self.secrets.push((name.to_owned(), value.to_owned()));
            self.secrets
                .sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        }
        let alternation = self
            .secrets
            .iter()
            .map(|(_, v)| regex::escape(v))
            .collect::<Vec<_>>()
            .join("|");
        // Escaped literals always compile; a failure here would be a size limit.
        self.literal = Some(Regex::new(&alternation).map_err(|e| bad(&e.to_string()))?);
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
        if let Some(literal) = &self.literal {
            let replaced = literal.replace_all(&current, |caps: &Captures<'_>| {
                let name = self
                    .secrets
                    .iter()
                    .find(|(_, v)| v == &caps[0])
                    .map_or("unknown", |(n, _)| n.as_str());
                findings.push(Finding {
                    rule: format!("known-secret:{name}"),
                });
                format!("[SECRET:{name}]")
            });
            current = Cow::Owned(replaced.into_owned());
        }
        for pattern in &self.patterns {
            let replaced = pattern
                .regex()
                .replace_all(&current, |caps: &Captures<'_>| {
                    findings.push(Finding {
                        rule: pattern.id().to_owned(),
                    });
                    replace_one(caps, pattern.placeholder())
                });
            if let Cow::Owned(new) = replaced {
                current = Cow::Owned(new);
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
