//! [`Pins`]: every pinned file a sign-off depends on (rubric, redaction rules, sign-off
//! definition, council roster), loaded and cross-checked before any verdict.

use studyloop_redaction::RedactionRules;
use studyloop_rubrics::Rubric;

use super::SignoffError;
use crate::council::Roster;
use crate::definition::SignoffDefinition;

/// Every pinned file a sign-off depends on, loaded and cross-checked.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The redaction rules.
    pub rules: RedactionRules,
    /// The rubric.
    pub rubric: Rubric,
    /// The sign-off definition.
    pub definition: SignoffDefinition,
    /// The council roster.
    pub roster: Roster,
}

impl Pins {
    /// The files shipped with the crates, each checked against its pin.
    ///
    /// # Errors
    /// The first file that fails to load, by name.
    pub fn load_default() -> Result<Self, SignoffError> {
        Self::new(
            RedactionRules::load_default()?,
            Rubric::load_default()?,
            SignoffDefinition::load_default()?,
            Roster::load_default()?,
        )
    }

    /// Cross-checks the definition against the rubric and roster.
    ///
    /// # Errors
    /// [`SignoffError`] when a floor does not fit the rubric or the council is unknown.
    pub fn new(
        rules: RedactionRules,
        rubric: Rubric,
        definition: SignoffDefinition,
        roster: Roster,
    ) -> Result<Self, SignoffError> {
        definition.check_against(&rubric)?;
        roster
            .council(definition.council())
            .map_err(|e| SignoffError::UnknownCouncil {
                name: e.name,
                known: e.known,
            })?;
        Ok(Self {
            rules,
            rubric,
            definition,
            roster,
        })
    }
}
