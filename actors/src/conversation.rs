//! The turn loop the LLM actors share (gateway, direct): before each turn check
//! cancel, then the budget; generate the learner's message from the history;
//! validate its usage; send it to the mentor; record the turn.
//!
//! There is no natural-completion heuristic: an LLM learner talks until a cap
//! stops it, so `budget-exhausted` is its normal outcome.

use std::time::Instant;

use crate::budget::Budget;
use crate::llm::{ChatClient, ChatMessage, ChatResponse, LlmError, capped};
use crate::transcript::{CancelToken, Mentor, MentorError, Outcome, Transcript, Turn};

/// Something that produces the learner's next message from the history (its own
/// turns as assistant messages, the mentor's as user messages).
pub(crate) trait Learner {
    fn next(&mut self, history: &[ChatMessage], max_tokens: u32) -> Result<ChatResponse, LlmError>;
}

/// A [`ChatClient`] with the learner's system prompt.
pub(crate) struct ClientLearner<'a> {
    pub client: &'a ChatClient,
    pub system_prompt: &'a str,
}

impl Learner for ClientLearner<'_> {
    fn next(&mut self, history: &[ChatMessage], max_tokens: u32) -> Result<ChatResponse, LlmError> {
        self.client.chat(self.system_prompt, history, max_tokens)
    }
}

/// The outcome a mentor error ends a conversation with.
pub(crate) fn mentor_failure(turns: Vec<Turn>, err: MentorError) -> Transcript {
    match err {
        MentorError::TurnTimeout { .. } => Transcript {
            turns,
            outcome: Outcome::BudgetExhausted,
            error: Some(err.to_string()),
        },
        MentorError::Failed(_) => Transcript::errored(turns, err),
    }
}

/// Runs the loop until a cap, cancellation or failure ends it.
pub(crate) fn run(
    learner: &mut dyn Learner,
    per_turn_max_tokens: u32,
    mentor: &mut dyn Mentor,
    budget: &mut Budget,
    cancel: &CancelToken,
) -> Transcript {
    let mut turns = Vec::new();
    let mut history = Vec::new();
    loop {
        if cancel.is_cancelled() {
            return Transcript::ended(turns, Outcome::Cancelled);
        }
        if budget.check().is_err() {
            return Transcript::ended(turns, Outcome::BudgetExhausted);
        }
        let started = Instant::now();
        let generated = match learner.next(&history, capped(per_turn_max_tokens, budget)) {
            Ok(generated) => generated,
            Err(err) => {
                return Transcript::errored(turns, format!("the learner model failed: {err}"));
            }
        };
        if let Err(err) = Budget::validate(generated.usage.output_tokens) {
            return Transcript::errored(turns, err);
        }
        let reply = match mentor.send(&generated.text) {
            Ok(reply) => reply,
            Err(err) => return mentor_failure(turns, err),
        };
        history.push(ChatMessage::assistant(generated.text.clone()));
        history.push(ChatMessage::user(reply.text.clone()));
        turns.push(Turn {
            learner: generated.text,
            mentor_reply: reply.text,
            usage: generated.usage,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        if let Err(err) = budget.record(generated.usage.output_tokens) {
            return Transcript::errored(turns, err);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::option;
    use proptest::prelude::*;

    use super::*;
    use crate::budget::MAX_PLAUSIBLE_TOKENS_PER_TURN;
    use crate::fake::FakeMentor;
    use crate::transcript::Usage;

    /// Replays a usage sequence (cycling) and records each request's `max_tokens`.
    struct ReplayLearner {
        usages: Vec<Option<u64>>,
        max_tokens_seen: Vec<u32>,
    }

    impl Learner for ReplayLearner {
        fn next(
            &mut self,
            _history: &[ChatMessage],
            max_tokens: u32,
        ) -> Result<ChatResponse, LlmError> {
            let output_tokens = self.usages[self.max_tokens_seen.len() % self.usages.len()];
            self.max_tokens_seen.push(max_tokens);
            Ok(ChatResponse {
                text: "learner".into(),
                usage: Usage {
                    input_tokens: None,
                    output_tokens,
                },
            })
        }
    }

    fn converse(usages: Vec<Option<u64>>, budget: &mut Budget) -> (Transcript, ReplayLearner) {
        let mut learner = ReplayLearner {
            usages,
            max_tokens_seen: Vec::new(),
        };
        let t = run(
            &mut learner,
            300,
            &mut FakeMentor::echo(),
            budget,
            &CancelToken::new(),
        );
        (t, learner)
    }

    proptest! {
        /// Over any usage sequence (unknown counts included) and any caps, no
        /// turn starts once either cap is reached, every request's `max_tokens`
        /// fits what is left, and the conversation ends only because a cap was hit.
        #[test]
        fn no_turn_starts_past_either_cap(
            usages in vec(option::of(0_u64..400), 1..12),
            max_turns in 1_u32..12,
            cap in option::of(0_u64..1500),
        ) {
            let mut budget = Budget::new(max_turns, cap).unwrap();
            let (t, learner) = converse(usages, &mut budget);
            prop_assert_eq!(t.outcome, Outcome::BudgetExhausted);
            prop_assert_eq!(learner.max_tokens_seen.len(), t.turns.len(), "a request per started turn only");
            prop_assert!(t.turns.len() <= max_turns as usize);
            let mut spent = 0_u64;
            for (turn, max_tokens) in t.turns.iter().zip(&learner.max_tokens_seen) {
                if let Some(cap) = cap {
                    prop_assert!(spent < cap, "a turn started with {} of {} spent", spent, cap);
                    prop_assert!(u64::from(*max_tokens) <= cap - spent);
                }
                spent += turn.usage.output_tokens.unwrap_or(0);
            }
            prop_assert_eq!(budget.output_tokens_spent(), spent);
            let turn_cap_hit = t.turns.len() == max_turns as usize;
            prop_assert!(turn_cap_hit || cap.is_some_and(|cap| spent >= cap));
        }

        /// An implausible count ends the conversation as errored, is never
        /// added, and keeps the turns before it.
        #[test]
        fn implausible_counts_are_errors_not_spend(
            before in vec(option::of(0_u64..50), 0..6),
            absurd in (MAX_PLAUSIBLE_TOKENS_PER_TURN + 1)..u64::MAX,
        ) {
            let mut usages = before.clone();
            usages.push(Some(absurd));
            let mut budget = Budget::new(50, None).unwrap();
            let (t, _) = converse(usages, &mut budget);
            prop_assert_eq!(t.outcome, Outcome::Errored);
            prop_assert_eq!(t.turns.len(), before.len());
            prop_assert_eq!(budget.output_tokens_spent(), before.iter().map(|u| u.unwrap_or(0)).sum::<u64>());
        }
    }
}
