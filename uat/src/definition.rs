//! The pinned sign-off definition (`signoff_v3.yaml`; v1 and v2 stay registered): which
//! cells a release needs, which of them are graded, each cell's learner budget (from v3),
//! the auth mode a graded cell must have run in, the council whose arbitration counts,
//! and the floor each rubric criterion's median must reach.
//!
//! This module loads and checks the definition; applying it is `signoff`'s job (the
//! verdict) and the journey catalogue's (the budget, and refusing a cell it cannot run).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use studyloop_rubrics::Rubric;

use studyloop_acceptance::selection::{AuthMode, TurnBudget};

use crate::pinned_yaml::{self, PinnedFileError};

/// One cell a sign-off considers: a trial name and whether the sign-off needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// The trial name exactly as the runner records it.
    pub id: String,
    /// Whether a missing, skipped or failed result fails the sign-off.
    pub required: bool,
}

/// The definition shipped with this crate.
pub(crate) const DEFAULT_SIGNOFF_FILE: &str = "signoff_v3.yaml";
/// Its registry.
pub(crate) const DEFAULT_SIGNOFF_REGISTRY: &str = "signoff_registry.json";
const DEFAULT_SIGNOFF: &[u8] = include_bytes!("../signoff_v3.yaml");
/// The first version whose cells must each write their learner budget.
const BUDGET_FROM_VERSION: u32 = 3;
const DEFAULT_REGISTRY: &[u8] = include_bytes!("../signoff_registry.json");

/// One cell the sign-off considers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSpec {
    /// The trial name exactly as the runner records it.
    pub id: String,
    /// Whether the sign-off needs it passed.
    pub required: bool,
    /// Whether it needs a council arbitration meeting the floors.
    pub graded: bool,
    /// The learner budget the engine applies to this cell (required from v3; absent in
    /// v1 and v2, whose cells take `STUDYLOOP_ACC_MAX_*`).
    #[serde(default)]
    pub budget: Option<CellBudget>,
}

/// A cell's learner budget as written: turns and the learner's conversation-wide
/// output-token cap. Checked on load against the ranges the engine accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellBudget {
    /// Learner turns.
    pub turns: u64,
    /// The learner's output tokens over the whole conversation.
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SkipRule {
    Fail,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    #[expect(dead_code, reason = "read by the version probe before the pin check")]
    version: u32,
    council: String,
    /// Absent in v1, where the rule lived in code with the same value: `real-auth`.
    #[serde(default = "real_auth")]
    graded_auth_mode: AuthMode,
    #[expect(
        dead_code,
        reason = "its only value is `fail`; parsing it is the check"
    )]
    required_cell_skipped: SkipRule,
    cells: Vec<CellSpec>,
    floors: BTreeMap<String, u8>,
}

/// A definition names a cell this build has no journey for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{file} (sign-off v{version}) names cell `{cell}`, which this build's journey catalogue does not have \
     (known: {known}); fix: build the journey under exactly that name, or sign off against a definition that does not name it"
)]
pub struct UnknownCell {
    /// The definition file.
    pub file: String,
    /// Its version.
    pub version: u32,
    /// The unknown cell.
    pub cell: String,
    /// The catalogue's cells.
    pub known: String,
}

fn real_auth() -> AuthMode {
    AuthMode::RealAuth
}

/// A loaded, verified sign-off definition.
#[derive(Debug, Clone)]
pub struct SignoffDefinition {
    file: String,
    version: u32,
    sha256: String,
    council: String,
    graded_auth_mode: AuthMode,
    cells: Vec<CellSpec>,
    floors: BTreeMap<String, u8>,
}

impl SignoffDefinition {
    /// The definition shipped with this crate.
    ///
    /// # Errors
    /// As [`SignoffDefinition::from_bytes`].
    pub fn load_default() -> Result<Self, PinnedFileError> {
        Self::from_bytes(
            DEFAULT_SIGNOFF_FILE,
            DEFAULT_SIGNOFF,
            DEFAULT_SIGNOFF_REGISTRY,
            DEFAULT_REGISTRY,
        )
    }

    /// Parses and verifies a definition.
    ///
    /// # Errors
    /// [`PinnedFileError::Pin`] for an unregistered version or tampered bytes;
    /// [`PinnedFileError::Format`] for bad YAML, `required_cell_skipped` other than
    /// `fail`, no cells, a duplicate cell or a blank id.
    pub fn from_bytes(
        file: &str,
        bytes: &[u8],
        registry: &str,
        registry_bytes: &[u8],
    ) -> Result<Self, PinnedFileError> {
        let loaded = pinned_yaml::load::<Doc>(file, bytes, registry, registry_bytes)?;
        let format = |detail: String| PinnedFileError::Format {
            file: file.to_owned(),
            detail,
        };
        let doc = loaded.doc;
        if doc.cells.is_empty() {
            return Err(format(
                "`cells` is empty; name the cells a sign-off needs".to_owned(),
            ));
        }
        let mut seen = BTreeSet::new();
        for cell in &doc.cells {
            if cell.id.trim().is_empty() || cell.id.trim() != cell.id {
                return Err(format(format!(
                    "cell id `{}` is blank or padded; write the trial name exactly",
                    cell.id
                )));
            }
            if !seen.insert(cell.id.as_str()) {
                return Err(format(format!("cell `{}` appears twice", cell.id)));
            }
            match cell.budget {
                None if loaded.version >= BUDGET_FROM_VERSION => {
                    return Err(format(format!(
                        "cell `{}` has no `budget`; from v{BUDGET_FROM_VERSION} every cell writes one \
                         (`budget: {{turns: N, output_tokens: M}}`)",
                        cell.id
                    )));
                }
                None => {}
                Some(b) => {
                    TurnBudget::from_definition(b.turns, b.output_tokens, loaded.version)
                        .map_err(|e| format(format!("cell `{}`: {e}", cell.id)))?;
                }
            }
        }
        if doc.cells.iter().any(|c| c.graded) && doc.floors.is_empty() {
            return Err(format(
                "graded cells need `floors`, one per rubric criterion".to_owned(),
            ));
        }
        Ok(Self {
            file: file.to_owned(),
            version: loaded.version,
            sha256: loaded.sha256,
            council: doc.council,
            graded_auth_mode: doc.graded_auth_mode,
            cells: doc.cells,
            floors: doc.floors,
        })
    }

    /// Checks the floors against the rubric: one floor per criterion, none unknown, each
    /// within the criterion's scale.
    ///
    /// # Errors
    /// [`PinnedFileError::Format`] naming this file and the mismatch.
    pub fn check_against(&self, rubric: &Rubric) -> Result<(), PinnedFileError> {
        let format = |detail: String| PinnedFileError::Format {
            file: self.file.clone(),
            detail,
        };
        for criterion in rubric.criteria() {
            match self.floors.get(&criterion.id) {
                None => {
                    return Err(format(format!(
                        "`floors` has no floor for rubric criterion `{}` (rubric v{}); add one",
                        criterion.id,
                        rubric.version()
                    )));
                }
                Some(floor) if !(criterion.min()..=criterion.max()).contains(floor) => {
                    return Err(format(format!(
                        "floor {floor} for `{}` is outside its scale [{}, {}]",
                        criterion.id,
                        criterion.min(),
                        criterion.max()
                    )));
                }
                Some(_) => {}
            }
        }
        if let Some(unknown) = self.floors.keys().find(|k| rubric.criterion(k).is_none()) {
            return Err(format(format!(
                "`floors` names `{unknown}`, which rubric v{} does not define (known: {})",
                rubric.version(),
                rubric
                    .criteria()
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(())
    }

    /// The declared version.
    #[must_use]
    pub fn version(&self) -> u32 {
        self.version
    }
    /// The pinned sha256 (hex).
    #[must_use]
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The council whose arbitrations count.
    #[must_use]
    pub fn council(&self) -> &str {
        &self.council
    }
    /// The auth mode a graded cell's run must have recorded.
    #[must_use]
    pub fn graded_auth_mode(&self) -> AuthMode {
        self.graded_auth_mode
    }
    /// The cells, in file order.
    #[must_use]
    pub fn cell_specs(&self) -> &[CellSpec] {
        &self.cells
    }
    /// The cells as the strict runner sees them.
    #[must_use]
    pub fn cells(&self) -> Vec<Cell> {
        self.cells
            .iter()
            .map(|c| Cell {
                id: c.id.clone(),
                required: c.required,
            })
            .collect()
    }
    /// The learner budget the engine applies to cell `id`: the definition's, when it
    /// writes one for that cell (v3+), else `None` (the selection's applies).
    #[must_use]
    pub fn budget_for(&self, id: &str) -> Option<TurnBudget> {
        let b = self.cells.iter().find(|c| c.id == id)?.budget?;
        // Checked on load; a failure here is unreachable and leaves the selection's.
        TurnBudget::from_definition(b.turns, b.output_tokens, self.version).ok()
    }

    /// Checks that every cell is one this build can run (`known`, the catalogue's
    /// trial names).
    ///
    /// # Errors
    /// [`UnknownCell`] naming the first unknown cell, the file, the known set and the fix.
    pub fn check_known(&self, known: &[&str]) -> Result<(), UnknownCell> {
        match self.unknown_cells(known).into_iter().next() {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// Every cell not in `known`, each as its error, in file order.
    #[must_use]
    pub fn unknown_cells(&self, known: &[&str]) -> Vec<UnknownCell> {
        self.cells
            .iter()
            .filter(|c| !known.contains(&c.id.as_str()))
            .map(|c| UnknownCell {
                file: self.file.clone(),
                version: self.version,
                cell: c.id.clone(),
                known: known.join(", "),
            })
            .collect()
    }

    /// Criterion id → the floor its median must reach.
    #[must_use]
    pub fn floors(&self) -> &BTreeMap<String, u8> {
        &self.floors
    }
}
