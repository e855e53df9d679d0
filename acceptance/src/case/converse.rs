//! The one conversation of every live case: the case's learner actor talks to
//! a [`Mentor`] over any transport (a tmux pane, the session socket, the
//! browser console) under ONE [`Budget`](studyloop_actors::Budget) built from
//! the case's [`TurnBudget`](crate::selection::TurnBudget) (turns and the
//! learner's output-token cap, from the selection or a UAT cell). The
//! transcript goes into the case's record; the replies are the model's text
//! from each transport's faithful source (`super::faithful`), each turn's
//! fidelity is recorded and checked against its source's floor.

use std::time::Duration;

use studyloop_actors::llm_actor::LlmActorOptions;
use studyloop_actors::{ActorOptions, CancelToken, Outcome, Transcript, factory};

use super::StepFailure;
use super::faithful::{self, Faithful, Reader, Transport};
use super::live::Case;
use crate::fidelity::SourceKind;
use crate::turn_scripts;

/// A learner request's deadline in auth mode `local-model`: a CPU-only 135M model on
/// 2 shared cores answered one 60-token learner turn in 22–93 s while eight builds ran
/// (the actors' 30 s default is for hosted models and the stub).
pub(crate) const LOCAL_MODEL_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// The bundle file holding the cell's own cassette lines.
pub(crate) const CELL_CASSETTE: &str = "cassette.jsonl";

/// One mentor reply and its source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reply {
    /// The reply text (the model's, from the faithful source).
    pub text: String,
    /// Where it was read from.
    pub source: SourceKind,
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

/// The case's actor talks over `transport` within the case's budget; each
/// reply is read from the transport's faithful source and scored against what
/// the stub sent. Passes when no error ended it, either every budgeted turn
/// was answered or the learner finished on its own after at least one, and
/// every scored turn meets its source's fidelity floor (one check per turn in
/// the running step, the diffs in the failure).
///
/// # Errors
/// A skip when the actor's settings are missing, `budget-exhausted` when a cap
/// or a turn's time limit stopped it short, errored otherwise (a turn below
/// its fidelity floor included).
pub fn converse(
    case: &mut Case<'_>,
    transport: Transport<'_>,
) -> Result<Conversation, StepFailure> {
    let kind = case.actor;
    let env = &case.ctx.caller;
    if let Err(reason) = factory::available(kind, env).map_err(StepFailure::from_error)? {
        return Err(StepFailure::skipped(reason.to_string()));
    }
    // A billed learner is asked of the one approval policy before it is built.
    if let Some(reason) = crate::approval::learner_unapproved(&case.ctx.selection, env) {
        return Err(StepFailure::skipped(reason));
    }
    // Recorded, so the sign-off can check the bundle's own approvals cover it.
    case.record.facts.learner_capability =
        crate::approval::learner_capability(&case.ctx.selection, env).map(|c| c.to_string());
    let local = case.ctx.selection.auth_mode == crate::selection::AuthMode::LocalModel;
    let cassette = case.cassette.clone().map_err(StepFailure::errored)?;
    let options = ActorOptions {
        cassette: cassette.as_ref().map(|c| c.tap(case.ctx.name.clone())),
        turn_script: Some(
            turn_scripts::named_turn_script(case.turn_script).map_err(StepFailure::from_error)?,
        ),
        harness_socket_dir: Some(case.scratch()?.root().join("actor-tmux")),
        llm: local.then(|| LlmActorOptions {
            request_timeout: LOCAL_MODEL_REQUEST_TIMEOUT,
            ..LlmActorOptions::default()
        }),
        ..ActorOptions::default()
    };
    case.record.facts.turn_script = Some(case.turn_script.to_owned());
    let mut actor = factory::build(kind, env, options).map_err(StepFailure::from_error)?;
    case.record.facts.actor_model = actor.model().map(str::to_owned);
    let want = case.budget.max_turns;
    let mut budget = case.budget.budget().map_err(StepFailure::from_error)?;
    let reader = Reader {
        harness: case.harness,
        home: faithful::home_of(case.slots.scratch.as_ref()),
        stub: case.slots.stub.as_ref(),
        seed: case.seed,
        scripted: case.scripted_replies.as_deref(),
    };
    let mut mentor = Faithful::new(transport, reader);
    let transcript = actor.converse(&mut mentor, &mut budget, &CancelToken::new());
    if let Some(c) = &cassette {
        // After the cell's entries: a recording's sha256 covers them, and the bundle
        // keeps the cell's own lines (its seed and learner requests).
        case.record.facts.cassette = Some(c.evidence());
        let lines = c.lines_for(&case.ctx.name);
        if !lines.is_empty() {
            case.record.files.push((CELL_CASSETTE.to_owned(), lines));
        }
    }
    let turns = std::mem::take(&mut mentor.turns);
    drop(mentor);
    case.record.transcript = Some(transcript.clone());
    let talk = Conversation {
        replies: turns
            .iter()
            .map(|t| Reply {
                text: t.text.clone(),
                source: t.source,
            })
            .collect(),
        transcript,
    };
    let fidelity = faithful::check_turns(&mut case.record, turns);
    let answered = talk.answered();
    let t = &talk.transcript;
    let finished_early = t.outcome == Outcome::Completed && answered > 0;
    match &t.error {
        None if answered >= want || finished_early => fidelity.map(|()| talk),
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
pub(super) mod tests {
    use studyloop_actors::fake::FakeMentor;
    use studyloop_stubs::StubProvider;

    use super::*;
    use crate::caller_env::CallerEnv;
    use crate::case::Steps;
    use crate::evidence::{Outcome as CaseOutcome, Surface, Tier};
    use crate::ledger::RunLog;
    use crate::runner::TrialContext;
    use crate::scratch::Scratch;
    use crate::selection::{HarnessName, Selection};

    /// A stub provider playing the gateway learner with `learner`'s lines, and a
    /// trial context selecting it with `knob` set: (the stub, kept alive; the context).
    fn gateway_learner(
        dir: &std::path::Path,
        learner: &[&str],
        knob: (&str, &str),
    ) -> (StubProvider, TrialContext) {
        let script = dir.join("roles.json");
        let roles = serde_json::json!({"version": 1, "learner": learner});
        std::fs::write(&script, roles.to_string()).unwrap();
        let bin = crate::bins::path("studyloop-stub-provider").unwrap();
        let args = [
            "--role",
            "learner",
            "--script",
            script.to_str().unwrap(),
            "--api-key",
            "k",
        ];
        let stub = StubProvider::spawn(&bin, &dir.join("learner"), args).unwrap();
        let mut pairs = vec![
            ("STUDYLOOP_ACC_ACTOR", "gateway".to_owned()),
            (knob.0, knob.1.to_owned()),
            ("LITELLM_BASE_URL", stub.base_url()),
            ("LITELLM_API_KEY", "k".to_owned()),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", "studyloop-stub".to_owned()),
        ];
        // The gateway learner bills whoever holds the proxy's key: approved here,
        // unless the test sets the approvals itself.
        if knob.0 != "STUDYLOOP_ACC_APPROVE" {
            pairs.push((
                "STUDYLOOP_ACC_APPROVE",
                "learner:gateway/studyloop-stub".to_owned(),
            ));
        }
        let caller = CallerEnv::from_pairs(pairs);
        let ctx = TrialContext {
            name: "case::converse".into(),
            tier: Tier::Acceptance,
            selection: Selection::from_env(&caller).unwrap(),
            caller,
            run_log: RunLog::open(dir.join("run")).unwrap(),
        };
        (stub, ctx)
    }

    /// `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS` reaches the learner's model: the stub
    /// logs each request's `max_tokens` as what the selection's cap has left
    /// (10, then 10 - 3), and the conversation stops when it is spent. Before,
    /// every lane built its budget with no token cap (200 per request always).
    #[test]
    fn the_selections_output_cap_reaches_the_learners_model_requests() {
        let dir = tempfile::tempdir().unwrap();
        let learner = [
            "What is ownership?",
            "Why does the borrow checker exist at all?",
            "x",
        ];
        let (stub, ctx) = gateway_learner(
            dir.path(),
            &learner,
            ("STUDYLOOP_ACC_MAX_OUTPUT_TOKENS", "10"),
        );
        let mut case = Case::new(&ctx, HarnessName::Codex, Surface::CliTmux);
        case.slots.put_scratch(Scratch::create().unwrap());
        let talked = converse(&mut case, Transport::Socket(&mut FakeMentor::echo()));
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

    /// Issue 29: an unapproved billed learner is a named skip that makes 0 requests
    /// (the stub counts every request it receives), whatever else is approved.
    #[test]
    fn an_unapproved_learner_is_a_named_skip_and_its_model_is_never_asked() {
        for approve in [
            "",
            "harness:codex",
            "learner:gateway/studyloop-stu",
            "learner:gateway/studyloop-stub[chargeable]",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (stub, ctx) =
                gateway_learner(dir.path(), &["hi", "x"], ("STUDYLOOP_ACC_APPROVE", approve));
            let mut case = Case::new(&ctx, HarnessName::Codex, Surface::CliTmux);
            case.slots.put_scratch(Scratch::create().unwrap());
            let err = converse(&mut case, Transport::Socket(&mut FakeMentor::echo())).unwrap_err();
            assert_eq!(err.outcome, CaseOutcome::Skipped, "{approve:?}: {err}");
            assert!(
                err.message
                    .contains("capability `learner:gateway/studyloop-stub` is not approved")
                    && err
                        .message
                        .contains("add the entry `learner:gateway/studyloop-stub`"),
                "{approve:?}: {err}"
            );
            assert_eq!(
                stub.records().unwrap().len(),
                0,
                "{approve:?}: the learner's model was asked"
            );
            case.slots.scratch.take().unwrap().close().unwrap();
        }
    }

    /// A mentor over the cell's own stub provider (the faithful ACP text the
    /// stub sent, as the socket assembles it), optionally dropping one word of
    /// turn `mangle` as a lossy transport would.
    pub(in crate::case) struct StubMentor {
        pub(in crate::case) addr: String,
        pub(in crate::case) history: Vec<serde_json::Value>,
        pub(in crate::case) mangle: Option<usize>,
    }

    impl studyloop_actors::Mentor for StubMentor {
        fn send(
            &mut self,
            learner: &str,
        ) -> Result<studyloop_actors::MentorReply, studyloop_actors::MentorError> {
            self.history
                .push(serde_json::json!({"role": "user", "content": learner}));
            let body = serde_json::json!({"model": "m", "messages": self.history});
            let r = crate::web_acp::http::request(
                &self.addr,
                "POST",
                "/v1/chat/completions",
                Some(&body),
                std::time::Duration::from_secs(10),
            )
            .map_err(|e| studyloop_actors::MentorError::Failed(e.to_string()))?;
            let text = r.body["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            self.history
                .push(serde_json::json!({"role": "assistant", "content": text}));
            let turn = self.history.len() / 2;
            let shown = if self.mangle == Some(turn) {
                text.replacen("the ", "", 1)
            } else {
                text
            };
            Ok(studyloop_actors::MentorReply::new(shown))
        }
    }

    /// A web-ACP codex case with a scratch world, and its mentor: the case's own
    /// realistic stub (spawned into `dir`, seeded with the case's seed), mangling
    /// the shown reply of turn `mangle`. The set-up every conversation test shares.
    pub(in crate::case) fn stub_mentor_case<'a>(
        ctx: &'a TrialContext,
        dir: &std::path::Path,
        mangle: Option<usize>,
    ) -> (Case<'a>, StubMentor) {
        let bin = crate::bins::path("studyloop-stub-provider").unwrap();
        let mut case = Case::new(ctx, HarnessName::Codex, Surface::WebAcp);
        case.slots.put_scratch(Scratch::create().unwrap());
        let seed = case.seed.to_string();
        let args = ["--seed", seed.as_str(), "--replies", "realistic"];
        let mentor_stub = StubProvider::spawn(&bin, dir, args).unwrap();
        let addr = mentor_stub
            .base_url()
            .trim_start_matches("http://")
            .to_owned();
        case.slots.put_stub(mentor_stub);
        let mentor = StubMentor {
            addr,
            history: Vec::new(),
            mangle,
        };
        (case, mentor)
    }

    /// Two learner turns against a mentor on the case's realistic stub;
    /// returns the conversation's result and the case's recorded fidelity.
    fn two_turns(
        mangle: Option<usize>,
    ) -> (
        Result<Conversation, StepFailure>,
        Vec<crate::fidelity::TurnFidelity>,
        Vec<super::super::CheckRecord>,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let learner = ["What is ownership?", "Why does the borrow checker exist?"];
        let (_learner, ctx) =
            gateway_learner(dir.path(), &learner, ("STUDYLOOP_ACC_MAX_TURNS", "2"));
        let (mut case, mut mentor) = stub_mentor_case(&ctx, &dir.path().join("mentor"), mangle);
        let result = case.step("conversation", |c| {
            converse(c, Transport::Socket(&mut mentor))
        });
        let checks = case.record.steps.last().unwrap().checks.clone();
        let fidelity = case.record.fidelity.clone();
        case.slots.scratch.take().unwrap().close().unwrap();
        (result, fidelity, checks)
    }

    /// Each ACP turn records the stub's text with its source and a verdict of
    /// 1.0; the cell's fidelity is 1.0 and passes its floor.
    #[test]
    fn a_faithful_conversation_records_every_turns_fidelity() {
        let (result, turns, checks) = two_turns(None);
        let talk = result.unwrap();
        assert_eq!(talk.replies.len(), 2);
        assert!(talk.replies.iter().all(|r| r.source == SourceKind::Acp));
        assert_eq!(turns.len(), 2);
        for (k, t) in turns.iter().enumerate() {
            assert_eq!(t.turn, k as u64 + 1);
            assert!(t.text.starts_with(&format!("MENTOR-REPLY {}", k + 1)));
            let v = t.verdict.as_ref().expect("scored against the stub's log");
            assert!(v.pass && v.ratio == Some(1.0), "{v:?}");
        }
        assert_eq!(checks.len(), 2, "{checks:?}");
        assert!(checks.iter().all(|c| c.ok));
        let cell = crate::fidelity::CellFidelity::of(&turns);
        assert!(cell.pass && cell.ratio == Some(1.0), "{cell:?}");
    }

    /// A turn below its floor fails the conversation step: every turn is a
    /// check of the step (one passed, one failed), and the failure names the
    /// turn, its ratio and the diff. Before, the reply was whatever the
    /// transport showed and nothing compared it.
    #[test]
    fn a_turn_below_its_floor_fails_the_step_with_its_diff() {
        let (result, turns, checks) = two_turns(Some(2));
        let err = result.unwrap_err();
        assert_eq!(err.outcome, CaseOutcome::Errored, "{err}");
        assert!(
            err.message
                .contains("1 recorded reply below the fidelity floor"),
            "{err}"
        );
        assert!(err.message.contains("turn 2 (Acp)"), "{err}");
        assert!(err.message.contains("sent \""), "the diff: {err}");
        let [first, second] = checks.as_slice() else {
            panic!("one check per turn: {checks:?}");
        };
        assert!(first.ok && !second.ok, "{checks:?}");
        assert!(
            second
                .error
                .as_deref()
                .unwrap()
                .contains("fails its measure `exact` (floor 1.00")
        );
        let cell = crate::fidelity::CellFidelity::of(&turns);
        assert!(
            !cell.pass && cell.ratio.is_some_and(|r| r < 1.0),
            "{cell:?}"
        );
    }
}
