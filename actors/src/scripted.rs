//! The scripted actor: replays a turn script's prompts verbatim, one per turn,
//! and completes when the script runs out. No model is called, so every turn's
//! usage is `Some(0)` (truly zero), and it never bills.

use crate::conversation::{Actor, Learner, LearnerError, Learning, Next, PaneError};
use crate::kind::ActorKind;
use crate::llm::{ChatMessage, ChatResponse};
use crate::transcript::{CancelToken, Usage};
use crate::turn_script::TurnScript;

/// Replays fixed prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedActor {
    prompts: Vec<String>,
}

impl ScriptedActor {
    /// An actor that replays a loaded turn script.
    pub(crate) fn from_script(script: &TurnScript) -> Self {
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

    fn learner(&mut self) -> Result<Learning<'_>, PaneError> {
        let learner = Replay {
            prompts: self.prompts.iter(),
        };
        Ok(Learning::new(learner, None))
    }
}

/// The scripted learner: the next prompt, costing nothing, until none is left.
struct Replay<'a> {
    prompts: std::slice::Iter<'a, String>,
}

impl Learner for Replay<'_> {
    fn next(
        &mut self,
        _history: &[ChatMessage],
        _max_tokens: Option<u32>,
        _cancel: &CancelToken,
    ) -> Result<Next, LearnerError> {
        Ok(match self.prompts.next() {
            Some(prompt) => Next::Say(ChatResponse {
                text: prompt.clone(),
                usage: Usage::ZERO,
            }),
            None => Next::Done,
        })
    }
}
