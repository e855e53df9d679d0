//! The scripted actor: replays a turn script's prompts verbatim, one per turn,
//! and completes when the script runs out. No model is called, so every turn's
//! usage is `Some(0)` (truly zero), and it never bills.

use std::time::Instant;

use crate::budget::Budget;
use crate::conversation::mentor_failure;
use crate::kind::ActorKind;
use crate::transcript::{Actor, CancelToken, Mentor, Outcome, Transcript, Turn, Usage};
use crate::turn_script::TurnScript;

/// Replays fixed prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedActor {
    prompts: Vec<String>,
}

impl ScriptedActor {
    /// An actor that replays a loaded turn script.
    pub fn from_script(script: &TurnScript) -> Self {
        Self::new(script.prompts())
    }

    /// An actor that sends `prompts` in order, exactly as written.
    pub fn new(prompts: Vec<String>) -> Self {
        Self { prompts }
    }

    /// The prompts it will send.
    pub fn prompts(&self) -> &[String] {
        &self.prompts
    }
}

impl Actor for ScriptedActor {
    fn kind(&self) -> ActorKind {
        ActorKind::Scripted
    }

    fn model(&self) -> Option<&str> {
        None
    }

    fn converse(
        &mut self,
        mentor: &mut dyn Mentor,
        budget: &mut Budget,
        cancel: &CancelToken,
    ) -> Transcript {
        let mut turns = Vec::new();
        for prompt in &self.prompts {
            if cancel.is_cancelled() {
                return Transcript::ended(turns, Outcome::Cancelled);
            }
            if budget.check().is_err() {
                return Transcript::ended(turns, Outcome::BudgetExhausted);
            }
            let started = Instant::now();
            let reply = match mentor.send(prompt) {
                Ok(reply) => reply,
                Err(err) => return mentor_failure(turns, err),
            };
            turns.push(Turn {
                learner: prompt.clone(),
                mentor_reply: reply.text,
                usage: Usage::ZERO,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            if let Err(err) = budget.record(Usage::ZERO.output_tokens) {
                return Transcript::errored(turns, err);
            }
        }
        Transcript::ended(turns, Outcome::Completed)
    }
}
