//! `reject_if` evaluation: each shipped rule fires on exactly the facts it names and
//! stays quiet otherwise.

use studyloop_rubrics::{Facts, Rubric};

fn fired(facts: &Facts) -> Vec<String> {
    Rubric::load_default()
        .unwrap()
        .rejections(facts)
        .into_iter()
        .map(|r| r.id)
        .collect()
}

fn healthy() -> Facts {
    let mut facts = Facts {
        scored_seats: 3,
        outcome: Some("completed".into()),
        cell_required: true,
        ..Facts::default()
    };
    for c in [
        "accuracy",
        "pedagogy",
        "session_lifecycle",
        "learner_record",
    ] {
        facts.scores.insert(c.into(), vec![4, 4, 5]);
    }
    facts
}

#[test]
fn a_healthy_bundle_fires_nothing() {
    assert!(fired(&healthy()).is_empty());
    let mut budget = healthy();
    budget.outcome = Some("budget-exhausted".into());
    assert!(
        fired(&budget).is_empty(),
        "budget-exhausted is the normal end of an LLM conversation"
    );
}

#[test]
fn one_seat_at_the_accuracy_floor_rejects_whatever_the_others_say() {
    let mut facts = healthy();
    facts.scores.insert("accuracy".into(), vec![5, 5, 1]);
    assert_eq!(fired(&facts), ["confidently-wrong"]);
    let rejection = Rubric::load_default().unwrap().rejections(&facts).remove(0);
    assert!(
        rejection.detail.contains("accuracy scored 1"),
        "{}",
        rejection.detail
    );
    facts.scores.insert("pedagogy".into(), vec![1, 1, 1]);
    assert_eq!(
        fired(&facts),
        ["confidently-wrong"],
        "only accuracy carries a veto"
    );
}

#[test]
fn a_skipped_cell_rejects_only_when_required() {
    let mut facts = healthy();
    facts.cell_skipped = true;
    facts.outcome = Some("completed".into());
    assert_eq!(fired(&facts), ["required-cell-skipped"]);
    facts.cell_required = false;
    assert!(fired(&facts).is_empty());
}

#[test]
fn bundle_problems_and_broken_outcomes_reject() {
    let mut facts = healthy();
    facts.bundle_problems = vec!["missing: transcript.jsonl".into()];
    assert_eq!(fired(&facts), ["bundle-incomplete"]);
    for outcome in ["errored", "cancelled", "skipped"] {
        let mut facts = healthy();
        facts.outcome = Some(outcome.into());
        assert_eq!(fired(&facts), ["conversation-broke"], "{outcome}");
    }
}

#[test]
fn fewer_than_two_scored_seats_reject() {
    let mut facts = healthy();
    facts.scored_seats = 1;
    assert_eq!(fired(&facts), ["too-few-seats"]);
    facts.scored_seats = 0;
    facts.scores.clear();
    assert_eq!(fired(&facts), ["too-few-seats"]);
}
