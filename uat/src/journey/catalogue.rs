//! The journey catalogue: which cells run for a selection, their gates, and the grading finish every journey shares.

use super::grading;
use super::record::{Destination, UatBundle};
use super::smoke;
use super::study;

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::case::Finished;
use studyloop_acceptance::evidence::Outcome;
use studyloop_acceptance::harness;
use studyloop_acceptance::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use studyloop_acceptance::scratch::{Env, find_on_path};
use studyloop_acceptance::selection::{AuthMode, HarnessName, Selection};
use studyloop_actors::factory;

use crate::secrets;
use crate::signoff::Pins;

/// The mechanics cell.
pub const SMOKE: &str = "journey::smoke";
/// The graded cell.
pub const STUDY_SESSION: &str = "journey::study_session";

/// Every UAT trial (the runner's catalogue), decided against the real environment.
#[must_use]
pub fn catalogue(selection: &Selection) -> Vec<TrialSpec> {
    catalogue_for(selection, &CallerEnv::capture())
}

/// As [`catalogue`] with an explicit caller environment.
#[must_use]
pub fn catalogue_for(selection: &Selection, caller: &CallerEnv) -> Vec<TrialSpec> {
    let smoke = TrialSpec::gated(SMOKE, |ctx| {
        finish(
            ctx,
            false,
            smoke::LABEL,
            |ctx, dest| smoke::run(ctx, dest),
            None,
        )
    });
    let choice = study_harness(selection, caller);
    let harness = choice.as_ref().ok().copied();
    let mut study = TrialSpec::gated(STUDY_SESSION, move |ctx| match harness {
        Some(h) => finish(
            ctx,
            true,
            study::NOTE,
            |ctx, dest| study::run(ctx, h, dest),
            Some(h),
        ),
        // Unreachable while the requirement below holds; said plainly if it is forced.
        None => TrialReport::skipped("no harness was chosen for the journey"),
    })
    .requires(Requirement::Checked {
        what: format!(
            "one of {} selected and installed, with its ACP adapter",
            names(&study::CANDIDATES)
        ),
        unmet: choice.err().map(|e| e.to_string()),
    });
    for unmet in [
        auth_unmet(selection.auth_mode),
        actor_unmet(selection, caller),
    ] {
        study = study.requires(Requirement::Checked {
            what: "a model for the harness and an available learner actor".into(),
            unmet,
        });
    }
    vec![smoke, study]
}

fn names(hs: &[HarnessName]) -> String {
    hs.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")
}

/// The first candidate harness that is selected and whose binary and ACP adapter are
/// on the scratch PATH; otherwise why none is, harness by harness.
///
/// # Errors
/// [`NoStudyHarness`]: the skip reason naming every candidate and what it lacks.
pub fn study_harness(
    selection: &Selection,
    caller: &CallerEnv,
) -> Result<HarnessName, NoStudyHarness> {
    let path = Env::scratch_path(caller);
    let mut why = Vec::new();
    for h in study::CANDIDATES {
        let spec = harness::spec(h);
        let fix = studyloop_acceptance::harness::install_hint(h);
        let acp = spec.acp.map(|a| a.argv[0]);
        let missing = [Some(h.binary()), acp]
            .into_iter()
            .flatten()
            .find(|bin| find_on_path(&path, bin).is_none());
        match (selection.selects(h), missing) {
            (false, _) => why.push(format!("{h} not selected via STUDYLOOP_ACC_HARNESS")),
            (true, Some(bin)) => why.push(format!("{bin} not found on PATH ({fix})")),
            (true, None) => return Ok(h),
        }
    }
    Err(NoStudyHarness {
        selected: selection.harness_list(),
        why,
    })
}

/// No candidate harness can run the graded journey here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no harness for the graded journey (selected: {selected}): {}", .why.join("; "))]
pub struct NoStudyHarness {
    /// The selected harnesses, as listed.
    pub selected: String,
    /// Per candidate, what it lacks.
    pub why: Vec<String>,
}

fn auth_unmet(mode: AuthMode) -> Option<String> {
    (mode == AuthMode::Scrubbed).then(|| {
        "auth mode scrubbed gives the harness no model to talk to; the graded journey needs stub-provider (the default) or STUDYLOOP_ACC_REAL_AUTH=1".to_owned()
    })
}

/// A learner backend whose settings are missing skips by name; a malformed setting is
/// left for the trial to fail on loudly.
fn actor_unmet(selection: &Selection, caller: &CallerEnv) -> Option<String> {
    match factory::available(selection.actor, caller) {
        Ok(Err(reason)) => Some(reason.to_string()),
        Ok(Ok(())) | Err(_) => None,
    }
}

/// Runs a journey as a case whose finish writes its bundle to the durable root, grades
/// a graded journey, and turns all of it into the trial's report (the runner records
/// it with the bundle).
fn finish(
    ctx: &TrialContext,
    graded: bool,
    arbitration_note: &str,
    journey: impl FnOnce(&TrialContext, &UatBundle<'_>) -> Finished,
    harness: Option<HarnessName>,
) -> TrialReport {
    // Pins and the destination first: a tampered pinned file or an unresolvable root
    // fails before anything runs, naming the file or variable.
    let pins = match Pins::load_default() {
        Ok(pins) => pins,
        Err(e) => return TrialReport::failed(format!("the pinned UAT files do not load: {e}")),
    };
    let dest = match Destination::resolve(&ctx.caller) {
        Ok(dest) => dest,
        Err(e) => return TrialReport::failed(e.to_string()),
    };
    if graded && let Err(e) = factory::available(ctx.selection.actor, &ctx.caller) {
        return TrialReport::failed(format!("the learner actor's settings are malformed: {e}"));
    }
    let redactor = secrets::redactor(&pins.rules, &ctx.caller);
    let layout = UatBundle {
        dest: &dest,
        pins: &pins,
        redactor: &redactor,
        graded,
        arbitration_note,
    };
    let Finished {
        result,
        bundle: written,
        fidelity,
    } = journey(ctx, &layout);
    // The messages reach results.jsonl, the terminal and the sign-off's reasons:
    // rewritten by the pinned rules first, like everything else a UAT tool prints.
    let report = match (&result, &written) {
        (Err(f), _) if f.outcome == Outcome::Skipped => {
            TrialReport::skipped(redactor.redact(&f.message))
        }
        (Err(f), _) => TrialReport::failed(redactor.redact(&f.message)),
        (Ok(()), Err(e)) => {
            TrialReport::failed(redactor.redact(&format!("the journey passed but {e}")))
        }
        (Ok(()), Ok(dir)) if graded => grade(ctx, dir, &pins, &redactor, harness),
        (Ok(()), Ok(_)) => TrialReport::passed(),
    }
    .with_fidelity(fidelity);
    match written {
        Ok(dir) => {
            eprintln!(
                "{}",
                redactor.redact(&format!("{}: evidence {}", ctx.name, dir.display()))
            );
            report.with_bundle(dir)
        }
        Err(_) => report,
    }
}

fn grade(
    ctx: &TrialContext,
    dir: &std::path::Path,
    pins: &Pins,
    redactor: &studyloop_redaction::Redactor,
    harness: Option<HarnessName>,
) -> TrialReport {
    let Some(council) = grading::council_for(ctx.selection.auth_mode, pins) else {
        return TrialReport::failed("no council grades a run without a model (auth mode scrubbed)");
    };
    match grading::grade(dir, council, pins, redactor, &ctx.caller) {
        Err(e) => TrialReport::failed(redactor.redact(&format!("grading failed: {e}"))),
        Ok(graded) => {
            eprintln!(
                "{}",
                redactor.redact(&format!(
                    "{}: {} harness {}; {}; arbitration {}",
                    ctx.name,
                    graded.line(),
                    harness.map_or("-", HarnessName::as_str),
                    crate::council::figures_line(&graded.arbitration),
                    graded.dir.join(crate::council::ARBITRATION_MD).display()
                ))
            );
            // Stub seats exist only to prove the mechanics: every one must score. A real
            // council's verdict (absent seats, rejections, floors) is the sign-off's call.
            if council == grading::HERMETIC_COUNCIL
                && let Err(e) = grading::every_seat_scored(&graded.arbitration)
            {
                return TrialReport::failed(redactor.redact(&e.to_string()));
            }
            TrialReport::passed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_exactly_the_sign_off_definitions_cells() {
        let pins = Pins::load_default().unwrap();
        let defined: Vec<&str> = pins
            .definition
            .cell_specs()
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        let specs = catalogue_for(&Selection::defaults(), &CallerEnv::default());
        let names: Vec<&str> = specs.iter().map(TrialSpec::name).collect();
        assert_eq!(names, defined);
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
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
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
}
