//! The pinned rules file (`rules_v1.yaml`): the summary allow-list and the ordered
//! detection patterns, loaded only when its bytes match `registry.json`.
//!
//! The rules are data, not code, so that the exact patterns a run was redacted with are
//! named by version and hash in its manifest and cannot drift silently.

use std::collections::BTreeSet;
use std::path::Path;

use regex::Regex;
use serde::Deserialize;

use crate::error::RedactionError;
use crate::pinned::{self, Loaded};

/// The rules file shipped with this crate.
pub const DEFAULT_RULES_FILE: &str = "rules_v1.yaml";
/// The registry shipped with this crate.
pub const DEFAULT_REGISTRY_FILE: &str = "registry.json";
const DEFAULT_RULES: &[u8] = include_bytes!("../rules_v1.yaml");
const DEFAULT_REGISTRY: &[u8] = include_bytes!("../registry.json");
/// The only named capture group a pattern may use: the part of a match to replace.
pub const REDACT_GROUP: &str = "redact";

/// One detection pattern: what it finds and what replaces it.
#[derive(Debug, Clone)]
pub struct Pattern {
    id: String,
    description: String,
    regex: Regex,
    placeholder: String,
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
}

/// Loaded, verified redaction rules.
#[derive(Debug, Clone)]
pub struct RedactionRules {
    version: u32,
    sha256: String,
    allowed_fields: BTreeSet<String>,
    patterns: Vec<Pattern>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesDoc {
    #[expect(dead_code, reason = "read by the version probe before the pin check")]
    version: u32,
    allowed_fields: Vec<String>,
    patterns: Vec<PatternDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternDoc {
    id: String,
    description: String,
    regex: String,
    placeholder: String,
}

impl RedactionRules {
    /// Loads the rules shipped with this crate (embedded at build time).
    ///
    /// # Errors
    /// As [`RedactionRules::from_bytes`]; an in-place edit of the shipped file fails here
    /// as [`crate::PinError::Tampered`].
    pub fn load_default() -> Result<Self, RedactionError> {
        Self::from_bytes(
            DEFAULT_RULES_FILE,
            DEFAULT_RULES,
            DEFAULT_REGISTRY_FILE,
            DEFAULT_REGISTRY,
        )
    }

    /// Loads rules and registry from disk.
    ///
    /// # Errors
    /// [`RedactionError::Read`] when either file cannot be read, else as
    /// [`RedactionRules::from_bytes`].
    pub fn load(rules: &Path, registry: &Path) -> Result<Self, RedactionError> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|source| RedactionError::Read {
                path: path.to_owned(),
                source,
            })
        };
        Self::from_bytes(
            &rules.display().to_string(),
            &read(rules)?,
            &registry.display().to_string(),
            &read(registry)?,
        )
    }

    /// Parses and verifies rules from bytes. The version is read first and the pin is
    /// checked before the full, strict parse, so an edited file is reported as tampered
    /// rather than as whatever the edit happened to break.
    ///
    /// # Errors
    /// [`RedactionError::Format`] for bad YAML, unknown fields, a pattern that does not
    /// compile, duplicate ids or an empty allow-list; [`RedactionError::Pin`] for an
    /// unregistered version or tampered bytes.
    pub fn from_bytes(
        file: &str,
        bytes: &[u8],
        registry: &str,
        registry_bytes: &[u8],
    ) -> Result<Self, RedactionError> {
        let format = |detail: String| RedactionError::Format {
            file: file.to_owned(),
            detail,
        };
        let text = pinned::utf8(file, bytes)?;
        let Loaded {
            doc,
            version,
            sha256,
        } = pinned::load_yaml::<RulesDoc>(text, file, bytes, registry, registry_bytes)?;
        let rules = Self {
            version,
            sha256,
            allowed_fields: allowed_fields(doc.allowed_fields).map_err(format)?,
            patterns: doc
                .patterns
                .into_iter()
                .map(compile)
                .collect::<Result<_, _>>()
                .map_err(format)?,
        };
        rules.check_patterns().map_err(format)?;
        Ok(rules)
    }

    /// The rules' declared version.
    #[must_use]
    pub fn version(&self) -> u32 {
        self.version
    }
    /// The pinned sha256 (hex) of the rules file.
    #[must_use]
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The top-level keys a redacted summary may carry.
    #[must_use]
    pub fn allowed_fields(&self) -> &BTreeSet<String> {
        &self.allowed_fields
    }
    /// The detection patterns, in the order they are applied.
    #[must_use]
    pub fn patterns(&self) -> &[Pattern] {
        &self.patterns
    }

    fn check_patterns(&self) -> Result<(), String> {
        if self.patterns.is_empty() {
            return Err("`patterns` is empty; list at least one detection pattern".to_owned());
        }
        let mut seen = BTreeSet::new();
        for pattern in &self.patterns {
            if !seen.insert(pattern.id.as_str()) {
                return Err(format!(
                    "pattern id `{}` appears twice; ids must be unique",
                    pattern.id
                ));
            }
        }
        // Rewriting must be idempotent: a placeholder that a pattern would match again
        // would make redacted text look like a fresh leak.
        for pattern in &self.patterns {
            if let Some(other) = self
                .patterns
                .iter()
                .find(|o| o.regex.is_match(&pattern.placeholder))
            {
                return Err(format!(
                    "placeholder `{}` of `{}` is itself matched by pattern `{}`; choose a placeholder no pattern matches",
                    pattern.placeholder, pattern.id, other.id
                ));
            }
        }
        Ok(())
    }
}

fn allowed_fields(fields: Vec<String>) -> Result<BTreeSet<String>, String> {
    if fields.is_empty() {
        return Err(
            "`allowed_fields` is empty; list the summary fields that may be shared".to_owned(),
        );
    }
    let mut set = BTreeSet::new();
    for field in fields {
        if field.trim().is_empty() || field.trim() != field {
            return Err(format!(
                "allowed field `{field}` is blank or padded; write the bare key"
            ));
        }
        if !set.insert(field.clone()) {
            return Err(format!("allowed field `{field}` appears twice"));
        }
    }
    Ok(set)
}

fn compile(doc: PatternDoc) -> Result<Pattern, String> {
    let id_ok = !doc.id.is_empty()
        && doc
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !id_ok {
        return Err(format!(
            "pattern id `{}` must be non-empty lowercase letters, digits and `-`",
            doc.id
        ));
    }
    if doc.placeholder.is_empty() {
        return Err(format!("pattern `{}` has an empty placeholder", doc.id));
    }
    let regex = Regex::new(&doc.regex)
        .map_err(|e| format!("pattern `{}` does not compile: {e}", doc.id))?;
    if let Some(name) = regex
        .capture_names()
        .flatten()
        .find(|name| *name != REDACT_GROUP)
    {
        return Err(format!(
            "pattern `{}` names a group `{name}`; the only named group allowed is `{REDACT_GROUP}`",
            doc.id
        ));
    }
    Ok(Pattern {
        id: doc.id,
        description: doc.description,
        regex,
        placeholder: doc.placeholder,
    })
}
