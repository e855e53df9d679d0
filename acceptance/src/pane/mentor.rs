//! `PaneDriver` as the actors crate's `Mentor`: a thin adapter that maps one
//! learner message to one driven turn and the driver's errors to the two
//! `MentorError` outcomes (a timeout or the turn ceiling is a spent budget:
//! `TurnTimeout`, so the run ends budget-exhausted; anything else is `Failed`).

use std::time::Duration;

use studyloop_actors::{Mentor, MentorError, MentorReply};

use super::{PaneDriver, PaneError, screen};

impl Mentor for PaneDriver {
    fn send(&mut self, learner_message: &str) -> Result<MentorReply, MentorError> {
        match self.send_turn(learner_message) {
            Ok(record) => Ok(MentorReply::new(record.reply.clone().unwrap_or_default())),
            Err(PaneError::TurnTimeout { timeout, .. }) => {
                let detail = self
                    .records()
                    .last()
                    .map(|r| screen::tail(&r.screen, 3))
                    .unwrap_or_default();
                Err(MentorError::TurnTimeout {
                    waited: timeout,
                    detail,
                })
            }
            Err(e @ PaneError::TurnCeiling { .. }) => Err(MentorError::TurnTimeout {
                waited: Duration::ZERO,
                detail: e.to_string(),
            }),
            Err(e) => Err(MentorError::Failed(e.to_string())),
        }
    }
}
