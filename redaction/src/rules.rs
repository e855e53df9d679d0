//! The pinned rules files (`rules_v1.yaml` to `rules_v4.yaml`): the summary allow-list and
//! the ordered detection patterns, loaded only when their bytes match `registry.json`.
//!
//! The rules are data, not code, so that the exact patterns a run was redacted with are
//! named by version and hash in its manifest and cannot drift silently. Every released
//! version stays embedded and loadable ([`RedactionRules::load_shipped`]); the current
//! one ([`CURRENT_VERSION`], chosen here and nowhere else) is what
//! [`RedactionRules::load_default`] returns, so the redactor and every manifest that
//! records `redaction_version` switch together.

use std::collections::BTreeSet;
use std::path::Path;

use regex::{Regex, RegexBuilder};

pub use crate::pattern::{Pattern, REDACT_GROUP};
use serde::Deserialize;

use crate::error::RedactionError;
use crate::pinned::{self, Loaded};

/// The rules version the redactor uses and manifests record: the one place to switch it.
pub const CURRENT_VERSION: u32 = 4;
/// The current rules file shipped with this crate.
pub const DEFAULT_RULES_FILE: &str = "rules_v4.yaml";
/// The registry shipped with this crate.
pub const DEFAULT_REGISTRY_FILE: &str = "registry.json";
/// Every released rules file, by version: superseded ones stay loadable so a manifest
/// that names them can be checked again.
const SHIPPED: [(u32, &str, &[u8]); 4] = [
    (1, "rules_v1.yaml", include_bytes!("../rules_v1.yaml")),
    (2, "rules_v2.yaml", include_bytes!("../rules_v2.yaml")),
    (3, "rules_v3.yaml", include_bytes!("../rules_v3.yaml")),
    (4, "rules_v4.yaml", include_bytes!("../rules_v4.yaml")),
];
const DEFAULT_REGISTRY: &[u8] = include_bytes!("../registry.json");
/// The lazy DFA's cache per pattern (the crate default is 2 MiB): the PEM patterns'
/// bounded repetitions need room for their states, or the engine gives up the DFA for a
/// far slower one on long text.
const DFA_CACHE: usize = 32 << 20;

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
    /// Optional (version 2 on): matches that this expression matches whole are kept.
    #[serde(default)]
    keep: Option<String>,
    /// Optional (version 2 on): matches inside a match of this expression are kept.
    #[serde(default)]
    unless_inside: Option<String>,
    /// Optional (version 2 on): a one-character class the replaced part may not follow.
    #[serde(default)]
    not_after: Option<String>,
    placeholder: String,
}

impl RedactionRules {
    /// Loads the current rules ([`CURRENT_VERSION`]) shipped with this crate (embedded
    /// at build time).
    ///
    /// # Errors
    /// As [`RedactionRules::from_bytes`]; an in-place edit of the shipped file fails here
    /// as [`crate::PinError::Tampered`].
    pub fn load_default() -> Result<Self, RedactionError> {
        Self::load_shipped(CURRENT_VERSION)
    }

    /// Loads a released version shipped with this crate, current or superseded.
    ///
    /// # Errors
    /// [`RedactionError::UnknownVersion`] for a version this crate never shipped, else as
    /// [`RedactionRules::from_bytes`].
    pub fn load_shipped(version: u32) -> Result<Self, RedactionError> {
        let (_, file, bytes) = SHIPPED
            .iter()
            .find(|(v, _, _)| *v == version)
            .ok_or_else(|| RedactionError::UnknownVersion {
                version,
                shipped: SHIPPED
                    .iter()
                    .map(|(v, _, _)| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Self::from_bytes(file, bytes, DEFAULT_REGISTRY_FILE, DEFAULT_REGISTRY)
    }

    /// Loads rules and registry from disk.
    ///
    /// # Errors
    /// [`RedactionError::Read`] when either file cannot be read, else as
    /// [`RedactionRules::from_bytes`].
    pub fn load(rules: &Path, registry: &Path) -> Result<Self, RedactionError> {
        let read = |path: &Path| {
            // Regular files only, bounded: a FIFO must not hang a loader.
            studyloop_regular_file::read_regular(path, 1 << 20).map_err(|source| {
                RedactionError::Read {
                    path: path.to_owned(),
                    source,
                }
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
        let patterns: Vec<Pattern> = doc
            .patterns
            .into_iter()
            .map(compile)
            .collect::<Result<_, _>>()
            .map_err(format)?;
        let rules = Self {
            version,
            sha256,
            allowed_fields: allowed_fields(doc.allowed_fields).map_err(format)?,
            patterns,
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
            if let Some(other) = self.patterns.iter().find(|o| o.finds(&pattern.placeholder)) {
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
    let regex = RegexBuilder::new(&doc.regex)
        .dfa_size_limit(DFA_CACHE)
        .build()
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
    let keep = doc
        .keep
        .map(|keep| {
            Regex::new(&format!("^(?:{keep})$"))
                .map_err(|e| format!("pattern `{}`: `keep` does not compile: {e}", doc.id))
        })
        .transpose()?;
    let unless_inside = doc
        .unless_inside
        .as_ref()
        .map(|shield| {
            RegexBuilder::new(shield)
                .dfa_size_limit(DFA_CACHE)
                .build()
                .map_err(|e| {
                    format!(
                        "pattern `{}`: `unless_inside` does not compile: {e}",
                        doc.id
                    )
                })
        })
        .transpose()?;
    let not_after = doc
        .not_after
        .map(|class| {
            Regex::new(&format!("^(?:{class})$"))
                .map_err(|e| format!("pattern `{}`: `not_after` does not compile: {e}", doc.id))
        })
        .transpose()?;
    let shield_by_line = doc
        .unless_inside
        .as_deref()
        .is_some_and(crate::shield::line_local);
    let pass = crate::prefilter::pass(&doc.regex, DFA_CACHE);
    let anchored = crate::starts::literals(&doc.regex).and_then(|starts| {
        let regex = crate::starts::anchored(&doc.regex, DFA_CACHE)?;
        let trigger = crate::trigger::alternation(starts.iter().map(Vec::as_slice))?;
        Some((starts, regex, trigger))
    });
    let (starts, anchored, trigger, reach) = match anchored {
        Some((starts, regex, trigger)) => {
            let reach = starts.iter().map(Vec::len).max().unwrap_or(0);
            (Some(starts), Some(regex), Some(trigger), reach)
        }
        None => {
            let trigger = crate::trigger::trigger(&doc.regex);
            let reach = trigger.as_ref().map_or(0, crate::trigger::overlap);
            (None, None, trigger, reach)
        }
    };
    Ok(Pattern {
        starts,
        anchored,
        trigger,
        reach,
        id: doc.id,
        description: doc.description,
        regex,
        pass,
        keep,
        unless_inside,
        shield_by_line,
        not_after,
        placeholder: doc.placeholder,
    })
}
