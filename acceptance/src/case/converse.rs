//! The one conversation of every live case: the case's learner actor talks to
//! a [`Mentor`] over any transport (a tmux pane, the session socket, the
//! browser console) under ONE [`Budget`](studyloop_actors::Budget) built from
//! the case's [`TurnBudget`](crate::selection::TurnBudget) (turns and the
//! learner's output-token cap, from the selection or a UAT cell). The
//! transcript goes into the case's record; the result carries, per turn, the
//! reply text and where it was read from, so a later reader (e.g. the
//! harness's own session store) can stand beside the transport's.

use studyloop_actors::{ActorOptions, CancelToken, Mentor, Outcome, Transcript, factory};

use super::StepFailure;
use super::live::Case;
use crate::turn_scripts;

/// Where a mentor reply was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplySource {
    /// The harness's TUI screen in a tmux pane.
    Pane,
    /// The product's session WebSocket (ACP).
    Socket,
    /// The SPA console in a browser.
    Console,
    /// The harness's own session store (transcript file).
    SessionStore,
}

/// One mentor reply and its source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reply {
    /// The reply text.
    pub text: String,
    /// Where it was read from.
    pub source: ReplySource,
}

/// What a conversation produced.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The actor's transcript (also kept in the case's record).
    pub transcript: Transcript,
    /// Per turn, the reply and its source, in order.
    pub replies: Vec<Reply>,
}

impl Conversation {
    /// Learner turns the mentor answered.
    #[must_use]
    pub fn answered(&self) -> u32 {
        u32::try_from(self.transcript.turns.len()).unwrap_or(u32::MAX)
    }
}

/// The case's actor talks to `mentor` (replies read from `source`) within the
/// case's budget. Passes when no error ended it and either every budgeted turn
/// was answered or the learner finished on its own after at least one.
///
/// # Errors
/// A skip when the actor's settings are missing, `budget-exhausted` when a cap
/// or a turn's time limit stopped it short, errored otherwise.
pub fn converse(
    case: &mut Case<'_>,
    mentor: &mut dyn Mentor,
    source: ReplySource,
) -> Result<Conversation, StepFailure> {
    let kind = case.actor;
    let env = &case.ctx.caller;
    if let Err(reason) = factory::available(kind, env).map_err(StepFailure::from_error)? {
        return Err(StepFailure::skipped(reason.to_string()));
    }
    let options = ActorOptions {
        turn_script: Some(turn_scripts::default_turn_script().map_err(StepFailure::from_error)?),
        harness_socket_dir: Some(case.scratch()?.root().join("actor-tmux")),
        ..ActorOptions::default()
    };
    let mut actor = factory::build(kind, env, options).map_err(StepFailure::from_error)?;
    case.record.facts.actor_model = actor.model().map(str::to_owned);
    let want = case.budget.max_turns;
    let mut budget = case.budget.budget().map_err(StepFailure::from_error)?;
    let transcript = actor.converse(mentor, &mut budget, &CancelToken::new());
    case.record.transcript = Some(transcript.clone());
    let talk = Conversation {
        replies: transcript
            .turns
            .iter()
            .map(|t| Reply {
                text: t.mentor_reply.clone(),
                source,
            })
            .collect(),
        transcript,
    };
    let answered = talk.answered();
    let t = &talk.transcript;
    let finished_early = t.outcome == Outcome::Completed && answered > 0;
    match &t.error {
        None if answered >= want || finished_early => Ok(talk),
        error => {
            let why = error.clone().unwrap_or_else(|| match t.outcome {
                Outcome::BudgetExhausted => "the budget ran out".into(),
                _ => "the learner stopped early".into(),
            });
            let message = format!(
                "{answered} of {want} turns answered (actor outcome {}): {why}",
                t.outcome.as_str()
            );
            Err(match t.outcome {
                Outcome::BudgetExhausted => StepFailure::budget(message),
                Outcome::Cancelled => StepFailure::cancelled(message),
                _ => StepFailure::errored(message),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use studyloop_actors::fake::FakeMentor;
    use studyloop_stubs::StubProvider;

    use super::*;
    use crate::caller_env::CallerEnv;
    use crate::evidence::{Outcome as CaseOutcome, Surface, Tier};
    use crate::ledger::RunLog;
    use crate::runner::TrialContext;
    use crate::scratch::Scratch;
    use crate::selection::{HarnessName, Selection};

    /// `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS` reaches the learner's model: the stub
    /// logs each request's `max_tokens` as what the selection's cap has left
    /// (10, then 10 - 3), and the conversation stops when it is spent. Before,
    /// every lane built its budget with no token cap (200 per request always).
    #[test]
    fn the_selections_output_cap_reaches_the_learners_model_requests() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("roles.json");
        let learner = [
            "What is ownership?",
            "Why does the borrow checker exist at all?",
            "x",
        ];
        std::fs::write(
            &script,
            serde_json::json!({"version": 1, "learner": learner}).to_string(),
        )
        .unwrap();
        let stub = StubProvider::spawn(
            &crate::bins::path("studyloop-stub-provider").unwrap(),
            &dir.path().join("stub"),
            [
                "--role",
                "learner",
                "--script",
                script.to_str().unwrap(),
                "--api-key",
                "k",
            ],
        )
        .unwrap();
        let caller = CallerEnv::from_pairs([
            ("STUDYLOOP_ACC_ACTOR", "gateway".to_owned()),
            ("STUDYLOOP_ACC_MAX_OUTPUT_TOKENS", "10".to_owned()),
            ("LITELLM_BASE_URL", stub.base_url()),
            ("LITELLM_API_KEY", "k".to_owned()),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", "studyloop-stub".to_owned()),
        ]);
        let ctx = TrialContext {
            name: "case::converse".into(),
            tier: Tier::Acceptance,
            selection: Selection::from_env(&caller).unwrap(),
            caller,
            run_log: RunLog::open(dir.path().join("run")).unwrap(),
        };
        let mut case = Case::new(&ctx, HarnessName::Codex, Surface::CliTmux);
        case.slots.put_scratch(Scratch::create().unwrap());
        let talked = converse(&mut case, &mut FakeMentor::echo(), ReplySource::Pane);
        let err = talked.unwrap_err();
        assert_eq!(err.outcome, CaseOutcome::BudgetExhausted, "{err}");
        assert!(err.message.starts_with("2 of 3 turns answered"), "{err}");
        let sent: Vec<Option<u64>> = stub
            .records()
            .unwrap()
            .iter()
            .map(|r| r.max_tokens)
            .collect();
        assert_eq!(sent, [Some(10), Some(7)]);
        let t = case.record.transcript.as_ref().unwrap();
        assert_eq!(t.turns.len(), 2);
        case.slots.scratch.take().unwrap().close().unwrap();
    }
}
