//! `journey::study_arc`: the full study arc, driven through the browser UI. In a
//! scratch world `studyloop web` runs a REAL pinned harness over ACP (the first of
//! `study::CANDIDATES` selected and installed); real headless Chromium starts the
//! session from the Dashboard, the console sends the persona, the selected learner
//! actor talks for the arc's seven turns (`study-arc-v1.json`: a struggle, a win, a
//! tangent), the mentor logs the struggle, the win and the parked tangent through
//! the product's MCP tools (the harness calls `studyloop-mcp`; the journey never
//! writes a topic), the learner winds down and ends from the console. Then the
//! product restarts with its clock the next day (`STUDYLOOP_NOW`), the Dashboard's
//! resume box starts the session again, and the mentor's opening review must recall
//! the struggle from the resume context the product put into the persona. Last,
//! `studyloop search` with the struggle's own words finds the first session.
//!
//! Evidence: a screenshot and the page HTML per browser step (`browser/NN-*.png|html`)
//! and Chromium's own network trace (`browser/network-trace.jsonl`: every HTTP
//! request and WebSocket frame, from chromedriver's performance log), beside the
//! usual transcript, steps and product outputs. The checks on what the product
//! recorded live in [`super::arc_checks`].

use std::time::Duration;

use serde_json::json;
use studyloop_acceptance::case::converse;
use studyloop_acceptance::case::{Case, Destination, Finished, StepFailure, Steps, Transport};
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::lane::setup::make_world;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::selection::HarnessName;
use studyloop_acceptance::study_arc::{ARC_BUDGET_TURNS, ARC_TURNS, TOPIC};
use studyloop_acceptance::turn_scripts::ARC_TURN_SCRIPT;
use studyloop_acceptance::validate;
use studyloop_acceptance::web_acp::browser::{self, Browser};
use studyloop_acceptance::web_acp::journey::{self, BrowserMentor, Snapshots};
use studyloop_acceptance::web_acp::trace::NetworkTrace;
use studyloop_actors::Mentor;

use super::arc_checks::{self, Live};
use super::study;
use super::web::{self, errored};

/// The learner's wind-down, typed into the console after the conversation.
pub const WIND_DOWN: &str = "Let us wind down: what did I struggle with today, what did I get right, and what did we park for later?";
/// The start includes the agent's ACP handshake.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the server gets to stop before the restart on the next day.
const SERVER_STOP: Duration = Duration::from_secs(10);

/// The note on what the summary's grading covers.
pub const NOTE: &str = "graded journey (the study arc through the browser): the council grades this bundle after it is written; the arbitration sits beside the private bundle";

/// Runs the arc with `harness` as a case into `dest`; how it ended (finish step included).
pub fn run(ctx: &TrialContext, harness: HarnessName, dest: &dyn Destination) -> Finished {
    let mode = ctx.selection.auth_mode;
    let mut case = Case::new(ctx, harness, Surface::Journey);
    case.turn_script = ARC_TURN_SCRIPT;
    case.budget.max_turns = case.budget.max_turns.max(ARC_BUDGET_TURNS);
    let notes = &mut case.record.notes;
    notes.push(format!(
        "study arc: {harness} over web ACP through headless Chromium, auth mode {}, learner actor {}, at least {ARC_TURNS} learner turns ({ARC_TURN_SCRIPT})",
        mode.as_str(),
        ctx.selection.actor.as_str()
    ));
    notes.push("topics: logged by the mentor through studyloop-mcp's log_topic (the harness's tool call); the journey only reads them back".into());
    notes.push("resume: a second `studyloop web` with STUDYLOOP_NOW set to the day after the first session ended, started from the Dashboard's resume box".into());
    if mode.stub_mentor() {
        notes.push("stub mentor (stub-provider or local-model mode): studyloop-stub-provider (a stub) is the harness's model: its replies are canned Markdown, its tool calls scripted and its review line quotes only the resume context it received; only the hermetic council grades it".into());
    }
    case.run(dest, drive)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    c.step_doing("scratch", "a scratch world for the auth mode", make_world)?;
    c.step_doing(
        "harness",
        "the harness and its ACP binary on the scratch PATH, with --version",
        study::resolve,
    )?;
    c.step_doing(
        "provision",
        "point the harness at its model for the auth mode (stub: with the mentor's scripted tool calls)",
        arc_checks::provision,
    )?;
    c.step_doing(
        "server-start",
        "studyloop web --port 0 in the scratch world",
        web::start_server,
    )?;
    c.step_doing(
        "browser",
        "headless Chromium with its performance log (network events)",
        |c| {
            let scratch = c.scratch()?;
            let profile = browser::profile_dir(scratch.tmp_dir()).map_err(errored)?;
            let chrome = Browser::launch_traced(scratch, &profile).map_err(errored)?;
            c.slots.put_browser(chrome);
            Ok(())
        },
    )?;
    // The console borrows the browser while the case records steps: out of its slot
    // (its Ctrl-C watch stays), back in for release.
    let chrome = c
        .slots
        .browser
        .take()
        .ok_or_else(|| StepFailure::errored("no browser"))?;
    let mut arc = Arc {
        chrome: &chrome,
        shots: Snapshots::default(),
        trace: NetworkTrace::default(),
    };
    let browsed = browse(c, &mut arc);
    let kept = keep_browser_evidence(c, &mut arc);
    c.slots.browser = Some(chrome);
    let first = browsed?;
    kept?;
    c.step_doing(
        "search",
        "`studyloop search` with the struggle's own words finds the first session",
        |c| arc_checks::search(c, &first.id),
    )
}

/// The browser, its per-step snapshots and its network trace.
struct Arc<'b> {
    chrome: &'b Browser,
    shots: Snapshots,
    trace: NetworkTrace,
}

impl Arc<'_> {
    /// Moves Chromium's network events gathered since the last drain into the trace.
    fn drain(&mut self) -> Result<(), StepFailure> {
        let events = self.chrome.network_log().map_err(errored)?;
        self.trace.extend(events);
        Ok(())
    }
}

/// Both sessions; returns the first (the one the struggle was logged in).
fn browse(c: &mut Case<'_>, arc: &mut Arc<'_>) -> Result<Live, StepFailure> {
    let first = first_session(c, arc)?;
    let ended_at = first.ended_at.clone().ok_or_else(|| {
        errored("the first session's state has no ended_at to resume the next day from")
    })?;
    c.step_doing(
        "next-day",
        "restart `studyloop web` with STUDYLOOP_NOW one day after the first session ended",
        |c| next_day(c, &ended_at),
    )?;
    resumed_session(c, arc, &first)?;
    arc.drain()?;
    let trace = arc.trace.clone();
    c.verify(
        "the browser's network trace",
        arc_checks::trace_checks(trace),
    )?;
    Ok(first)
}

fn start_in_browser(
    c: &mut Case<'_>,
    arc: &mut Arc<'_>,
    resume: bool,
) -> Result<Live, StepFailure> {
    let base = format!("http://{}", c.server()?.addr);
    let agent = c.harness.as_str();
    let timeout = START_TIMEOUT.max(c.spec.turn_timeout);
    let started = journey::start_acp_session(
        arc.chrome,
        &mut arc.shots,
        &base,
        (TOPIC, agent, resume),
        timeout,
    )
    .map_err(errored);
    let live = arc_checks::live_state(c)?;
    started?;
    Ok(live)
}

fn first_session(c: &mut Case<'_>, arc: &mut Arc<'_>) -> Result<Live, StepFailure> {
    let live = c.step_doing(
        "session-start",
        "the Dashboard form starts an ACP session; the console sends the persona",
        |c| start_in_browser(c, arc, false),
    )?;
    let turn_timeout = c.spec.turn_timeout;
    let shots = std::mem::take(&mut arc.shots);
    let mut mentor = BrowserMentor::new(arc.chrome, shots, turn_timeout, 1);
    let result = first_conversation(c, &mut mentor, &live);
    arc.shots = std::mem::take(&mut mentor.shots);
    drop(mentor);
    result?;
    let state = c.step_doing(
        "end-state",
        "state ended, the agent exited, the ended_at the resume counts from",
        |c| arc_checks::ended(c, &live),
    )?;
    c.step_doing(
        "learner-record",
        "the DB rows the session left (read-only): closed row, the mentor's struggle, win and parked question in its notes and progress",
        |c| arc_checks::learner_record(c, &live),
    )?;
    arc.drain()?;
    Ok(Live {
        ended_at: state,
        ..live
    })
}

fn first_conversation(
    c: &mut Case<'_>,
    mentor: &mut BrowserMentor<'_>,
    live: &Live,
) -> Result<(), StepFailure> {
    let talk = c.step_doing(
        "conversation",
        "the learner actor talks with the mentor through the console",
        |c| converse(c, Transport::Console(mentor)),
    )?;
    c.check("every reply shown in the console is proven", |c| {
        talk.replies
            .iter()
            .enumerate()
            .try_for_each(|(k, r)| c.prove_reply(k as u64 + 1, &r.text))
    })?;
    let answered = talk.answered();
    c.step_doing(
        "mentor-tools",
        "the mentor logged a struggle, a win and a parked question through studyloop-mcp (the harness's tool calls)",
        |c| arc_checks::mentor_logged(c, live),
    )?;
    c.step_doing(
        "wind-down",
        "the learner winds down in the console; `studyloop status --json` shows the live session and its logged topics",
        |c| {
            let reply = mentor.send(WIND_DOWN).map_err(errored)?;
            c.record.attach("wind-down-reply.txt", reply.text.clone());
            c.prove_reply(u64::from(answered) + 1, &reply.text)
                .map_err(errored)?;
            arc_checks::wind_down_status(c)
        },
    )?;
    c.step_doing(
        "end",
        "End from the console; the socket says stopped",
        |_| mentor.end().map_err(errored),
    )?;
    if c.has_stub() {
        // The console hides a fresh session's persona reply: the stub's log proves
        // the persona reached the model first and the history grew every turn.
        c.check(
            "the stub's log: the persona and the history on every turn",
            |c| {
                let turns: Vec<u64> = (0..=u64::from(answered) + 1).collect();
                validate::stub_history(&c.stub_records()?, c.seed, &turns, validate::STUDY_PERSONA)
            },
        )?;
    }
    Ok(())
}

/// Stops the server and starts it again on the next day; the new clock's start.
fn next_day(c: &mut Case<'_>, ended_at: &str) -> Result<String, StepFailure> {
    let ended: jiff::Timestamp = ended_at
        .parse()
        .map_err(|e| errored(format!("ended_at `{ended_at}` is not a timestamp: {e}")))?;
    let next = ended
        .checked_add(jiff::SignedDuration::from_hours(24))
        .map_err(errored)?
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    if let Some(mut server) = c.slots.server.take() {
        let exit = server.stop(SERVER_STOP);
        c.record
            .attach("product/web-first-day.log", server.output());
        c.record.detail(json!({"first_server_exit": exit}));
    }
    c.env = std::mem::take(&mut c.env)
        .with_var("STUDYLOOP_NOW", &next)
        .map_err(errored)?;
    web::start_server(c)?;
    c.record
        .detail(json!({"ended_at": ended_at, "studyloop_now": next}));
    Ok(next)
}

fn resumed_session(c: &mut Case<'_>, arc: &mut Arc<'_>, first: &Live) -> Result<(), StepFailure> {
    let live = c.step_doing(
        "resume",
        "the Dashboard's resume box starts the topic again the next day; the console sends the persona",
        |c| start_in_browser(c, arc, true),
    )?;
    let turn_timeout = c.spec.turn_timeout;
    let shots = std::mem::take(&mut arc.shots);
    let mut mentor = BrowserMentor::new(arc.chrome, shots, turn_timeout, 1);
    let review = c.step_doing(
        "review",
        "the mentor's opening review, as the console shows it",
        |c| {
            let reply = mentor.last_reply().map_err(errored)?;
            c.record.attach("review-reply.txt", reply.clone());
            Ok(reply)
        },
    );
    let ended = c.step_doing("end-resumed", "End from the console", |_| {
        mentor.end().map_err(errored)
    });
    arc.shots = std::mem::take(&mut mentor.shots);
    drop(mentor);
    let review = review?;
    ended?;
    arc.drain()?;
    let sent = arc
        .trace
        .frames_sent()
        .iter()
        .map(|f| (*f).to_owned())
        .collect();
    c.verify(
        "the review recalls the struggle",
        arc_checks::review_checks(first, &live, review, sent),
    )
}

/// Screenshots, page HTML and the network trace into the bundle, whatever happened.
fn keep_browser_evidence(c: &mut Case<'_>, arc: &mut Arc<'_>) -> Result<(), StepFailure> {
    // A last drain: the trace of a run that failed midway is its best evidence.
    let drained = arc.drain();
    for (name, bytes) in std::mem::take(&mut arc.shots.files) {
        c.record.attach(name, bytes);
    }
    c.record
        .attach("browser/network-trace.jsonl", arc.trace.jsonl());
    c.record
        .notes
        .push(format!("browser network trace: {}", arc.trace.summary()));
    drained
}
