//! `FakeMentor`: a mentor double for **hermetic tests only** (plumbing tests of
//! the actors and their callers). It is never used where a real mentor (a
//! harness in tmux, the web ACP socket) should answer, and says so in its name.

use std::collections::VecDeque;
use std::time::Duration;

use crate::transcript::{Mentor, MentorError, MentorReply};

/// What the fake does on one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FakeStep {
    /// Reply with this text.
    Reply(String),
    /// Fail as a turn timeout.
    Timeout,
    /// Fail as a broken mentor.
    Fail(String),
}

/// A scripted stand-in mentor for tests: answers `FAKE-MENTOR <n>: <message>`
/// unless a step was queued for that turn, and records what it received.
#[derive(Debug, Clone, Default)]
pub struct FakeMentor {
    steps: VecDeque<FakeStep>,
    /// Every learner message received, in order.
    pub received: Vec<String>,
}

impl FakeMentor {
    /// A fake that echoes every message.
    pub fn echo() -> Self {
        Self::default()
    }

    /// A fake that plays `steps` first, then echoes.
    pub fn with_steps(steps: impl IntoIterator<Item = FakeStep>) -> Self {
        Self {
            steps: steps.into_iter().collect(),
            received: Vec::new(),
        }
    }
}

impl Mentor for FakeMentor {
    fn send(&mut self, learner_message: &str) -> Result<MentorReply, MentorError> {
        self.received.push(learner_message.to_owned());
        match self.steps.pop_front() {
            Some(FakeStep::Reply(text)) => Ok(MentorReply::new(text)),
            Some(FakeStep::Timeout) => Err(MentorError::TurnTimeout {
                waited: Duration::from_millis(1),
                detail: "FakeMentor: scripted timeout".to_owned(),
            }),
            Some(FakeStep::Fail(why)) => Err(MentorError::Failed(why)),
            None => Ok(MentorReply::new(format!(
                "FAKE-MENTOR {}: {learner_message}",
                self.received.len()
            ))),
        }
    }
}
