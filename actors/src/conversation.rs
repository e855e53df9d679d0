//! The one turn loop every learner backend runs (scripted, gateway, direct,
//! harness): before each turn check cancel, then the budget; ask the
//! [`Learner`] for its next message (it may say it is done); validate the
//! message's usage; send it to the mentor; let the learner hear the reply;
//! record the turn.
//!
//! Backends differ only in where the learner's words come from, so only that
//! is behind the trait; the caps, the outcomes and the transcript are decided
//! here, once.

use std::time::Instant;

use crate::budget::Budget;
use crate::kind::ActorKind;
use crate::llm::{ChatClient, ChatMessage, ChatResponse, LlmError, capped};
use crate::transcript::{CancelToken, Mentor, MentorError, Outcome, Transcript, Turn};

/// What a learner produced for the next turn.
pub(crate) enum Next {
    /// A message to send, with what producing it cost.
    Say(ChatResponse),
    /// The learner finished on its own (script exhausted, harness said done).
    Done,
    /// The learner noticed the cancel token while waiting.
    Cancelled,
}

/// Why a learner could not give its next message or hear the reply (the
/// conversation ends `errored` with this message).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LearnerError {
    /// The learner model's request failed (its message names the endpoint
    /// problem and the fix).
    #[error("the learner model failed: {0}")]
    Model(#[from] LlmError),
    /// The learner harness's pane could not be read (it exited, timed out or
    /// tmux failed; the message says which). Boxed so this loop names no
    /// backend's error type (the harness backend imports this module).
    #[error(transparent)]
    Pane(PaneError),
    /// The mentor's reply could not be typed into the learner harness's pane.
    #[error("cannot type the mentor's reply: {0}")]
    TypeReply(PaneError),
}

/// One conversation's learner and the output cap of each of its model requests.
/// Opaque: only this crate's backends make one, so only they implement [`Actor`].
pub struct Learning<'a> {
    learner: Box<dyn Learner + 'a>,
    cap: Option<u32>,
}

impl<'a> Learning<'a> {
    /// `learner`, whose model requests carry `cap` (`None`: no model is asked).
    pub(crate) fn new(learner: impl Learner + 'a, cap: Option<u32>) -> Self {
        Self {
            learner: Box::new(learner),
            cap,
        }
    }
}

/// A learner backend. Backends differ only in their [`Learner`]; the one turn
/// loop ([`run`]) is [`Actor::converse`] for all of them.
pub trait Actor: Send {
    /// Which backend this is.
    fn kind(&self) -> ActorKind;

    /// The model behind it, when there is one (for evidence `actor_model`);
    /// none by default (a script or a second harness).
    fn model(&self) -> Option<&str> {
        None
    }

    /// This backend's learner for one conversation, and the output cap of each
    /// of its model requests (`None` when no model is asked).
    ///
    /// # Errors
    /// The backend could not start (a second harness that does not come up).
    fn learner(&mut self) -> Result<Learning<'_>, PaneError>;

    /// Talks to `mentor` until done, out of budget, cancelled or failed. Never
    /// panics for an expected condition; always returns the transcript.
    fn converse(
        &mut self,
        mentor: &mut dyn Mentor,
        budget: &mut Budget,
        cancel: &CancelToken,
    ) -> Transcript {
        let kind = self.kind();
        match self.learner() {
            Ok(mut l) => run(&mut *l.learner, l.cap, mentor, budget, cancel),
            Err(err) => Transcript::errored(
                Vec::new(),
                format!("the {kind} actor could not start: {err}"),
            ),
        }
    }
}

/// A learner backend's own error, kept whole as the source.
pub(crate) type PaneError = Box<dyn std::error::Error + Send + Sync>;

/// Something that produces the learner's next message from the history (its own
/// turns as assistant messages, the mentor's as user messages).
pub(crate) trait Learner {
    /// The next message; `max_tokens` is the output cap for this request
    /// (`None` when no model is asked, so no cap applies).
    fn next(
        &mut self,
        history: &[ChatMessage],
        max_tokens: Option<u32>,
        cancel: &CancelToken,
    ) -> Result<Next, LearnerError>;

    /// The mentor's reply to the last message (a harness learner types it back).
    fn heard(&mut self, _reply: &str) -> Result<(), LearnerError> {
        Ok(())
    }
}

/// A [`ChatClient`] with the learner's system prompt and per-turn output cap.
pub(crate) struct ClientLearner<'a> {
    pub client: &'a ChatClient,
    pub system_prompt: &'a str,
    pub per_turn_max_tokens: u32,
}

impl Learner for ClientLearner<'_> {
    fn next(
        &mut self,
        history: &[ChatMessage],
        max_tokens: Option<u32>,
        _cancel: &CancelToken,
    ) -> Result<Next, LearnerError> {
        self.client
            .chat(
                self.system_prompt,
                history,
                max_tokens.unwrap_or(self.per_turn_max_tokens),
            )
            .map(Next::Say)
            .map_err(LearnerError::Model)
    }
}

/// The outcome a mentor error ends a conversation with.
fn mentor_failure(turns: Vec<Turn>, err: MentorError) -> Transcript {
    match err {
        MentorError::TurnTimeout { .. } => Transcript {
            turns,
            outcome: Outcome::BudgetExhausted,
            error: Some(err.to_string()),
        },
        MentorError::Failed(_) => Transcript::errored(turns, err),
    }
}

/// Runs the loop until the learner is done, a cap, cancellation or a failure
/// ends it. `per_turn_max_tokens` is the learner model's own cap (`None` for a
/// learner without a model); each request gets it shrunk to what the budget
/// has left.
pub(crate) fn run(
    learner: &mut dyn Learner,
    per_turn_max_tokens: Option<u32>,
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
        let max_tokens = per_turn_max_tokens.map(|cap| capped(cap, budget));
        let generated = match learner.next(&history, max_tokens, cancel) {
            Ok(Next::Say(generated)) => generated,
            Ok(Next::Done) => return Transcript::ended(turns, Outcome::Completed),
            Ok(Next::Cancelled) => return Transcript::ended(turns, Outcome::Cancelled),
            Err(err) => return Transcript::errored(turns, err),
        };
        if let Err(err) = Budget::validate(generated.usage.output_tokens) {
            return Transcript::errored(turns, err);
        }
        let reply = match mentor.send(&generated.text) {
            Ok(reply) => reply,
            Err(err) => return mentor_failure(turns, err),
        };
        if let Err(err) = learner.heard(&reply.text) {
            return Transcript::errored(turns, err);
        }
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
            max_tokens: Option<u32>,
            _cancel: &CancelToken,
        ) -> Result<Next, LearnerError> {
            let output_tokens = self.usages[self.max_tokens_seen.len() % self.usages.len()];
            self.max_tokens_seen
                .push(max_tokens.expect("an LLM learner always has a cap"));
            Ok(Next::Say(ChatResponse {
                text: "learner".into(),
                usage: Usage {
                    input_tokens: None,
                    output_tokens,
                },
            }))
        }
    }

    fn converse(usages: Vec<Option<u64>>, budget: &mut Budget) -> (Transcript, ReplayLearner) {
        let mut learner = ReplayLearner {
            usages,
            max_tokens_seen: Vec::new(),
        };
        let t = run(
            &mut learner,
            Some(300),
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
