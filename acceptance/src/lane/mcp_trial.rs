//! `mcp::<harness>`: a real harness calls the product over MCP (issue 14 §6).
//!
//! The real `studyloop study --agent H` starts the pinned harness in tmux in
//! a scratch world; the product has registered `studyloop-mcp` as `studyloop`
//! in the harness's own config. The cell's stub provider runs with a tool
//! script (`studyloop_stubs::tool_script`): one learner turn carrying the trigger
//! makes the stub "model" ask for the tool ending in `log_topic`, in the
//! protocol's own shape. The harness runs it through `studyloop-mcp`, sends
//! the result back, and the stub answers that follow-up with the turn's
//! reply. Green when the stub's log shows the call and a non-refused result,
//! the topic is in the product's database (`study_progress`, this session's
//! id, confidence from `win`) and in the session's topic feed. Stub-provider
//! mode only (only a scripted model calls a tool on cue); a harness whose
//! pinned version has no MCP client skips with the harness table's reason.

use super::cli_tmux::{end, pane_failure, start_study, stash_driver};
use super::setup::{make_scratch, model_path, resolve_binary};
use super::{gated_trial, run_lane_as};
use crate::case::{Case, Checks, StepFailure, Steps};
use crate::door::{ProductDb, SessionState, StateField, TOPIC_FEED};
use crate::evidence::Surface;
use crate::harness_spec::McpSupport;
use crate::runner::{Requirement, TrialSpec};
use crate::selection::HarnessName;
use crate::validate::CheckError;

/// The text the stub's tool script fires on.
const TRIGGER: &str = "MCP-CHECK";

/// The trial name for `harness`.
pub(crate) fn trial_name(harness: HarnessName) -> String {
    format!("mcp::{harness}")
}

/// The trial: gated, needs the harness selected and on the scratch PATH, and an
/// MCP client in the harness. That last one is decided when the catalogue is
/// built, not at run time: under nextest a run-time skip must be reported as a
/// failure (`mcp::pi` failed a sharded run so), a listed skip is just a skip.
pub fn trial(harness: HarnessName) -> TrialSpec {
    let unmet = match crate::harness_spec::spec(harness).mcp {
        McpSupport::Supported => None,
        McpSupport::Unsupported { reason } => Some(reason.to_owned()),
    };
    gated_trial(trial_name(harness), harness, |ctx, h| {
        run_lane_as(ctx, h, Surface::Mcp, drive)
    })
    .requires(Requirement::Checked {
        what: "an MCP client in the harness".into(),
        unmet,
    })
}

/// The topic this cell logs (unique per harness and run seed).
fn topic(l: &Case<'_>) -> String {
    format!("mcp lane {} {}", l.harness, l.seed)
}

/// The tool script: the trigger turn calls `log_topic(topic, win, note)`.
fn script(topic: &str) -> studyloop_stubs::ToolScript {
    studyloop_stubs::ToolScript::new(vec![studyloop_stubs::ToolStep {
        trigger: TRIGGER.to_owned(),
        tool: "log_topic".to_owned(),
        arguments: serde_json::json!({"topic": topic, "status": "win", "note": "logged over MCP by the mcp lane"}),
    }])
}

fn drive(lane: &mut Case<'_>) -> Result<(), StepFailure> {
    if !lane.ctx.selection.auth_mode.stub_mentor() {
        return Err(StepFailure::skipped(
            "the MCP lane needs the stub provider's scripted tool call: run it with STUDYLOOP_ACC_AUTH_MODE=stub-provider (the default) or local-model",
        ));
    }
    lane.step("scratch world", make_scratch)?;
    lane.step("harness binary and version", resolve_binary)?;
    let topic = topic(lane);
    let file = lane.step("tool script", |l| {
        let file = l.scratch()?.root().join("tool-script.json");
        let text = script(&topic).to_json();
        std::fs::write(&file, &text)
            .map_err(|e| StepFailure::errored(format!("cannot write {}: {e}", file.display())))?;
        l.record.attach("stub/tool-script.json", text);
        Ok(file)
    })?;
    let file_arg = file.to_string_lossy().into_owned();
    model_path(lane, &["--tool-script", &file_arg])?;
    let title = format!("MCP check: {}", lane.harness);
    let (state, session, mut driver) = start_study(lane, &title)?;
    let turn = format!("{TRIGGER}: please log the topic for me, then answer briefly.");
    let sent = lane.step("the turn that makes the model call log_topic", |_| {
        driver.send_turn(&turn).map(drop).map_err(pane_failure)
    });
    stash_driver(lane, &driver, "mcp");
    sent?;
    lane.verify(
        "log_topic went over MCP into the product",
        Checks::new()
            .check(
                "stub log: the call and its unrefused result",
                |l: &mut Case<'_>| call_and_result(l),
            )
            .check("db: study_progress row for the topic", |l| {
                db_progress(l, &state, &topic)
            })
            .check("the session's topic feed", |l| topic_feed(l, &topic)),
    )?;
    drop(driver);
    lane.step("study --end", |l| end(l, &session))
}

/// The stub called a `…log_topic` tool, and a later request carried a result
/// that is not one of the product's refusals.
fn call_and_result(l: &Case<'_>) -> Result<(), CheckError> {
    let records = l.stub_records()?;
    let call = records
        .iter()
        .find_map(|r| r.tool_call.as_ref())
        .ok_or_else(|| {
            let notes: Vec<&str> = records
                .iter()
                .filter_map(|r| r.tool_note.as_deref())
                .collect();
            CheckError::Mcp(format!(
                "the stub never called a tool ({} requests; notes: {notes:?})",
                records.len()
            ))
        })?;
    if !studyloop_stubs::tool_script::name_matches(&call.name, "log_topic") {
        return Err(CheckError::Mcp(format!("the stub called {}", call.name)));
    }
    let result = records
        .iter()
        .find_map(|r| r.tool_result.as_deref())
        .ok_or_else(|| {
            CheckError::Mcp(format!("no request carried the result of {}", call.name))
        })?;
    let refused = [
        "not_found:",
        "invalid",
        "conflict:",
        "not_ready:",
        "plan_error:",
        "scope_unconfigured",
    ]
    .iter()
    .any(|p| result.contains(p));
    if refused || !result.contains("logged") {
        return Err(CheckError::Mcp(format!(
            "{} came back refused or unrecognised: {result}",
            call.name
        )));
    }
    Ok(())
}

fn db_progress(l: &Case<'_>, state: &SessionState, topic: &str) -> Result<(), CheckError> {
    let id = state.require(StateField::StudySessionId)?;
    let db = ProductDb::path_in(l.scratch().map_err(|_| CheckError::NoScratch)?.config_dir());
    let row = ProductDb::open(&db)?.progress(topic)?;
    match row {
        Some((confidence, sid)) if confidence == "confident" && sid == id => Ok(()),
        Some(other) => Err(CheckError::Mcp(format!(
            "study_progress for {topic:?} is (confidence, session) {other:?}, expected (confident, {id})"
        ))),
        None => Err(CheckError::Mcp(format!(
            "no study_progress row for {topic:?} in {}",
            db.display()
        ))),
    }
}

fn topic_feed(l: &mut Case<'_>, topic: &str) -> Result<(), CheckError> {
    let feed = l
        .scratch()
        .map_err(|_| CheckError::NoScratch)?
        .config_dir()
        .join(TOPIC_FEED);
    let text = std::fs::read_to_string(&feed)
        .map_err(|e| CheckError::Mcp(format!("cannot read {}: {e}", feed.display())))?;
    l.record.attach("product/session-topics.md", text.clone());
    if text.lines().any(|line| line.contains(topic)) {
        Ok(())
    } else {
        Err(CheckError::Mcp(format!(
            "{} has no line for {topic:?}: {text:?}",
            feed.display()
        )))
    }
}
