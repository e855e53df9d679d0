//! The conversation contract every backend shares: the [`Mentor`] it talks to,
//! the [`Actor`] trait, and the [`Transcript`] it always returns (on every
//! outcome, errors included, with every fully completed turn kept).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Tokens one learner turn cost. `None` = unobservable (a harness actor),
/// `Some(0)` = truly zero (a scripted actor); never a guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens the backend reported.
    pub input_tokens: Option<u64>,
    /// Completion tokens the backend reported.
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// Unobservable usage.
    pub const UNKNOWN: Usage = Usage {
        input_tokens: None,
        output_tokens: None,
    };
    /// Known to be zero (no model was called).
    pub const ZERO: Usage = Usage {
        input_tokens: Some(0),
        output_tokens: Some(0),
    };
}

/// One completed exchange: what the learner said, what the mentor replied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The learner's message, as sent to the mentor.
    pub learner: String,
    /// The mentor's reply, as received.
    pub mentor_reply: String,
    /// What producing the learner's message cost.
    pub usage: Usage,
    /// Wall time of the whole turn (learner generation plus mentor reply).
    pub elapsed_ms: u64,
}

/// How a conversation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The learner finished on its own (script exhausted, harness said done).
    Completed,
    /// A cap in the budget stopped it, or the mentor timed out on a turn.
    BudgetExhausted,
    /// The cancel token was set.
    Cancelled,
    /// Something failed; `Transcript::error` says what.
    Errored,
}

impl Outcome {
    /// The kebab-case word used in evidence manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::BudgetExhausted => "budget-exhausted",
            Self::Cancelled => "cancelled",
            Self::Errored => "errored",
        }
    }
}

/// Everything a conversation produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// Every fully completed turn, in order.
    pub turns: Vec<Turn>,
    /// How it ended.
    pub outcome: Outcome,
    /// What went wrong: set when errored, and when a mentor turn timed out.
    pub error: Option<String>,
}

impl Transcript {
    /// Ends a conversation with `outcome` and no error.
    pub fn ended(turns: Vec<Turn>, outcome: Outcome) -> Self {
        Self {
            turns,
            outcome,
            error: None,
        }
    }

    /// Ends a conversation as errored, keeping the turns done so far.
    pub fn errored(turns: Vec<Turn>, error: impl std::fmt::Display) -> Self {
        Self {
            turns,
            outcome: Outcome::Errored,
            error: Some(error.to_string()),
        }
    }
}

/// What the mentor answered to one learner message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MentorReply {
    /// The reply text as the learner will read it.
    pub text: String,
}

impl MentorReply {
    /// A reply with this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }
}

/// Why a mentor produced no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MentorError {
    /// No reply within the turn's time limit; ends the run as budget-exhausted
    /// (time is a budget), after the mentor recorded what it saw.
    #[error("the mentor gave no reply within {waited:?}: {detail}")]
    TurnTimeout {
        /// How long the turn waited.
        waited: Duration,
        /// What was observed (e.g. the last screen line).
        detail: String,
    },
    /// The mentor broke (process died, socket closed, protocol error); errored.
    #[error("the mentor failed: {0}")]
    Failed(String),
}

/// The mentor side of a conversation (a tmux pane, the web ACP socket, or a
/// fake in hermetic tests).
pub trait Mentor {
    /// Delivers one learner message and waits for the mentor's reply.
    fn send(&mut self, learner_message: &str) -> Result<MentorReply, MentorError>;
}

/// A shared flag that asks a conversation to stop. Observed before every turn
/// and while a harness actor waits for output; an in-flight HTTP request runs
/// to completion or its timeout first.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every holder to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_serialises_kebab_case() {
        for o in [
            Outcome::Completed,
            Outcome::BudgetExhausted,
            Outcome::Cancelled,
            Outcome::Errored,
        ] {
            assert_eq!(
                serde_json::to_string(&o).unwrap(),
                format!("\"{}\"", o.as_str())
            );
        }
    }

    #[test]
    fn transcript_round_trips_with_unknown_usage_as_null() {
        let t = Transcript::errored(
            vec![Turn {
                learner: "a".into(),
                mentor_reply: "b".into(),
                usage: Usage::UNKNOWN,
                elapsed_ms: 3,
            }],
            "boom",
        );
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains(r#""input_tokens":null"#), "{json}");
        assert_eq!(serde_json::from_str::<Transcript>(&json).unwrap(), t);
    }

    #[test]
    fn cancel_is_shared_between_clones() {
        let a = CancelToken::new();
        let b = a.clone();
        a.cancel();
        assert!(b.is_cancelled());
    }
}
