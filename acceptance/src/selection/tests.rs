//! Unit tests of the selection parser: every rule of the module doc, and the
//! drift guard between the run order and the release contract.

use super::*;
use crate::caller_env::CallerEnv;
use studyloop_actors::ActorKind;

fn env(pairs: &[(&str, &str)]) -> CallerEnv {
    CallerEnv::from_pairs(pairs.iter().copied())
}

#[test]
fn unset_or_empty_selects_defaults() {
    assert_eq!(
        Selection::from_env(&env(&[])).unwrap(),
        Selection::defaults()
    );
    let blank = env(&[
        (ACC_HARNESS, " , ,"),
        (ACC_ACTOR, "  "),
        (ACC_REAL_AUTH, ""),
    ]);
    assert_eq!(Selection::from_env(&blank).unwrap(), Selection::defaults());
}

#[test]
fn harness_list_is_trimmed_deduplicated_and_ordered_as_given() {
    let sel = Selection::from_env(&env(&[(ACC_HARNESS, " kiro, codex,,kiro ,pi")])).unwrap();
    assert_eq!(
        sel.harnesses,
        [HarnessName::Kiro, HarnessName::Codex, HarnessName::Pi]
    );
    assert_eq!(sel.harness_list(), "kiro, codex, pi");
    assert!(sel.selects(HarnessName::Pi));
    assert!(!sel.selects(HarnessName::Grok));
}

#[test]
fn unknown_harness_names_value_known_set_and_fix() {
    let err = Selection::from_env(&env(&[(ACC_HARNESS, "oclode, kiro, Codex")])).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`oclode`, `Codex`"), "{msg}");
    assert!(msg.contains(ACC_HARNESS), "{msg}");
    assert!(
        msg.contains("known: codex, claude, kiro, pi, opencode, grok"),
        "{msg}"
    );
    assert!(msg.contains("fix:"), "{msg}");
}

#[test]
fn unknown_actor_names_value_known_set_and_fix() {
    let err = Selection::from_env(&env(&[(ACC_ACTOR, " scriptd ")])).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`scriptd`"), "{msg}");
    assert!(
        msg.contains("known: scripted, gateway, direct, harness"),
        "{msg}"
    );
    assert!(msg.contains(ACC_ACTOR), "{msg}");
}

#[test]
fn actor_is_trimmed() {
    let sel = Selection::from_env(&env(&[(ACC_ACTOR, " gateway\t")])).unwrap();
    assert_eq!(sel.actor, ActorKind::Gateway);
}

#[test]
fn every_bad_variable_is_reported_at_once() {
    let err = Selection::from_env(&env(&[
        (ACC_HARNESS, "oclode"),
        (ACC_ACTOR, "robot"),
        (ACC_REAL_AUTH, "yes"),
    ]))
    .unwrap_err();
    assert_eq!(err.0.len(), 3);
    assert_eq!(err.to_string().lines().count(), 3);
}

#[test]
fn auth_mode_rules() {
    let mode = |pairs: &[(&str, &str)]| Selection::from_env(&env(pairs)).map(|s| s.auth_mode);
    assert_eq!(mode(&[]), Ok(AuthMode::StubProvider));
    assert_eq!(
        mode(&[(ACC_AUTH_MODE, " scrubbed ")]),
        Ok(AuthMode::Scrubbed)
    );
    assert_eq!(mode(&[(ACC_REAL_AUTH, " 1 ")]), Ok(AuthMode::RealAuth));
    // Real-auth is forced whatever the auth mode says.
    assert_eq!(
        mode(&[(ACC_REAL_AUTH, "1"), (ACC_AUTH_MODE, "scrubbed")]),
        Ok(AuthMode::RealAuth)
    );
    let typo = mode(&[(ACC_REAL_AUTH, "true")]).unwrap_err().to_string();
    assert!(
        typo.contains("`true`") && typo.contains(ACC_REAL_AUTH),
        "{typo}"
    );
    let bad = mode(&[(ACC_AUTH_MODE, "real-auth")])
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("stub-provider, scrubbed, local-model") && bad.contains(ACC_REAL_AUTH),
        "{bad}"
    );
    assert_eq!(
        mode(&[(ACC_AUTH_MODE, " local-model ")]),
        Ok(AuthMode::LocalModel)
    );
    // Every selectable mode parses from the word it records, and back.
    for m in AuthMode::SELECTABLE {
        assert_eq!(mode(&[(ACC_AUTH_MODE, m.as_str())]), Ok(m));
    }
    let near = mode(&[(ACC_AUTH_MODE, "local_model")])
        .unwrap_err()
        .to_string();
    assert!(near.contains("`local_model`"), "{near}");
}

#[test]
fn binaries_per_harness() {
    let pairs: Vec<_> = HARNESS_ORDER
        .iter()
        .map(|h| (h.as_str(), h.binary()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("codex", "codex"),
            ("claude", "claude"),
            ("kiro", "kiro-cli"),
            ("pi", "pi"),
            ("opencode", "opencode"),
            ("grok", "grok"),
        ]
    );
}

#[test]
fn env_var_docs_name_every_constant_once() {
    let mut names: Vec<_> = ENV_VARS.iter().map(|d| d.name).collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "duplicate ENV_VARS entry");
    for name in [
        ACC,
        ACC_HARNESS,
        ACC_ACTOR,
        ACC_REAL_AUTH,
        ACC_AUTH_MODE,
        ACC_RESULTS_DIR,
        UAT,
        UAT_EVIDENCE_ROOT,
    ] {
        assert!(names.contains(&name), "{name} missing from ENV_VARS");
    }
}

/// The drift guard: the run order is a literal re-ordering of the release
/// contract. Full order, length and no duplicates, not just a set comparison,
/// because a set comparison passes when a name is repeated and another dropped.
#[test]
fn harness_order_is_a_full_reordering_of_release_harnesses() {
    use HarnessName::*;
    assert_eq!(HARNESS_ORDER, [Codex, Claude, Kiro, Pi, Opencode, Grok]);
    assert_eq!(RELEASE_HARNESSES, [Kiro, Codex, Claude, Pi, Opencode, Grok]);
    assert_eq!(HARNESS_ORDER.len(), RELEASE_HARNESSES.len());
    for list in [HARNESS_ORDER, RELEASE_HARNESSES] {
        let mut sorted = list.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), list.len(), "duplicate in {list:?}");
    }
    let mut order = HARNESS_ORDER.to_vec();
    let mut release = RELEASE_HARNESSES.to_vec();
    order.sort();
    release.sort();
    assert_eq!(order, release);
    // Core before preview in the run order, so a preview harness never delays
    // the release-blocking ones.
    let first_preview = HARNESS_ORDER
        .iter()
        .position(|h| h.maturity() == Maturity::Preview)
        .unwrap();
    assert!(
        HARNESS_ORDER[first_preview..]
            .iter()
            .all(|h| h.maturity() == Maturity::Preview)
    );
    let core: Vec<_> = RELEASE_HARNESSES
        .iter()
        .filter(|h| h.maturity() == Maturity::Core)
        .collect();
    assert_eq!(core, [&Kiro, &Codex, &Claude, &Pi]);
}

/// Issue 17: `STUDYLOOP_ACC_REPEAT` is a typed count; a bad value names
/// itself, the accepted range and the fix.
#[test]
fn repeat_is_a_count_from_1_to_20() {
    let parsed = |v: &str| Selection::from_env(&env(&[("STUDYLOOP_ACC_REPEAT", v)]));
    assert_eq!(Selection::defaults().repeat, 1);
    assert_eq!(parsed("").unwrap().repeat, 1);
    assert_eq!(parsed(" 3 ").unwrap().repeat, 3);
    assert_eq!(parsed("20").unwrap().repeat, 20);
    for bad in [
        "0",
        "21",
        "-1",
        "+3",
        "3.0",
        "three",
        "99999999999999999999",
    ] {
        let err = parsed(bad).unwrap_err().to_string();
        assert!(
            err.contains(&format!("invalid STUDYLOOP_ACC_REPEAT value `{bad}`"))
                && err.contains("from 1 to 20")
                && err.contains("fix:"),
            "{err}"
        );
    }
}

/// Issue 16: `STUDYLOOP_ACC_STUB_FAULT` is one stub fault line, checked by the stub's
/// own parser; a bad value names itself, the accepted forms and the fix.
#[test]
fn stub_fault_is_one_line_the_stub_accepts() {
    let parsed = |v: &str| Selection::from_env(&env(&[("STUDYLOOP_ACC_STUB_FAULT", v)]));
    assert_eq!(Selection::defaults().stub_fault, None);
    assert_eq!(parsed("  ").unwrap().stub_fault, None);
    for good in ["401", " 429 ", "stall 50", "truncate 3"] {
        assert_eq!(
            parsed(good).unwrap().stub_fault.as_deref(),
            Some(good.trim())
        );
    }
    for mode in [
        ("STUDYLOOP_ACC_REAL_AUTH", "1"),
        ("STUDYLOOP_ACC_AUTH_MODE", "scrubbed"),
    ] {
        let err = Selection::from_env(&env(&[("STUDYLOOP_ACC_STUB_FAULT", "401"), mode]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("STUDYLOOP_ACC_STUB_FAULT=401 needs the stub provider")
                && err.contains("fix: unset STUDYLOOP_ACC_STUB_FAULT"),
            "{err}"
        );
    }
    let local = env(&[
        ("STUDYLOOP_ACC_STUB_FAULT", "401"),
        ("STUDYLOOP_ACC_AUTH_MODE", "local-model"),
    ]);
    assert_eq!(
        Selection::from_env(&local).unwrap().stub_fault.as_deref(),
        Some("401")
    );
    let hostile = format!("401\n500{}", "x".repeat(500));
    for bad in ["404", "stall 0", "401 500", "--api-key x", hostile.as_str()] {
        let err = parsed(bad).unwrap_err().to_string();
        assert!(
            err.contains("invalid STUDYLOOP_ACC_STUB_FAULT value")
                && err.contains("`401`, `429`, `500`")
                && err.contains("fix: set e.g. STUDYLOOP_ACC_STUB_FAULT=401")
                && err.len() < 400,
            "{err}"
        );
    }
}
