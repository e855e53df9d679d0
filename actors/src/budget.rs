//! The budget guard: caps turns AND output tokens, checked **before** each turn,
//! so no turn ever starts past either cap.
//!
//! A turn may still overshoot the token cap by what that one turn spends (the
//! LLM actors shrink each request's `max_tokens` to what is left, so an honest
//! backend cannot). Unknown spend (`None`) is neither added nor a violation, so a
//! harness actor is capped on turns alone. An implausible count is an error, not
//! a number to add: it means the backend's usage cannot be trusted.

use std::fmt;

/// More output tokens than this in one turn is not a real count (the largest
/// models emit ~10^5 per response); the backend's usage is broken.
pub(crate) const MAX_PLAUSIBLE_TOKENS_PER_TURN: u64 = 10_000_000;

/// A budget that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// `max_turns` was 0.
    #[error("max_turns must be at least 1, got 0 (a conversation needs one turn)")]
    ZeroTurns,
    /// A backend reported an implausible count.
    #[error(
        "a backend reported {value} output tokens for one turn, more than the plausible \
         maximum {MAX_PLAUSIBLE_TOKENS_PER_TURN}; its usage cannot be trusted, so it was not added"
    )]
    Implausible {
        /// The rejected count.
        value: u64,
    },
}

/// Which cap stopped the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exhausted {
    /// `turns_taken` reached `max_turns`.
    Turns {
        /// The cap.
        max_turns: u32,
    },
    /// `output_tokens_spent` reached the cap.
    OutputTokens {
        /// Tokens spent so far.
        spent: u64,
        /// The cap.
        cap: u64,
    },
}

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Turns { max_turns } => write!(f, "turn budget spent ({max_turns} turns)"),
            Self::OutputTokens { spent, cap } => {
                write!(f, "output-token budget spent ({spent} of {cap} tokens)")
            }
        }
    }
}

/// Turn and output-token caps plus what has been spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    max_turns: u32,
    max_output_tokens: Option<u64>,
    turns_taken: u32,
    output_tokens_spent: u64,
}

impl Budget {
    /// A budget of `max_turns` (at least 1) and an optional output-token cap
    /// (`Some(0)` allows no turn at all).
    pub fn new(max_turns: u32, max_output_tokens: Option<u64>) -> Result<Self, BudgetError> {
        if max_turns == 0 {
            return Err(BudgetError::ZeroTurns);
        }
        Ok(Self {
            max_turns,
            max_output_tokens,
            turns_taken: 0,
            output_tokens_spent: 0,
        })
    }

    /// Whether another turn may start; the error names the cap that stops it.
    pub fn check(&self) -> Result<(), Exhausted> {
        if self.turns_taken >= self.max_turns {
            return Err(Exhausted::Turns {
                max_turns: self.max_turns,
            });
        }
        match self.max_output_tokens {
            Some(cap) if self.output_tokens_spent >= cap => Err(Exhausted::OutputTokens {
                spent: self.output_tokens_spent,
                cap,
            }),
            _ => Ok(()),
        }
    }

    /// Output tokens still allowed (`None` = no token cap). Only meaningful when
    /// [`check`](Self::check) passed, so it is then at least 1.
    pub fn remaining_output_tokens(&self) -> Option<u64> {
        self.max_output_tokens
            .map(|cap| cap.saturating_sub(self.output_tokens_spent))
    }

    /// Rejects a count no real backend reports, before anything is recorded.
    pub fn validate(output_tokens: Option<u64>) -> Result<(), BudgetError> {
        match output_tokens {
            Some(value) if value > MAX_PLAUSIBLE_TOKENS_PER_TURN => {
                Err(BudgetError::Implausible { value })
            }
            _ => Ok(()),
        }
    }

    /// Records one finished turn and its output tokens (`None` = unknown, not
    /// added). An implausible count is rejected and nothing is recorded.
    pub fn record(&mut self, output_tokens: Option<u64>) -> Result<(), BudgetError> {
        Self::validate(output_tokens)?;
        self.turns_taken = self.turns_taken.saturating_add(1);
        self.output_tokens_spent = self
            .output_tokens_spent
            .saturating_add(output_tokens.unwrap_or(0));
        Ok(())
    }

    /// The turn cap.
    pub fn max_turns(&self) -> u32 {
        self.max_turns
    }

    /// The output-token cap, if any.
    pub fn max_output_tokens(&self) -> Option<u64> {
        self.max_output_tokens
    }

    /// Turns recorded so far.
    pub fn turns_taken(&self) -> u32 {
        self.turns_taken
    }

    /// Known output tokens recorded so far.
    pub fn output_tokens_spent(&self) -> u64 {
        self.output_tokens_spent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_turns_is_rejected() {
        assert_eq!(Budget::new(0, None), Err(BudgetError::ZeroTurns));
    }

    #[test]
    fn turn_cap_stops_before_the_next_turn() {
        let mut b = Budget::new(2, None).unwrap();
        b.record(Some(5)).unwrap();
        assert!(b.check().is_ok());
        b.record(None).unwrap();
        assert_eq!(b.check(), Err(Exhausted::Turns { max_turns: 2 }));
    }

    #[test]
    fn token_cap_counts_known_spend_only() {
        let mut b = Budget::new(10, Some(10)).unwrap();
        b.record(None).unwrap();
        assert_eq!(b.output_tokens_spent(), 0);
        b.record(Some(9)).unwrap();
        assert_eq!(b.remaining_output_tokens(), Some(1));
        assert!(b.check().is_ok());
        b.record(Some(3)).unwrap();
        assert_eq!(
            b.check(),
            Err(Exhausted::OutputTokens { spent: 12, cap: 10 })
        );
        assert_eq!(
            Budget::new(1, Some(0))
                .unwrap()
                .check()
                .unwrap_err()
                .to_string(),
            "output-token budget spent (0 of 0 tokens)"
        );
    }

    #[test]
    fn implausible_counts_are_rejected_and_not_recorded() {
        let mut b = Budget::new(3, Some(100)).unwrap();
        let err = b
            .record(Some(MAX_PLAUSIBLE_TOKENS_PER_TURN + 1))
            .unwrap_err();
        assert!(err.to_string().contains("10000001"), "{err}");
        assert_eq!((b.turns_taken(), b.output_tokens_spent()), (0, 0));
        b.record(Some(MAX_PLAUSIBLE_TOKENS_PER_TURN)).unwrap();
    }
}
