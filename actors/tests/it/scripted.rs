//! The scripted backend against the hermetic `FakeMentor`: prompts verbatim,
//! zero usage, completion, the turn cap, cancellation and mentor failures.

use crate::common;

use common::CancellingMentor;
use studyloop_actors::fake::{FakeMentor, FakeStep};
use studyloop_actors::scripted::ScriptedActor;
use studyloop_actors::{Actor, Budget, CancelToken, Outcome, Usage};

fn prompts(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("prompt {i}")).collect()
}

#[test]
fn sends_every_prompt_verbatim_with_zero_usage_then_completes() {
    let mut actor = ScriptedActor::new(vec!["  spaced  prompt ".into(), "two\nlines".into()]);
    let mut mentor = FakeMentor::echo();
    let mut budget = Budget::new(5, Some(0)).unwrap();
    // A zero token cap allows no LLM turn, but the scripted actor spends nothing:
    // the cap is checked like any other and stops it before the first turn.
    let t = actor.converse(&mut mentor, &mut budget, &CancelToken::new());
    assert_eq!((t.outcome, t.turns.len()), (Outcome::BudgetExhausted, 0));

    let mut budget = Budget::new(5, Some(10)).unwrap();
    let t = actor.converse(&mut mentor, &mut budget, &CancelToken::new());
    assert_eq!(t.outcome, Outcome::Completed);
    assert_eq!(mentor.received, ["  spaced  prompt ", "two\nlines"]);
    assert!(t.turns.iter().all(|turn| turn.usage == Usage::ZERO));
    assert_eq!((budget.turns_taken(), budget.output_tokens_spent()), (2, 0));
}

#[test]
fn the_turn_cap_and_cancellation_stop_it_early() {
    let mut actor = ScriptedActor::new(prompts(5));
    let t = actor.converse(
        &mut FakeMentor::echo(),
        &mut Budget::new(3, None).unwrap(),
        &CancelToken::new(),
    );
    assert_eq!((t.outcome, t.turns.len()), (Outcome::BudgetExhausted, 3));

    let cancel = CancelToken::new();
    let mut mentor = CancellingMentor {
        cancel: cancel.clone(),
        after: 2,
        turns: 0,
    };
    let t = actor.converse(&mut mentor, &mut Budget::new(9, None).unwrap(), &cancel);
    assert_eq!((t.outcome, t.turns.len()), (Outcome::Cancelled, 2));
}

#[test]
fn mentor_failures_keep_the_turns_done_so_far() {
    let mut actor = ScriptedActor::new(prompts(3));
    let mut mentor = FakeMentor::with_steps([
        FakeStep::Reply("ok".into()),
        FakeStep::Fail("socket closed".into()),
    ]);
    let t = actor.converse(
        &mut mentor,
        &mut Budget::new(9, None).unwrap(),
        &CancelToken::new(),
    );
    assert_eq!((t.outcome, t.turns.len()), (Outcome::Errored, 1));
    assert_eq!(t.turns[0].mentor_reply, "ok");
    let mut mentor = FakeMentor::with_steps([FakeStep::Timeout]);
    let t = actor.converse(
        &mut mentor,
        &mut Budget::new(9, None).unwrap(),
        &CancelToken::new(),
    );
    assert_eq!((t.outcome, t.turns.len()), (Outcome::BudgetExhausted, 0));
    assert!(t.error.is_some());
}
