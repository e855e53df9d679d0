//! `journey::study_session`: the graded journey. `studyloop web` in a scratch world
//! starts an ACP session with a REAL pinned harness (the first of codex, claude,
//! opencode, pi that is selected and installed), the persona goes first as the
//! product's console sends it, the selected learner actor talks for the budgeted turns,
//! the topic and the struggle are logged through the product (`studyloop topic`), the
//! status is read as the wind-down, the session is ended, and the learner record is read
//! back from the product's database (read-only) and searched. The bundle then goes to
//! the council (`grading`).
//!
//! In stub-provider mode the harness's model is `studyloop-stub-provider` (a stub), so
//! every reply is proven by its nonce and the stub log proves persona and history; the
//! words are canned echoes, which is why that mode is graded by the hermetic council
//! only. The web console has no resume door, so resume is not part of this journey.

use std::time::Duration;

use serde_json::json;
use studyloop_acceptance::case::{Case, Destination, Finished, StepFailure, Steps};
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::lane::setup::{make_world, provision_harness_with, resolve_binary};
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_acceptance::validate;

use super::product;
use super::web::{self, errored};
/// The harnesses the journey may use, in order of preference.
pub const CANDIDATES: [HarnessName; 4] = [
    HarnessName::Codex,
    HarnessName::Claude,
    HarnessName::Opencode,
    HarnessName::Pi,
];
/// The study topic (the v1 turn script's subject).
pub const TOPIC: &str = "Python decorators and closures";
/// The start includes the agent's ACP handshake.
pub(super) const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The note on what the summary's grading covers.
pub const NOTE: &str = "graded journey: the council grades this bundle after it is written; the arbitration sits beside the private bundle";

/// Runs the journey with `harness` as a case into `dest`; how it ended (finish step
/// included).
pub fn run(ctx: &TrialContext, harness: HarnessName, dest: &dyn Destination) -> Finished {
    let mode = ctx.selection.auth_mode;
    let mut case = Case::new(ctx, harness, Surface::Journey);
    let notes = &mut case.record.notes;
    notes.push(format!(
        "graded journey: {harness} over web ACP, auth mode {}, learner actor {}",
        mode.as_str(),
        ctx.selection.actor.as_str()
    ));
    notes.push("topics: logged by the journey through `studyloop topic` (as the mentor's tool call would), so the learner record does not depend on the model calling tools".into());
    notes.push("resume: not exercised (the web console has no resume door); session_lifecycle covers start, wind-down and end".into());
    if mode.stub_mentor() {
        notes.push(format!("{mode} mode: studyloop-stub-provider (a stub) is the harness's model, so the mentor's replies are canned echoes; the sign-off never accepts a run in this mode"));
    }
    if mode == AuthMode::LocalModel {
        notes.push("local-model mode: the learner and the `local` council's judges are SmolLM2-135M-Instruct served by llama.cpp behind the LiteLLM proxy (real model text, offline)".into());
    }
    case.run(dest, drive)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    c.step_doing("scratch", "a scratch world for the auth mode", make_world)?;
    c.step_doing(
        "harness",
        "the harness and its ACP binary on the scratch PATH, with --version",
        resolve,
    )?;
    c.step_doing(
        "provision",
        "point the harness at its model for the auth mode",
        provision,
    )?;
    let opening = web::Opening {
        start_what: "POST /api/session/start (transport acp) with the real harness",
        persona_what: "attach the session socket; the persona is the first prompt",
        topic: TOPIC,
        agent: c.harness.as_str(),
        start_timeout: START_TIMEOUT,
        turn_timeout: c.spec.turn_timeout,
    };
    let started = web::open_session(c, opening, persona)?;
    let talked = c.step_doing(
        "conversation",
        "the learner actor talks with the mentor",
        conversation,
    );
    let logged = talked.and_then(|answered| {
        c.step_doing(
            "topics",
            "log the topic and the struggle through `studyloop topic`",
            product::log_topics,
        )
        .map(|()| answered)
    });
    let wound = logged.and_then(|answered| {
        c.step_doing(
            "wind-down",
            "`studyloop status --json`: the live session and its logged topics",
            product::status,
        )
        .map(|()| answered)
    });
    let ended = c.step_doing(
        "end",
        "`stop` on the socket; state ended; the agent exited",
        |c| web::end_session(c, &started),
    );
    let answered = wound?;
    ended?;
    if c.has_stub() {
        c.step_doing(
            "stub-log",
            "the stub's log: persona and history length on every turn",
            |c| {
                let turns: Vec<u64> = (0..=u64::from(answered)).collect();
                validate::stub_history(
                    &c.stub_records().map_err(errored)?,
                    c.seed,
                    &turns,
                    validate::STUDY_PERSONA,
                )
                .map_err(errored)
            },
        )?;
    }
    c.step_doing(
        "learner-record",
        "the DB rows the session left (read-only): closed row, progress, notes",
        |c| product::learner_record(c, &started),
    )?;
    c.step_doing(
        "search",
        "`studyloop search closures --json` finds the session's note",
        |c| product::search(c, &started.id),
    )
}

/// The harness binary (with `--version`) and its ACP adapter on the scratch PATH.
pub(super) fn resolve(c: &mut Case<'_>) -> Result<(), StepFailure> {
    resolve_binary(c)?;
    let h = c.harness;
    let fix = studyloop_acceptance::harness_spec::install_hint(h);
    let acp = c
        .spec
        .acp
        .ok_or_else(|| StepFailure::skipped(format!("{h} has no ACP path")))?;
    let adapter = c.env.find_binary(acp.argv[0]).ok_or_else(|| {
        StepFailure::skipped(format!("{} not found on PATH ({fix})", acp.argv[0]))
    })?;
    let facts = &c.record.facts;
    let detail = json!({"binary": facts.binary_path, "acp_binary": adapter, "version": facts.harness_version});
    c.record.detail(detail);
    Ok(())
}

pub(super) fn provision(c: &mut Case<'_>) -> Result<(), StepFailure> {
    provision_with(c, &[])
}

/// [`provision`], with `stub_args` for the stub provider in stub-provider mode.
pub(super) fn provision_with(c: &mut Case<'_>, stub_args: &[&str]) -> Result<(), StepFailure> {
    let before: Vec<String> = c.env.iter().map(|(k, _)| k.to_owned()).collect();
    provision_harness_with(c, stub_args)?;
    let added: Vec<String> = c
        .env
        .iter()
        .map(|(k, _)| k.to_owned())
        .filter(|k| !before.contains(k))
        .collect();
    let stub = c
        .slots
        .stub
        .as_ref()
        .map(studyloop_stubs::StubProvider::base_url);
    let mode = c.ctx.selection.auth_mode;
    c.record
        .detail(json!({"auth_mode": mode.as_str(), "stub": stub, "env_added": added}));
    Ok(())
}

fn persona(c: &mut Case<'_>, reply: &str) -> Result<(), StepFailure> {
    let agent = web::agent(c);
    c.record
        .detail(json!({"agent": agent, "reply_chars": reply.chars().count()}));
    c.record.attach("persona-reply.txt", reply.to_owned());
    c.prove_reply(0, reply).map_err(errored)
}

/// The learner talks; every reply is proven. Returns the learner turns answered.
fn conversation(c: &mut Case<'_>) -> Result<u32, StepFailure> {
    let talk = web::talk(c)?;
    for (k, reply) in talk.replies.iter().enumerate() {
        c.prove_reply(k as u64 + 1, &reply.text).map_err(errored)?;
    }
    Ok(talk.answered())
}
