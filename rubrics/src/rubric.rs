//! The rubric file: YAML frontmatter (criteria and `reject_if`) between `---` fences,
//! then a markdown body that tells seats how to grade; loaded only when its bytes match
//! the pin in `registry.json`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use studyloop_pinned::{self as pinned, Loaded};

use crate::error::RubricError;
use crate::glob;
use crate::reject::{BUNDLE_OUTCOMES, Facts, RejectRule, Rejection, Rule};

/// The rubric shipped with this crate.
pub const DEFAULT_RUBRIC_FILE: &str = "rubric_v1.md";
/// The registry shipped with this crate.
pub const DEFAULT_REGISTRY_FILE: &str = "registry.json";
const DEFAULT_RUBRIC: &[u8] = include_bytes!("../rubric_v1.md");
const DEFAULT_REGISTRY: &[u8] = include_bytes!("../registry.json");

/// One graded question.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    /// Stable id, e.g. `pedagogy`.
    pub id: String,
    /// The question a seat answers.
    pub prompt: String,
    /// Inclusive `[min, max]`.
    pub scale: [u8; 2],
    /// Score → what that score looks like; always includes `min` and `max`.
    pub anchors: BTreeMap<u8, String>,
    /// Bundle paths or globs a score for this criterion must cite at least one of.
    pub evidence: Vec<String>,
}

impl Criterion {
    /// The lowest score.
    #[must_use]
    pub fn min(&self) -> u8 {
        self.scale[0]
    }
    /// The highest score.
    #[must_use]
    pub fn max(&self) -> u8 {
        self.scale[1]
    }
    /// Whether `path` (bundle-relative) is evidence this criterion accepts.
    #[must_use]
    pub fn accepts_evidence(&self, path: &str) -> bool {
        self.evidence
            .iter()
            .any(|pattern| glob::matches(pattern, path))
    }
}

/// A loaded, verified rubric.
#[derive(Debug, Clone)]
pub struct Rubric {
    version: u32,
    sha256: String,
    criteria: Vec<Criterion>,
    reject_if: Vec<RejectRule>,
    body: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Frontmatter {
    #[expect(dead_code, reason = "read by the version probe before the pin check")]
    version: u32,
    criteria: Vec<Criterion>,
    reject_if: Vec<RejectRule>,
}

impl Rubric {
    /// Loads the rubric shipped with this crate (embedded at build time).
    ///
    /// # Errors
    /// As [`Rubric::from_bytes`].
    pub fn load_default() -> Result<Self, RubricError> {
        Self::from_bytes(
            DEFAULT_RUBRIC_FILE,
            DEFAULT_RUBRIC,
            DEFAULT_REGISTRY_FILE,
            DEFAULT_REGISTRY,
        )
    }

    /// Loads a rubric and its registry from disk.
    ///
    /// # Errors
    /// [`RubricError::Read`] when a file cannot be read, else as [`Rubric::from_bytes`].
    pub fn load(rubric: &Path, registry: &Path) -> Result<Self, RubricError> {
        let read = |path: &Path| {
            // Regular files only, bounded: a FIFO must not hang a loader.
            studyloop_regular_file::read_regular(path, 1 << 20).map_err(|source| {
                RubricError::Read {
                    path: path.to_owned(),
                    source,
                }
            })
        };
        Self::from_bytes(
            &rubric.display().to_string(),
            &read(rubric)?,
            &registry.display().to_string(),
            &read(registry)?,
        )
    }

    /// Parses and verifies a rubric: the frontmatter fence first, then the version, then
    /// the pin over the whole file, then the strict parse and content rules.
    ///
    /// # Errors
    /// [`RubricError::Format`] for a missing fence, bad YAML or broken content rules;
    /// [`RubricError::Pin`] for an unregistered version or tampered bytes.
    pub fn from_bytes(
        file: &str,
        bytes: &[u8],
        registry: &str,
        registry_bytes: &[u8],
    ) -> Result<Self, RubricError> {
        let format = |detail: String| RubricError::Format {
            file: file.to_owned(),
            detail,
        };
        let text = pinned::utf8(file, bytes)?.replace("\r\n", "\n");
        let (front, body) = split_frontmatter(&text).map_err(format)?;
        let Loaded {
            doc,
            version,
            sha256,
        } = pinned::load_yaml::<Frontmatter>(front, file, bytes, registry, registry_bytes)?;
        validate(&doc.criteria, &doc.reject_if).map_err(format)?;
        Ok(Self {
            version,
            sha256,
            criteria: doc.criteria,
            reject_if: doc.reject_if,
            body: body.to_owned(),
        })
    }

    /// The declared version.
    #[must_use]
    pub fn version(&self) -> u32 {
        self.version
    }
    /// The pinned sha256 (hex) of the rubric file.
    #[must_use]
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The criteria, in file order.
    #[must_use]
    pub fn criteria(&self) -> &[Criterion] {
        &self.criteria
    }
    /// The criterion with this id.
    #[must_use]
    pub fn criterion(&self, id: &str) -> Option<&Criterion> {
        self.criteria.iter().find(|c| c.id == id)
    }
    /// The veto rules, in file order.
    #[must_use]
    pub fn reject_if(&self) -> &[RejectRule] {
        &self.reject_if
    }
    /// The markdown after the frontmatter: the grading instructions.
    #[must_use]
    pub fn body(&self) -> &str {
        &self.body
    }
    /// Every `reject_if` rule that fires on `facts`, in file order.
    #[must_use]
    pub fn rejections(&self, facts: &Facts) -> Vec<Rejection> {
        self.reject_if
            .iter()
            .filter_map(|rule| rule.check(facts))
            .collect()
    }
}

/// Splits `---\n<yaml>\n---\n<body>`; the closing fence is the first line that is
/// exactly `---`, and the newline after it is optional.
fn split_frontmatter(text: &str) -> Result<(&str, &str), String> {
    let rest = text
        .strip_prefix("---\n")
        .ok_or_else(|| "it must begin with a `---` line opening the YAML frontmatter".to_owned())?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches('\n') == "---" {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(
        "the frontmatter is never closed; add a line that is exactly `---` after the YAML"
            .to_owned(),
    )
}

fn validate(criteria: &[Criterion], reject_if: &[RejectRule]) -> Result<(), String> {
    if criteria.is_empty() {
        return Err("`criteria` is empty; a rubric grades at least one criterion".to_owned());
    }
    let mut ids = BTreeSet::new();
    for c in criteria {
        let id_ok = !c.id.is_empty() && c.id.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        if !id_ok {
            return Err(format!(
                "criterion id `{}` must be lowercase letters and `_`",
                c.id
            ));
        }
        if !ids.insert(c.id.as_str()) {
            return Err(format!("criterion `{}` appears twice", c.id));
        }
        let [min, max] = c.scale;
        if min >= max {
            return Err(format!(
                "criterion `{}` has scale [{min}, {max}]; write [min, max] with min < max",
                c.id
            ));
        }
        if let Some(bad) = c.anchors.keys().find(|k| !(min..=max).contains(*k)) {
            return Err(format!(
                "criterion `{}` anchors score {bad}, outside its scale [{min}, {max}]",
                c.id
            ));
        }
        if !c.anchors.contains_key(&min) || !c.anchors.contains_key(&max) {
            return Err(format!(
                "criterion `{}` must anchor both ends of its scale ({min} and {max})",
                c.id
            ));
        }
        if c.evidence.is_empty() {
            return Err(format!(
                "criterion `{}` names no evidence; list the bundle files a score must cite",
                c.id
            ));
        }
        if let Some(bad) = c.evidence.iter().find(|e| !glob::is_valid(e)) {
            return Err(format!(
                "criterion `{}` evidence `{bad}` is not a relative bundle path (no leading `/`, `..`, `.` or empty segment)",
                c.id
            ));
        }
    }
    let mut rule_ids = BTreeSet::new();
    for r in reject_if {
        if !rule_ids.insert(r.id.as_str()) {
            return Err(format!("reject_if id `{}` appears twice", r.id));
        }
        match &r.rule {
            Rule::CriterionScoreAtMost { criterion, score } => {
                let c = criteria.iter().find(|c| &c.id == criterion).ok_or_else(|| {
                    format!(
                        "reject_if `{}` names criterion `{criterion}`, which is not defined (known: {})",
                        r.id,
                        ids.iter().copied().collect::<Vec<_>>().join(", ")
                    )
                })?;
                if !(c.min()..=c.max()).contains(score) {
                    return Err(format!(
                        "reject_if `{}` score {score} is outside `{criterion}`'s scale",
                        r.id
                    ));
                }
            }
            Rule::BundleOutcomeIn { outcomes } => {
                if let Some(bad) = outcomes
                    .iter()
                    .find(|o| !BUNDLE_OUTCOMES.contains(&o.as_str()))
                {
                    return Err(format!(
                        "reject_if `{}` names outcome `{bad}`; known: {}",
                        r.id,
                        BUNDLE_OUTCOMES.join(", ")
                    ));
                }
            }
            Rule::RequiredCellSkipped
            | Rule::BundleMissingInventoryFile
            | Rule::ScoredSeatsBelow { .. } => {}
        }
    }
    Ok(())
}
