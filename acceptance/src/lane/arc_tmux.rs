//! The study arc over the CLI/tmux surface, one harness
//! (`cli-tmux::codex::study-arc`): the browser journey's arc (`journey::study_arc`
//! in the uat crate) with the real `studyloop study` in tmux. The learner actor
//! talks for the arc's seven turns (`study-arc-v1.json`); the mentor logs a
//! struggle, a win and a parked question through `studyloop-mcp` (in stub-provider
//! mode the stub scripts those `log_topic` calls, `crate::study_arc`); the learner
//! winds down, the session ends, `studyloop study --resume` runs with the product's
//! clock the next day (`STUDYLOOP_NOW`); the first reply after the resume must
//! review the struggle the product put into the persona; `studyloop search` finds
//! it. The journey writes nothing into the product but what the learner types.

use serde_json::json;

use super::cli_tmux::{
    attach, end, exit_harness, live_pane, pane_failure, start_study, stash_driver, wait_state,
};
use super::setup::{make_scratch, model_path, resolve_binary};
use crate::case::{Case, StepFailure, Steps, Transport, converse};
use crate::harness_spec::Resume;
use crate::runner::{TrialContext, TrialReport, TrialSpec};
use crate::selection::HarnessName;
use crate::study_arc::{
    ARC_BUDGET_TURNS, MENTOR_LOGS, SEARCH_WORDS, TOPIC, search_hit, struggle_item, tool_script,
};
use crate::turn_scripts::ARC_TURN_SCRIPT;

/// The one harness the CLI arc runs with (the first of the study candidates).
pub const HARNESS: HarnessName = HarnessName::Codex;
/// The learner's wind-down turn.
const WIND_DOWN: &str =
    "Let us wind down: what did I struggle with, what did I get right, and what is parked?";
/// The learner's first turn after the resume.
const GOOD_MORNING: &str = "Good morning! Where did we leave off yesterday?";

/// The trial name.
#[must_use]
pub(crate) fn trial_name() -> String {
    format!("cli-tmux::{HARNESS}::study-arc")
}

/// The trial: gated, needs the harness selected and on the scratch PATH, and a
/// learner the stub mentor's tool calls can follow ([`crate::study_arc::learner_unmet`]).
#[must_use]
pub fn trial(selection: &crate::selection::Selection) -> TrialSpec {
    super::gated_trial(trial_name(), HARNESS, run)
        .requires(crate::study_arc::learner_requirement(selection))
}

/// Runs the arc; evidence is written whatever happens.
pub fn run(ctx: &TrialContext, harness: HarnessName) -> TrialReport {
    super::run_lane(ctx, harness, drive)
}

fn err(e: impl std::fmt::Display) -> StepFailure {
    StepFailure::from_error(e)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    c.turn_script = ARC_TURN_SCRIPT;
    c.budget.max_turns = c.budget.max_turns.max(ARC_BUDGET_TURNS);
    c.step("scratch world", make_scratch)?;
    c.step("harness binary and version", resolve_binary)?;
    provision(c)?;
    let (first, session, mut driver) = start_study(c, TOPIC)?;
    let first_id = first.study_session_id().unwrap_or_default().to_owned();
    let talked = c.step("conversation", |c| {
        converse(c, Transport::Pane(&mut driver))
    });
    let answered = talked.map(|t| t.answered());
    let logged = answered.clone().and_then(|n| {
        c.step("the mentor logged through studyloop-mcp", |c| {
            topics_logged(c, "status-after-conversation", MENTOR_LOGS.len())
        })?;
        c.step("wind-down turn", |c| {
            let turn = driver.send_turn(WIND_DOWN).map_err(pane_failure)?.clone();
            c.record_pane_turn(&turn, n + 1)
        })
    });
    stash_driver(c, &driver, "first-day");
    drop(driver);
    logged?;
    // The stub's turn after the resume: the history's turns (learner + wind-down)
    // plus one when the harness resumes its conversation, else 1.
    let next_turn = match c.spec.resume {
        Resume::Supported => answered? + 2,
        Resume::Unsupported { .. } => 1,
    };
    c.step("study --end", |c| end(c, &session))?;
    let ended = c.step("the first day's ended_at", |c| {
        let state = wait_state(c, false)?;
        state
            .ended_at()
            .map(str::to_owned)
            .ok_or_else(|| err(format!("the ended state has no ended_at: {state}")))
    })?;
    let next = c.step("STUDYLOOP_NOW: the next day", |c| next_day(c, &ended))?;
    c.step("study --resume (the next day)", |c| {
        crate::door::studyloop(c, "study-resume", &["study", "--resume"]).map(drop)
    })?;
    let resumed = c.step("resumed session state", |c| wait_state(c, true))?;
    let (session, pane) = c.step("resumed live main pane", |c| live_pane(c, &resumed))?;
    let started = resumed.started_at().unwrap_or_default().to_owned();
    c.record
        .notes
        .push(format!("resumed at {started} (STUDYLOOP_NOW {next})"));
    let mut driver = c.step("resumed harness ready", |c| {
        attach(c, &session, &pane, next_turn)
    })?;
    let review = c.step(
        "the first turn after the resume: the mentor's review",
        |c| {
            let turn = driver
                .send_turn(GOOD_MORNING)
                .map_err(pane_failure)?
                .clone();
            c.record_pane_turn(&turn, next_turn)?;
            Ok(c.record
                .fidelity
                .last()
                .map(|t| t.text.clone())
                .unwrap_or_default())
        },
    );
    stash_driver(c, &driver, "next-day");
    let review = review?;
    c.check("the review recalls the struggle", |c| reviewed(c, &review))?;
    c.step("exit the resumed harness", |c| exit_harness(c, driver))?;
    c.step("study --end after resume", |c| end(c, &session))?;
    c.step("studyloop search finds the struggle", |c| {
        search(c, &first_id)
    })
}

/// The model path; with a stub, the mentor's scripted `log_topic` calls.
fn provision(c: &mut Case<'_>) -> Result<(), StepFailure> {
    // The stub is the mentor's model in local-model mode too.
    if !c.ctx.selection.auth_mode.stub_mentor() {
        return model_path(c, &[]);
    }
    let script = tool_script().to_json();
    let path = c.scratch()?.root().join("mentor-tools.json");
    std::fs::write(&path, &script).map_err(err)?;
    c.record.attach("stub/mentor-tools.json", script);
    let path = path.display().to_string();
    model_path(c, &["--tool-script", &path])
}

/// `studyloop status --json` shows at least `want` topics in the live feed (only the
/// mentor's `log_topic` calls write it here).
fn topics_logged(c: &mut Case<'_>, tag: &str, want: usize) -> Result<(), StepFailure> {
    let st = crate::door::status(c, tag)?;
    let n = st.topics_logged().unwrap_or(0);
    c.record
        .detail(json!({"active": st.active(), "topics_logged": n}));
    if st.active() == Some(true) && n >= want as u64 {
        return Ok(());
    }
    Err(err(format!(
        "the mentor logged {n} topic(s) through studyloop-mcp, expected {want} (active {}): the harness made no log_topic call (is studyloop-mcp registered in its config?)",
        st.active()
            .map_or_else(|| "unknown".to_owned(), |a| a.to_string())
    )))
}

/// The product's clock for every later `studyloop` call and the resumed pane:
/// one day after the first session ended.
fn next_day(c: &mut Case<'_>, ended_at: &str) -> Result<String, StepFailure> {
    let ended: jiff::Timestamp = ended_at.parse().map_err(err)?;
    let next = ended
        .checked_add(jiff::SignedDuration::from_hours(24))
        .map_err(err)?
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    c.env = std::mem::take(&mut c.env)
        .with_var("STUDYLOOP_NOW", &next)
        .map_err(err)?;
    c.record
        .detail(json!({"ended_at": ended_at, "studyloop_now": next}));
    Ok(next)
}

/// Stub mode: the harness sent the struggle to its model in the resume section
/// (the stub log's `recall`) and the reply read from the harness's own source
/// carries the stub's review line. A real model: the reply names the struggle.
fn reviewed(c: &mut Case<'_>, review: &str) -> Result<(), String> {
    let item = struggle_item();
    if !c.has_stub() {
        let lower = review.to_lowercase();
        return (lower.contains("late binding") || lower.contains("loop"))
            .then_some(())
            .ok_or_else(|| format!("the review does not name the struggle: {review:.300}"));
    }
    let records = c.stub_records().map_err(|e| e.to_string())?;
    if !records
        .iter()
        .any(|r| r.recall.as_deref() == Some(item.as_str()))
    {
        return Err(format!(
            "no request the harness sent after the resume carried `{item}` in a resume section"
        ));
    }
    let line = studyloop_stubs::recall::review_line(&item);
    if review.contains(&line) {
        Ok(())
    } else {
        Err(format!(
            "the reply after the resume lacks `{line}`: {review:.300}"
        ))
    }
}

fn search(c: &mut Case<'_>, first_id: &str) -> Result<(), StepFailure> {
    let out = crate::door::studyloop(c, "search", &["search", SEARCH_WORDS, "--json"])?;
    let (found, detail) = search_hit(&out, first_id).map_err(err)?;
    c.record
        .detail(json!({"query": SEARCH_WORDS, "result": detail}));
    if found {
        Ok(())
    } else {
        Err(err(format!(
            "`studyloop search {SEARCH_WORDS}` has no hit for the first session {first_id}: {out:.600}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trial_is_named_for_its_surface_harness_and_arc() {
        assert_eq!(trial_name(), "cli-tmux::codex::study-arc");
        let problems = crate::catalogue::validate(&[trial_name()]);
        assert!(
            !problems.iter().any(|p| p.contains("study-arc")),
            "{problems:?}"
        );
    }
}
