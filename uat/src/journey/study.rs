//! `journey::study_session`: the graded journey. `studyloop web` in a scratch world
//! starts an ACP session with a REAL pinned harness (the first of codex, claude,
//! opencode, pi that is selected and installed), the persona goes first as the
//! product's console sends it, the selected learner actor talks for [`TURNS`] turns,
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
use studyloop_acceptance::bins;
use studyloop_acceptance::catalogue;
use studyloop_acceptance::harness::{self, HarnessSpec, provision};
use studyloop_acceptance::lane::{LaneFailure, validate};
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::scratch::{Env, Scratch};
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_acceptance::web_acp::{AcpMentor, WebServer};
use studyloop_actors::{ActorOptions, Budget, CancelToken, Outcome as ActorOutcome, factory};
use studyloop_stubs::StubProvider;

use super::product;
use super::record::Journey;
use super::web::{self, Started, errored};

/// Learner turns after the persona (the contract's floor).
pub const TURNS: u32 = 3;
/// The harnesses the journey may use, in order of preference.
pub const CANDIDATES: [HarnessName; 4] = [
    HarnessName::Codex,
    HarnessName::Claude,
    HarnessName::Opencode,
    HarnessName::Pi,
];
/// The study topic (the v1 turn script's subject).
pub const TOPIC: &str = "Python decorators and closures";
/// The persona word the focus persona carries (what the stub reports).
const FOCUS_PERSONA: &str = "studyloop-focus";
/// The start includes the agent's ACP handshake.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// One `studyloop` CLI call.
pub(super) const CLI_TIMEOUT: Duration = Duration::from_secs(60);

/// The note on what the summary's grading covers.
pub const NOTE: &str = "graded journey: the council grades this bundle after it is written; the arbitration sits beside the private bundle";

/// What the journey holds while it runs.
struct Run<'a> {
    ctx: &'a TrialContext,
    spec: &'static HarnessSpec,
    seed: u64,
    env: Env,
    stub: Option<StubProvider>,
}

/// Runs the journey with `harness`; returns the record and how it ended (shutdown included).
pub fn run(ctx: &TrialContext, harness: HarnessName) -> (Journey, Result<(), LaneFailure>) {
    let mode = ctx.selection.auth_mode;
    let mut j = Journey::new(ctx.name.as_str(), NOTE);
    let mut seed_bytes = [0u8; 8];
    // A failed getrandom leaves seed 0: still a valid, recorded seed.
    let _ = getrandom::fill(&mut seed_bytes);
    let mut run = Run {
        ctx,
        spec: harness::spec(harness),
        seed: u64::from_le_bytes(seed_bytes) >> 1,
        env: Env::default(),
        stub: None,
    };
    j.facts.harness = Some(harness.to_string());
    j.facts.auth_mode = Some(mode);
    j.facts.actor_backend = Some(ctx.selection.actor.as_str().to_owned());
    j.notes.push(format!(
        "graded journey: {harness} over web ACP, auth mode {}, learner actor {}",
        mode.as_str(),
        ctx.selection.actor.as_str()
    ));
    j.notes.push("topics: logged by the journey through `studyloop topic` (as the mentor's tool call would), so the learner record does not depend on the model calling tools".into());
    j.notes.push("resume: not exercised (the web console has no resume door); session_lifecycle covers start, wind-down and end".into());
    if mode == AuthMode::StubProvider {
        j.facts.seeds.push(("stub_nonce".into(), run.seed));
        j.notes.push("stub-provider mode: studyloop-stub-provider (a stub) is the harness's model, so the mentor's replies are canned echoes; only the hermetic council grades it, and the sign-off never accepts that council".into());
    }
    let mut scratch = None;
    let mut server = None;
    let result = drive(&mut run, &mut j, &mut scratch, &mut server);
    if let Some(stub) = run.stub.as_mut() {
        if let Ok(log) = std::fs::read(stub.log_path()) {
            j.attach("stub-requests.jsonl", log);
        }
        stub.stop();
    }
    let result = web::shutdown(&mut j, server, scratch, result);
    (j, result)
}

fn drive(
    r: &mut Run<'_>,
    j: &mut Journey,
    scratch_slot: &mut Option<Scratch>,
    server_slot: &mut Option<WebServer>,
) -> Result<(), LaneFailure> {
    let scratch = j.step("scratch", "a scratch world for the auth mode", |_| {
        Scratch::create_with(r.ctx.caller.clone(), r.ctx.selection.auth_mode).map_err(errored)
    })?;
    r.env = scratch.env();
    let scratch = scratch_slot.insert(scratch);
    j.step(
        "harness",
        "the harness and its ACP binary on the scratch PATH, with --version",
        |j| resolve(r, j, scratch),
    )?;
    j.step(
        "provision",
        "point the harness at its model for the auth mode",
        |j| provision(r, j, scratch),
    )?;
    let server = j.step(
        "server-start",
        "studyloop web --port 0 in the scratch world",
        |j| web::start_server(j, scratch, &r.env),
    )?;
    let server = server_slot.insert(server);
    let agent = r.spec.name.as_str();
    let started = j.step(
        "session-start",
        "POST /api/session/start (transport acp) with the real harness",
        |j| web::start_session(j, server, TOPIC, agent, START_TIMEOUT),
    )?;
    let mut mentor = j.step(
        "persona",
        "attach the session socket; the persona is the first prompt",
        |j| persona(r, j, server, &started),
    )?;
    let talked = j.step(
        "conversation",
        "the learner actor talks with the mentor",
        |j| converse(r, j, scratch, &mut mentor),
    );
    let logged = talked.and_then(|()| {
        j.step(
            "topics",
            "log the topic and the struggle through `studyloop topic`",
            |j| product::log_topics(&r.env, j, scratch),
        )
    });
    let wound = logged.and_then(|()| {
        j.step(
            "wind-down",
            "`studyloop status --json`: the live session and its logged topics",
            |j| product::status(&r.env, j, scratch),
        )
    });
    let ended = j.step(
        "end",
        "`stop` on the socket; state ended; the agent exited",
        |j| web::end_session(j, server, mentor, &started),
    );
    wound?;
    ended?;
    if r.stub.is_some() {
        j.step(
            "stub-log",
            "the stub's log: persona and history length on every turn",
            |_| {
                let records = r
                    .stub
                    .as_ref()
                    .map(StubProvider::records)
                    .transpose()
                    .map_err(errored)?;
                let turns: Vec<u64> = (0..=u64::from(TURNS)).collect();
                validate::stub_history(&records.unwrap_or_default(), r.seed, &turns, FOCUS_PERSONA)
                    .map_err(errored)
            },
        )?;
    }
    j.step(
        "learner-record",
        "the DB rows the session left (read-only): closed row, progress, notes",
        |j| product::learner_record(&r.env, j, scratch, &started),
    )?;
    j.step(
        "search",
        "`studyloop search closures --json` finds the session's note",
        |j| product::search(&r.env, j, scratch, &started.id),
    )
}

fn resolve(r: &mut Run<'_>, j: &mut Journey, scratch: &Scratch) -> Result<(), LaneFailure> {
    let h = r.spec.name;
    let fix = studyloop_acceptance::probe::install_hint(h);
    let binary = r
        .env
        .find_binary(h.binary())
        .ok_or_else(|| LaneFailure::skipped(format!("{} not found on PATH ({fix})", h.binary())))?;
    let acp = r
        .spec
        .acp
        .ok_or_else(|| LaneFailure::skipped(format!("{h} has no ACP path")))?;
    let adapter = r.env.find_binary(acp.argv[0]).ok_or_else(|| {
        LaneFailure::skipped(format!("{} not found on PATH ({fix})", acp.argv[0]))
    })?;
    let mut cmd = scratch.command(&binary);
    cmd.arg("--version");
    let done = scratch.run(&mut cmd, CLI_TIMEOUT).map_err(errored)?;
    let text = format!("{}{}", done.stdout_text(), done.stderr_text());
    let version = text
        .lines()
        .map(str::trim)
        .find(|s| s.bytes().any(|b| b.is_ascii_digit()))
        .map(str::to_owned);
    j.detail(json!({"binary": binary, "acp_binary": adapter, "version": version}));
    j.facts.harness_version = version;
    j.facts.binary_path = Some(binary.display().to_string());
    Ok(())
}

fn provision(r: &mut Run<'_>, j: &mut Journey, scratch: &Scratch) -> Result<(), LaneFailure> {
    let mode = r.ctx.selection.auth_mode;
    if mode == AuthMode::StubProvider {
        let binary = bins::path("studyloop-stub-provider").map_err(errored)?;
        let seed = r.seed.to_string();
        let stub = StubProvider::spawn(
            &binary,
            &scratch.root().join("stub"),
            // issue 13 (h-stub): journeys meet realistic Markdown replies.
            ["--seed", seed.as_str(), "--replies", "realistic"],
        )
        .map_err(errored)?;
        r.stub = Some(stub);
    }
    let url = r.stub.as_ref().map(StubProvider::base_url);
    let done = provision::provision(r.spec, mode, scratch.home(), url.as_deref(), &r.env)
        .map_err(errored)?;
    for (name, value) in &done.env {
        r.env = std::mem::take(&mut r.env)
            .with_var(name, value)
            .map_err(errored)?;
    }
    j.detail(json!({"auth_mode": mode.as_str(), "stub": url, "env_added": done.env.iter().map(|(k, _)| *k).collect::<Vec<_>>(), "files": done.files.len()}));
    j.notes.extend(done.notes);
    Ok(())
}

/// In stub-provider mode, the reply to stub turn `n` must carry its nonce.
fn prove(r: &Run<'_>, n: u64, reply: &str) -> Result<(), String> {
    if r.stub.is_none() {
        return if reply.trim().is_empty() {
            Err(format!("turn {n}: empty reply"))
        } else {
            Ok(())
        };
    }
    let want = format!("MENTOR-REPLY {n} {}", studyloop_stubs::nonce(r.seed, n));
    if reply.contains(&want) {
        Ok(())
    } else {
        Err(format!(
            "turn {n}: reply {reply:?} lacks the stub's {want:?}"
        ))
    }
}

fn persona(
    r: &Run<'_>,
    j: &mut Journey,
    server: &WebServer,
    started: &Started,
) -> Result<AcpMentor, LaneFailure> {
    let mut mentor =
        AcpMentor::attach(&server.addr, &started.ws_url, r.spec.turn_timeout).map_err(errored)?;
    let reply = mentor.deliver_persona(&started.persona).map_err(errored)?;
    j.detail(json!({"agent": mentor.agent, "reply_chars": reply.chars().count()}));
    j.attach("persona-reply.txt", reply.clone());
    prove(r, 0, &reply).map_err(errored)?;
    Ok(mentor)
}

fn converse(
    r: &Run<'_>,
    j: &mut Journey,
    scratch: &Scratch,
    mentor: &mut AcpMentor,
) -> Result<(), LaneFailure> {
    let kind = r.ctx.selection.actor;
    let options = ActorOptions {
        turn_script: Some(catalogue::default_turn_script().map_err(errored)?),
        harness_socket_dir: Some(scratch.root().join("actor-tmux")),
        ..ActorOptions::default()
    };
    let mut actor = factory::build(kind, &r.ctx.caller, options).map_err(errored)?;
    j.facts.actor_model = actor.model().map(str::to_owned);
    let mut budget = Budget::new(TURNS, None).map_err(errored)?;
    let transcript = actor.converse(mentor, &mut budget, &CancelToken::new());
    let answered = u32::try_from(transcript.turns.len()).unwrap_or(u32::MAX);
    j.detail(json!({"outcome": transcript.outcome, "turns": answered, "error": transcript.error}));
    let replies: Vec<String> = transcript
        .turns
        .iter()
        .map(|t| t.mentor_reply.clone())
        .collect();
    let (outcome, error) = (transcript.outcome, transcript.error.clone());
    j.transcript = Some(transcript);
    if answered < TURNS || error.is_some() {
        let why = error.unwrap_or_else(|| "the learner stopped early".into());
        let message = format!(
            "{answered} of {TURNS} turns answered (actor outcome {}): {why}",
            outcome.as_str()
        );
        return Err(match outcome {
            ActorOutcome::BudgetExhausted => LaneFailure::budget(message),
            _ => errored(message),
        });
    }
    for (k, reply) in replies.iter().enumerate() {
        prove(r, k as u64 + 1, reply).map_err(errored)?;
    }
    Ok(())
}
