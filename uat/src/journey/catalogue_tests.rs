//! The journey catalogue's tests: every cell of the shipped definition has a journey, a
//! defined cell without one is a named failure, the definition's budget wins, and the
//! harness choice and skip reasons.

use super::catalogue::*;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::runner::{TrialContext, TrialSpec};
use studyloop_acceptance::selection::{AuthMode, HarnessName, Selection};

use crate::signoff::Pins;

/// Every cell of the shipped definition has a journey (none falls to the
/// named-failure stand-in of `undefined_cells`), and every journey is a cell of the
/// shipped definition or v2's `journey::study_session` (v2 stays registered).
///
/// On a branch without `journey::study_arc` (h-arc) or `journey::drill` (h-drill)
/// this fails naming exactly those; it passes once they are merged.
#[test]
fn the_catalogue_runs_every_cell_of_the_shipped_definition() {
    let pins = Pins::load_default().unwrap();
    let specs = journeys(&Selection::defaults(), &CallerEnv::default());
    let names: Vec<&str> = specs.iter().map(TrialSpec::name).collect();
    let unknown: Vec<String> = pins
        .definition
        .unknown_cells(&names)
        .into_iter()
        .map(|e| e.cell)
        .collect();
    assert!(
        unknown.is_empty(),
        "cells of the shipped definition without a journey: {unknown:?}"
    );
    let defined: Vec<&str> = pins
        .definition
        .cell_specs()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    for name in &names {
        assert!(
            defined.contains(name) || *name == STUDY_SESSION,
            "{name} is in no definition"
        );
    }
}

#[test]
fn a_defined_cell_without_a_journey_is_a_named_failing_trial() {
    let specs = journeys(&Selection::defaults(), &CallerEnv::default());
    let only_smoke: Vec<TrialSpec> = specs.into_iter().filter(|s| s.name() == SMOKE).collect();
    let stand_ins = undefined_cells(&only_smoke);
    let names: Vec<&str> = stand_ins.iter().map(TrialSpec::name).collect();
    assert!(
        names.contains(&ARCHITECT_LAUNCH) && !names.contains(&SMOKE),
        "{names:?}"
    );
    let all = catalogue_for(&Selection::defaults(), &CallerEnv::default());
    let mut seen = std::collections::BTreeSet::new();
    assert!(
        all.iter().all(|s| seen.insert(s.name().to_owned())),
        "a cell appears twice"
    );
}

/// STUDYLOOP_ACC_MAX_TURNS=9 and _MAX_OUTPUT_TOKENS=99 are set, yet each v3 cell's
/// cases run on the definition's budget and record it; a cell v3 does not name
/// (v2's study_session) keeps the variables'.
#[test]
fn the_definitions_budget_wins_over_the_variables_for_its_cells() {
    use studyloop_acceptance::case::Case;
    use studyloop_acceptance::evidence::{Surface, Tier};
    use studyloop_acceptance::ledger::RunLog;
    let dir = tempfile::tempdir().unwrap();
    let caller = CallerEnv::from_pairs([
        ("STUDYLOOP_ACC_MAX_TURNS", "9"),
        ("STUDYLOOP_ACC_MAX_OUTPUT_TOKENS", "99"),
    ]);
    let pins = Pins::load_default().unwrap();
    for (cell, turns, tokens, from) in [
        (FAULTS, 6, Some(4000), "sign-off definition v3"),
        (SMOKE, 3, Some(2000), "sign-off definition v3"),
        (STUDY_SESSION, 9, Some(99), "STUDYLOOP_ACC_MAX_TURNS"),
    ] {
        let ctx = TrialContext {
            name: cell.into(),
            tier: Tier::Uat,
            selection: Selection::from_env(&caller).unwrap(),
            caller: caller.clone(),
            run_log: RunLog::open(dir.path().join(cell.replace(':', "_"))).unwrap(),
        };
        assert_eq!(ctx.selection.budget.max_turns, 9);
        let ctx = cell_context(&ctx, &pins);
        let case = Case::new(&ctx, HarnessName::Codex, Surface::Journey);
        assert_eq!(
            (case.budget.max_turns, case.budget.max_output_tokens),
            (turns, tokens),
            "{cell}"
        );
        assert!(
            case.record
                .notes
                .iter()
                .any(|n| n.starts_with(&format!("learner budget: {turns} turns"))
                    && n.contains(from)),
            "{cell}: {:?}",
            case.record.notes
        );
    }
}

#[test]
fn no_installed_harness_is_a_skip_naming_every_candidate() {
    let caller = CallerEnv::from_pairs([("PATH", "/nonexistent")]);
    let reason = study_harness(&Selection::defaults(), &caller)
        .unwrap_err()
        .to_string();
    for needle in [
        "codex not found on PATH",
        "claude not found",
        "opencode not found",
        "pi not found",
        "just harnesses",
    ] {
        assert!(reason.contains(needle), "{needle}: {reason}");
    }
    let mut only_kiro = Selection::defaults();
    only_kiro.harnesses = vec![HarnessName::Kiro];
    let reason = study_harness(&only_kiro, &caller).unwrap_err().to_string();
    assert!(reason.contains("(selected: kiro)"), "{reason}");
    assert!(
        reason.contains("codex not selected via STUDYLOOP_ACC_HARNESS"),
        "{reason}"
    );
}

#[test]
fn the_first_selected_installed_candidate_wins() {
    let dir = tempfile::tempdir().unwrap();
    for bin in ["claude", "claude-code-acp", "pi", "pi-acp"] {
        let p = dir.path().join(bin);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let caller = CallerEnv::from_pairs([("PATH", dir.path())]);
    assert_eq!(
        study_harness(&Selection::defaults(), &caller),
        Ok(HarnessName::Claude)
    );
    let mut pi_first = Selection::defaults();
    pi_first.harnesses = vec![HarnessName::Pi, HarnessName::Claude];
    // Preference follows the candidate order, not the selection order.
    assert_eq!(study_harness(&pi_first, &caller), Ok(HarnessName::Claude));
    pi_first.harnesses = vec![HarnessName::Pi];
    assert_eq!(study_harness(&pi_first, &caller), Ok(HarnessName::Pi));
}

#[test]
fn scrubbed_mode_and_a_missing_actor_key_are_named_skips() {
    assert!(
        auth_unmet(AuthMode::Scrubbed)
            .unwrap()
            .contains("STUDYLOOP_ACC_REAL_AUTH=1")
    );
    assert_eq!(auth_unmet(AuthMode::StubProvider), None);
    let mut gateway = Selection::defaults();
    gateway.actor = studyloop_actors::ActorKind::Gateway;
    let reason = actor_unmet(&gateway, &CallerEnv::default()).unwrap();
    assert!(reason.contains("LITELLM"), "{reason}");
    assert_eq!(
        actor_unmet(&Selection::defaults(), &CallerEnv::default()),
        None
    );
}
