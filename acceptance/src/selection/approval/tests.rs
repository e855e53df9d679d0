//! The approval policy against hostile values: every bad entry named with the
//! accepted forms, exact matching only, and reasons that must all be covered.

use super::*;
use crate::selection::HarnessName;

fn errors(raw: &str) -> String {
    Approvals::parse(Some(raw)).unwrap_err().to_string()
}

fn codex() -> Capability {
    Capability::Harness(HarnessName::Codex)
}

#[test]
fn unset_and_empty_approve_nothing_and_decide_names_the_entry_that_would() {
    for raw in [None, Some("")] {
        let a = Approvals::parse(raw).unwrap();
        assert!(a.is_empty());
        let unmet = decide(&a, &codex()).unmet().unwrap();
        assert!(
            unmet.contains("capability `harness:codex` is not approved"),
            "{unmet}"
        );
        assert!(
            unmet.contains("chargeable (bills a vendor)")
                && unmet.contains("credentialed")
                && unmet.contains("writes-real-home"),
            "{unmet}"
        );
        assert!(
            unmet.contains("add the entry `harness:codex` (or `harness:codex[chargeable,credentialed,writes-real-home]`) to STUDYLOOP_ACC_APPROVE"),
            "{unmet}"
        );
    }
}

#[test]
fn an_exact_entry_approves_only_its_capability() {
    let a = Approvals::parse(Some(
        "harness:codex,judge:release/openai-gpt4o,learner:openai/gpt-4o-mini",
    ))
    .unwrap();
    assert_eq!(
        decide(&a, &codex()),
        Decision::Approved(ApprovalRecord {
            capability: "harness:codex".into(),
            reasons: REASONS.to_vec(),
        })
    );
    assert!(
        decide(&a, &Capability::Harness(HarnessName::Claude))
            .unmet()
            .is_some()
    );
    let seat = |s: &str| Capability::Judge {
        council: "release".into(),
        seat: s.into(),
    };
    assert!(decide(&a, &seat("openai-gpt4o")).unmet().is_none());
    assert!(decide(&a, &seat("openai-gpt4")).unmet().is_some());
    assert!(decide(&a, &seat("gemini-flash")).unmet().is_some());
    let learner = Capability::Learner {
        provider: "openai".into(),
        model: "gpt-4o-mini".into(),
    };
    assert!(decide(&a, &learner).unmet().is_none());
    assert_eq!(a.in_force().len(), 3);
}

#[test]
fn approving_chargeable_does_not_approve_writes_real_home() {
    let a = Approvals::parse(Some("harness:codex[chargeable]")).unwrap();
    let unmet = decide(&a, &codex()).unmet().unwrap();
    assert!(
        unmet.contains(
            "the entry `harness:codex[chargeable]` does not cover credentialed, writes-real-home"
        ),
        "{unmet}"
    );
    assert!(a.in_force().is_empty());
    let full = Approvals::parse(Some(
        "harness:codex[writes-real-home,chargeable,credentialed]",
    ))
    .unwrap();
    assert!(decide(&full, &codex()).unmet().is_none());
}

#[test]
fn hostile_values_are_each_refused_naming_the_entry_and_the_accepted_forms() {
    let cases: &[(&str, &str)] = &[
        ("*", "a wildcard"),
        ("harness:*", "a wildcard"),
        ("judge:release/*", "a wildcard"),
        (
            "harness:co",
            "unknown harness \"co\" (whole names only, no prefix)",
        ),
        ("harness:", "unknown harness \"\""),
        ("harness:Codex", "unknown harness \"Codex\""),
        ("harness:nope", "unknown harness \"nope\""),
        ("judge:release", "not of the form `judge:<council>/<seat>`"),
        ("judge:/seat", "not of the form"),
        (
            "learner:openai",
            "not of the form `learner:<provider>/<model>`",
        ),
        (
            "learner:evilcorp/m",
            "unknown learner provider \"evilcorp\"",
        ),
        ("harness", "no kind"),
        ("bank:transfer", "unknown kind \"bank\""),
        (
            "harness:codex,harness:codex",
            "approves `harness:codex` a second time",
        ),
        ("harness:codex,harness:codex[chargeable]", "a second time"),
        (" harness:codex", "contains ' '"),
        ("harness:codex ", "contains ' '"),
        ("harness:\tcodex", "contains '\\t'"),
        ("harness:codex\n", "contains '\\n'"),
        ("harness:co\u{0}dex", "contains '\\0'"),
        ("harness:codex,,harness:pi", "an empty entry"),
        ("harness:codex,", "an empty entry"),
        ("harness:codex[free]", "unknown reason \"free\""),
        ("harness:codex[]", "unknown reason \"\""),
        (
            "harness:codex[chargeable,chargeable]",
            "reason `chargeable` given twice",
        ),
        ("harness:codex[chargeable", "unbalanced brackets"),
        ("harness:codex]", "unknown harness"),
        (
            "harness:codex[chargeable][credentialed]",
            "unbalanced brackets",
        ),
        ("judge:rel$ase/a", "the council \"rel$ase\" is not a name"),
    ];
    for (raw, want) in cases {
        let text = errors(raw);
        assert!(text.contains(want), "{raw:?}: {text}");
        assert!(
            text.contains("accepted forms: comma-separated entries"),
            "{raw:?}: {text}"
        );
        assert!(text.contains("STUDYLOOP_ACC_APPROVE"), "{raw:?}: {text}");
    }
    // Every bad entry at once, each by position; the good one is not enough.
    let text = errors("harness:pi,harness:*,harness:xx");
    assert!(
        text.contains("entry 2") && text.contains("entry 3"),
        "{text}"
    );
}

#[test]
fn a_one_megabyte_value_is_refused_unread_and_its_text_is_not_echoed() {
    let huge = "harness:codex,".repeat(75_000);
    assert!(huge.len() > 1_000_000);
    let text = errors(&huge);
    assert!(
        text.contains(&format!("is {} bytes, more than 4096", huge.len())),
        "{text}"
    );
    assert!(text.len() < 2_000, "{} bytes of error", text.len());
    // A long single entry is quoted cut, never whole.
    let long = format!("harness:{}", "x".repeat(3000));
    let text = errors(&long);
    assert!(text.contains('…') && text.len() < 2_000, "{text}");
}

#[test]
fn judge_entries_are_checked_against_the_callers_roster() {
    let a = Approvals::parse(Some("judge:release/openai-gpt4o,judge:release/ghost")).unwrap();
    let err = a
        .check_judges(|c, s| c == "release" && s == "openai-gpt4o")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`judge:release/ghost` names no seat"), "{err}");
    assert!(!err.contains("openai-gpt4o`"), "{err}");
}

#[test]
fn the_selection_refuses_a_bad_value_before_any_trial_and_carries_a_good_one() {
    use crate::caller_env::CallerEnv;
    use crate::selection::Selection;
    let bad = CallerEnv::from_pairs([("STUDYLOOP_ACC_APPROVE", "harness:*")]);
    let err = Selection::from_env(&bad).unwrap_err().to_string();
    assert!(
        err.contains("a wildcard") && err.contains("accepted forms"),
        "{err}"
    );
    let good = CallerEnv::from_pairs([("STUDYLOOP_ACC_APPROVE", "harness:pi")]);
    let sel = Selection::from_env(&good).unwrap();
    assert!(
        decide(&sel.approvals, &Capability::Harness(HarnessName::Pi))
            .unmet()
            .is_none()
    );
}
