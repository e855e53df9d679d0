//! The journey catalogue: which cells run for a selection, their gates, and the grading finish every journey shares.

use super::approvals::{judges_requirement, seat_approvals};
use super::grading;
use super::record::{Destination, UatBundle};
use super::smoke;
use super::study;
use super::{arc, architect, drill, faults, mcp, now};

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::case::Finished;
use studyloop_acceptance::evidence::Outcome;
use studyloop_acceptance::harness_spec;
use studyloop_acceptance::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use studyloop_acceptance::scratch::{Env, find_on_path};
use studyloop_acceptance::selection::{AuthMode, HarnessName, Selection};
use studyloop_actors::factory;

use crate::secrets;
use crate::signoff::Pins;

/// The mechanics cell.
pub const SMOKE: &str = "journey::smoke";
/// The graded cell of sign-off v1 and v2.
pub const STUDY_SESSION: &str = "journey::study_session";
/// The Plans view's architect door in Chromium.
pub const ARCHITECT_LAUNCH: &str = "journey::architect_launch";
/// The MCP server's plan lifecycle over stdio.
pub const MCP_LIFECYCLE: &str = "journey::mcp_lifecycle";
/// `/api/now` and the Today card with an active plan.
pub const NOW_WITH_ACTIVE_PLAN: &str = "journey::now_with_active_plan";
/// Provider faults mid-conversation.
pub const FAULTS: &str = "journey::faults";
/// The graded study arc through the browser.
pub const STUDY_ARC: &str = "journey::study_arc";
/// The ungraded drill cell (issue 19 item 7).
pub const DRILL: &str = "journey::drill";

/// Every UAT trial (the runner's catalogue), decided against the real environment.
#[must_use]
pub fn catalogue(selection: &Selection) -> Vec<TrialSpec> {
    catalogue_for(selection, &CallerEnv::capture())
}

/// As [`catalogue`] with an explicit caller environment: every journey, then a named
/// failure for each cell of the shipped definition no journey runs.
#[must_use]
pub fn catalogue_for(selection: &Selection, caller: &CallerEnv) -> Vec<TrialSpec> {
    let mut specs = journeys(selection, caller);
    specs.extend(undefined_cells(&specs));
    specs
}

/// The journeys this build has.
pub(super) fn journeys(selection: &Selection, caller: &CallerEnv) -> Vec<TrialSpec> {
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
    let harness_unmet = choice.as_ref().err().map(ToString::to_string);
    let faults_unmet = (selection.auth_mode != AuthMode::StubProvider).then(|| {
        format!(
            "faults are injected by studyloop-stub-provider: run in stub-provider mode (the default), not {}",
            selection.auth_mode.as_str()
        )
    });
    let study = graded(STUDY_SESSION, study::NOTE, study::run, selection, caller);
    let browser = |spec: TrialSpec| {
        spec.requires(Requirement::BinaryOnScratchPath {
            binary: "chromium",
            fix: studyloop_acceptance::web_acp::browser::INSTALL_HINT,
        })
        .requires(Requirement::BinaryOnScratchPath {
            binary: "chromedriver",
            fix: studyloop_acceptance::web_acp::browser::INSTALL_HINT,
        })
    };
    let architect = browser(TrialSpec::gated(ARCHITECT_LAUNCH, |ctx| {
        finish(
            ctx,
            false,
            architect::LABEL,
            |ctx, dest| architect::run(ctx, dest),
            None,
        )
    }));
    let mcp = TrialSpec::gated(MCP_LIFECYCLE, |ctx| {
        finish(
            ctx,
            false,
            mcp::LABEL,
            |ctx, dest| mcp::run(ctx, dest),
            None,
        )
    });
    let now = browser(TrialSpec::gated(NOW_WITH_ACTIVE_PLAN, |ctx| {
        finish(
            ctx,
            false,
            now::LABEL,
            |ctx, dest| now::run(ctx, dest),
            None,
        )
    }));
    let mut faults = TrialSpec::gated(FAULTS, move |ctx| match harness {
        Some(h) => finish(
            ctx,
            false,
            faults::LABEL,
            |ctx, dest| faults::run(ctx, h, dest),
            Some(h),
        ),
        None => TrialReport::skipped("no harness was chosen for the journey"),
    });
    for unmet in [faults_unmet.clone(), harness_unmet.clone()] {
        faults = faults.requires(Requirement::Checked {
            what: "a selected, installed ACP harness in stub-provider mode".into(),
            unmet,
        });
    }
    let arc = browser(graded(STUDY_ARC, arc::NOTE, arc::run, selection, caller)).requires(
        studyloop_acceptance::study_arc::learner_requirement(selection),
    );
    let mut drill_cell = TrialSpec::gated(DRILL, move |ctx| match harness {
        Some(h) => finish(
            ctx,
            false,
            drill::LABEL,
            |ctx, dest| drill::run(ctx, h, dest),
            Some(h),
        ),
        None => TrialReport::skipped("no harness was chosen for the journey"),
    })
    .requires(Requirement::Checked {
        what: format!(
            "one of {} selected and installed, with its ACP adapter",
            names(&study::CANDIDATES)
        ),
        unmet: harness_unmet.clone(),
    });
    drill_cell = drill_cell.requires(Requirement::Checked {
        what: "the stub provider (its request log proves the practice_check block)".into(),
        unmet: (selection.auth_mode != AuthMode::StubProvider).then(|| {
            "journey::drill reads the stub provider's request log: run it with STUDYLOOP_ACC_AUTH_MODE=stub-provider (the default)".to_owned()
        }),
    });
    vec![smoke, architect, mcp, now, study, arc, faults, drill_cell]
}

/// A failing trial for each cell the shipped sign-off definition names that no journey
/// of this build runs: the run says so by name (and the sign-off then fails on it),
/// instead of the cell silently never running.
pub(super) fn undefined_cells(specs: &[TrialSpec]) -> Vec<TrialSpec> {
    let Ok(pins) = Pins::load_default() else {
        // Every journey fails on the same load error, by name (`finish`).
        return Vec::new();
    };
    let known: Vec<&str> = specs.iter().map(TrialSpec::name).collect();
    pins.definition
        .unknown_cells(&known)
        .into_iter()
        .map(|e| {
            let why = e.to_string();
            TrialSpec::gated(e.cell, move |_| TrialReport::failed(why))
        })
        .collect()
}

/// The journey a graded cell runs: `(context, harness, destination) → finished`.
type GradedRun =
    fn(&TrialContext, HarnessName, &dyn studyloop_acceptance::case::Destination) -> Finished;

/// A graded cell `name` running `run` with the chosen study harness, gated on the
/// harness, a model for it and an available learner actor.
fn graded(
    name: &'static str,
    note: &'static str,
    run: GradedRun,
    selection: &Selection,
    caller: &CallerEnv,
) -> TrialSpec {
    let choice = study_harness(selection, caller);
    let harness = choice.as_ref().ok().copied();
    let mut spec = TrialSpec::gated(name, move |ctx| match harness {
        Some(h) => finish(ctx, true, note, |ctx, dest| run(ctx, h, dest), Some(h)),
        // Unreachable while the requirement below holds; said plainly if it is forced.
        None => TrialReport::skipped("no harness was chosen for the journey"),
    })
    .requires(Requirement::Checked {
        what: format!(
            "one of {} selected and installed, with its ACP adapter",
            names(&study::CANDIDATES)
        ),
        unmet: choice.err().map(|e| e.to_string()),
    })
    .requires(judges_requirement(selection));
    // The chosen harness, as a lane names its own: the runner's real-auth approval
    // gate (`harness:<h>`) and login preflight then apply to this cell too.
    if let Some(h) = harness {
        spec = spec.requires(Requirement::HarnessSelected(h));
    }
    for unmet in [
        auth_unmet(selection.auth_mode),
        actor_unmet(selection, caller),
    ] {
        spec = spec.requires(Requirement::Checked {
            what: "a model for the harness and an available learner actor".into(),
            unmet,
        });
    }
    spec
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
        let spec = harness_spec::spec(h);
        let fix = studyloop_acceptance::harness_spec::install_hint(h);
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

pub(super) fn auth_unmet(mode: AuthMode) -> Option<String> {
    (mode == AuthMode::Scrubbed).then(|| {
        "auth mode scrubbed gives the harness no model to talk to; the graded journey needs stub-provider (the default) or STUDYLOOP_ACC_REAL_AUTH=1".to_owned()
    })
}

/// A learner backend whose settings are missing skips by name; a malformed setting is
/// left for the trial to fail on loudly.
pub(super) fn actor_unmet(selection: &Selection, caller: &CallerEnv) -> Option<String> {
    match factory::available(selection.actor, caller) {
        Ok(Err(reason)) => Some(reason.to_string()),
        Ok(Ok(())) => studyloop_acceptance::approval::learner_unapproved(selection, caller),
        Err(_) => None,
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
    let ctx = &cell_context(ctx, &pins);
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
        ..
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

/// The context a cell's cases run in: the definition's learner budget for this cell
/// wins over `STUDYLOOP_ACC_MAX_*` (each case records which applied); a cell it gives
/// none keeps the selection's.
pub(super) fn cell_context(ctx: &TrialContext, pins: &Pins) -> TrialContext {
    match pins.definition.budget_for(&ctx.name) {
        Some(budget) => ctx.with_budget(budget),
        None => ctx.clone(),
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
    // The journey's own cassette: its seats record or replay beside its learner.
    let cassette = match studyloop_acceptance::case::cassette::open(ctx) {
        Ok(cassette) => cassette,
        Err(e) => return TrialReport::failed(redactor.redact(&format!("grading failed: {e}"))),
    };
    let approvals = seat_approvals(&ctx.selection);
    match grading::grade(
        dir,
        council,
        pins,
        redactor,
        &ctx.caller,
        cassette.as_ref(),
        approvals,
    ) {
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
