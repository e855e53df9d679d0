//! The conversation budget a run asks for: how many learner turns a live case
//! drives (`STUDYLOOP_ACC_MAX_TURNS`) and how many output tokens the learner's
//! model may spend over the whole conversation
//! (`STUDYLOOP_ACC_MAX_OUTPUT_TOKENS`), parsed once into [`TurnBudget`].
//!
//! Why a range and not any number: a turn count of 0 is no conversation and one
//! in the thousands is a typo that would hold a harness for hours; a token cap
//! of 0 allows no turn at all.

use std::ops::RangeInclusive;

use studyloop_actors::{Budget, BudgetError};

use crate::selection::vars::{ACC_MAX_OUTPUT_TOKENS, ACC_MAX_TURNS};

/// Learner turns when `STUDYLOOP_ACC_MAX_TURNS` is unset (the contract's floor).
pub(crate) const DEFAULT_MAX_TURNS: u32 = 3;
/// What `STUDYLOOP_ACC_MAX_TURNS` accepts.
pub(crate) const MAX_TURNS_RANGE: RangeInclusive<u32> = 1..=50;
/// What `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS` accepts.
pub(crate) const MAX_OUTPUT_TOKENS_RANGE: RangeInclusive<u64> = 1..=1_000_000;

/// Turns and the learner's output-token cap for one conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnBudget {
    /// Learner turns to drive (after any persona turn).
    pub max_turns: u32,
    /// Output tokens the learner's model may spend in total; `None` = no cap
    /// beyond each backend's per-turn cap.
    pub max_output_tokens: Option<u64>,
    /// Where these values came from (recorded in every case's notes).
    pub source: BudgetSource,
}

/// Where a [`TurnBudget`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetSource {
    /// `STUDYLOOP_ACC_MAX_TURNS` / `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS`, or their defaults.
    Selection,
    /// A UAT sign-off definition's per-cell budget (this version); it wins over the
    /// variables, which then do not apply to that cell.
    SignoffDefinition {
        /// The definition's version.
        version: u32,
    },
}

impl Default for TurnBudget {
    fn default() -> Self {
        Self {
            max_turns: DEFAULT_MAX_TURNS,
            max_output_tokens: None,
            source: BudgetSource::Selection,
        }
    }
}

/// A budget value outside the range the engine accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetRangeError {
    /// Turns outside [`MAX_TURNS_RANGE`].
    #[error(
        "budget turns {value} is outside {}..={}; fix: write a whole number of learner turns in that range",
        MAX_TURNS_RANGE.start(), MAX_TURNS_RANGE.end()
    )]
    Turns {
        /// The value given.
        value: u64,
    },
    /// Output tokens outside [`MAX_OUTPUT_TOKENS_RANGE`].
    #[error(
        "budget output_tokens {value} is outside {}..={}; fix: write the learner's conversation-wide output-token cap in that range",
        MAX_OUTPUT_TOKENS_RANGE.start(), MAX_OUTPUT_TOKENS_RANGE.end()
    )]
    OutputTokens {
        /// The value given.
        value: u64,
    },
}

impl TurnBudget {
    /// A budget from a sign-off definition, checked against the same ranges the
    /// variables accept (one range per value, whoever writes it).
    ///
    /// # Errors
    /// [`BudgetRangeError`] naming the value, the range and the fix.
    pub fn from_definition(
        turns: u64,
        output_tokens: u64,
        version: u32,
    ) -> Result<Self, BudgetRangeError> {
        let max_turns = u32::try_from(turns)
            .ok()
            .filter(|t| MAX_TURNS_RANGE.contains(t))
            .ok_or(BudgetRangeError::Turns { value: turns })?;
        if !MAX_OUTPUT_TOKENS_RANGE.contains(&output_tokens) {
            return Err(BudgetRangeError::OutputTokens {
                value: output_tokens,
            });
        }
        Ok(Self {
            max_turns,
            max_output_tokens: Some(output_tokens),
            source: BudgetSource::SignoffDefinition { version },
        })
    }

    /// The line every case records: the values and where they came from.
    #[must_use]
    pub fn note(&self) -> String {
        let tokens = self.max_output_tokens.map_or_else(
            || "no conversation-wide token cap".to_owned(),
            |n| format!("{n} output tokens"),
        );
        match self.source {
            BudgetSource::Selection => format!(
                "learner budget: {} turns, {tokens} (from {ACC_MAX_TURNS} / {ACC_MAX_OUTPUT_TOKENS} or their defaults)",
                self.max_turns
            ),
            BudgetSource::SignoffDefinition { version } => format!(
                "learner budget: {} turns, {tokens} (from sign-off definition v{version}; {ACC_MAX_TURNS} / {ACC_MAX_OUTPUT_TOKENS} do not apply to this cell)",
                self.max_turns
            ),
        }
    }

    /// A fresh actor budget with these caps.
    ///
    /// # Errors
    /// [`BudgetError`] (unreachable for a parsed value: the range starts at 1).
    pub fn budget(&self) -> Result<Budget, BudgetError> {
        Budget::new(self.max_turns, self.max_output_tokens)
    }
}

/// Why a budget variable was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetVarError {
    /// `STUDYLOOP_ACC_MAX_TURNS` is not a whole number in range.
    #[error(
        "invalid {ACC_MAX_TURNS} value `{value}`; accepted: a whole number from {} to {} (fix: set e.g. {ACC_MAX_TURNS}=3, or unset it for {DEFAULT_MAX_TURNS})",
        MAX_TURNS_RANGE.start(), MAX_TURNS_RANGE.end()
    )]
    MaxTurns {
        /// The trimmed value.
        value: String,
    },
    /// `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS` is not a whole number in range.
    #[error(
        "invalid {ACC_MAX_OUTPUT_TOKENS} value `{value}`; accepted: a whole number from {} to {} (fix: set e.g. {ACC_MAX_OUTPUT_TOKENS}=2000, or unset it for no conversation-wide cap)",
        MAX_OUTPUT_TOKENS_RANGE.start(), MAX_OUTPUT_TOKENS_RANGE.end()
    )]
    MaxOutputTokens {
        /// The trimmed value.
        value: String,
    },
}

/// Parses both variables (trimmed; empty or unset = the default), reporting
/// each bad one.
pub(crate) fn parse(
    turns: Option<&str>,
    tokens: Option<&str>,
) -> (TurnBudget, Vec<BudgetVarError>) {
    let mut errors = Vec::new();
    let mut budget = TurnBudget::default();
    match number(
        turns,
        u64::from(*MAX_TURNS_RANGE.start()),
        u64::from(*MAX_TURNS_RANGE.end()),
    ) {
        Ok(Some(n)) => budget.max_turns = u32::try_from(n).unwrap_or(DEFAULT_MAX_TURNS),
        Ok(None) => {}
        Err(value) => errors.push(BudgetVarError::MaxTurns { value }),
    }
    match number(
        tokens,
        *MAX_OUTPUT_TOKENS_RANGE.start(),
        *MAX_OUTPUT_TOKENS_RANGE.end(),
    ) {
        Ok(n) => budget.max_output_tokens = n,
        Err(value) => errors.push(BudgetVarError::MaxOutputTokens { value }),
    }
    (budget, errors)
}

/// `Ok(None)` for empty or unset, `Ok(Some(n))` in range, else the bad value.
pub(crate) fn number(raw: Option<&str>, min: u64, max: u64) -> Result<Option<u64>, String> {
    let value = raw.unwrap_or("").trim();
    if value.is_empty() {
        return Ok(None);
    }
    // Digits only: `+3`, `3.0` and `0x3` are typos, not numbers.
    match value.bytes().all(|b| b.is_ascii_digit()) {
        true => value
            .parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .map(Some)
            .ok_or_else(|| value.to_owned()),
        false => Err(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_and_empty_are_the_defaults() {
        assert_eq!(parse(None, None), (TurnBudget::default(), Vec::new()));
        assert_eq!(
            parse(Some(" "), Some("")),
            (TurnBudget::default(), Vec::new())
        );
        assert_eq!(TurnBudget::default().max_turns, 3);
    }

    #[test]
    fn values_in_range_are_taken_trimmed() {
        let (b, errors) = parse(Some(" 5 "), Some("1200"));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(b.max_turns, 5);
        assert_eq!(b.max_output_tokens, Some(1200));
        let budget = b.budget().unwrap();
        assert_eq!(
            (budget.max_turns(), budget.max_output_tokens()),
            (5, Some(1200))
        );
    }

    #[test]
    fn a_definition_budget_is_checked_against_the_same_ranges_and_says_where_it_came_from() {
        let b = TurnBudget::from_definition(6, 4000, 3).unwrap();
        assert_eq!((b.max_turns, b.max_output_tokens), (6, Some(4000)));
        assert!(
            b.note().contains("from sign-off definition v3"),
            "{}",
            b.note()
        );
        assert!(b.note().contains(ACC_MAX_TURNS), "{}", b.note());
        for (turns, tokens, needle) in [
            (0, 10, "budget turns 0 is outside 1..=50"),
            (51, 10, "budget turns 51 is outside 1..=50"),
            (u64::MAX, 10, "outside 1..=50"),
            (3, 0, "budget output_tokens 0 is outside 1..=1000000"),
            (3, 1_000_001, "output_tokens 1000001 is outside"),
        ] {
            let e = TurnBudget::from_definition(turns, tokens, 3)
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle) && e.contains("fix:"), "{e}");
        }
        assert!(TurnBudget::default().note().contains("or their defaults"));
    }

    #[test]
    fn bad_values_name_the_value_the_range_and_the_fix() {
        for (turns, tokens) in [
            ("0", "0"),
            ("51", "1000001"),
            ("-1", "-5"),
            ("3.0", "1e3"),
            ("three", "lots"),
            ("+3", "0x10"),
            ("99999999999999999999999", "99999999999999999999999"),
        ] {
            let (_, errors) = parse(Some(turns), Some(tokens));
            assert_eq!(errors.len(), 2, "{turns} {tokens}: {errors:?}");
            let turns_msg = errors[0].to_string();
            assert!(turns_msg.contains(&format!("`{turns}`")), "{turns_msg}");
            assert!(turns_msg.contains("from 1 to 50"), "{turns_msg}");
            assert!(
                turns_msg.contains("STUDYLOOP_ACC_MAX_TURNS=3"),
                "{turns_msg}"
            );
            let tokens_msg = errors[1].to_string();
            assert!(tokens_msg.contains(&format!("`{tokens}`")), "{tokens_msg}");
            assert!(tokens_msg.contains("from 1 to 1000000"), "{tokens_msg}");
            assert!(tokens_msg.contains("unset it"), "{tokens_msg}");
        }
    }
}
