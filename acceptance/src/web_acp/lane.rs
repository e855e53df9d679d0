//! The web ACP lanes: `web-acp::<harness>` (over HTTP and the session
//! WebSocket) and `web-acp-browser::<harness>` (the same journey through the
//! SPA in headless Chromium). In a scratch world the real `studyloop web`
//! starts an ACP session with the real pinned adapter; the persona goes first,
//! as the product's console sends it; the selected learner actor talks for
//! [`TURNS`] turns; every reply is proven by the cell's stub nonce; the
//! session is ended and nothing may be left running.
//!
//! grok has no ACP path: it gets no trial here (the matrix marks it n/a).

use std::time::Duration;

use serde_json::Value;

use super::browser::{self, Browser};
use super::journey::{self, BrowserMentor, Snapshots};
use super::{AcpMentor, SessionStart, Stopped, WebServer};
use crate::evidence::Surface;
use crate::lane::cli_tmux::converse;
use crate::lane::setup::{make_scratch, provision_harness, resolve_binary};
use crate::lane::{Lane, LaneFailure, validate};
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::{AuthMode, HarnessName};

/// Learner turns after the persona turn (the contract's floor).
pub const TURNS: u32 = 3;
/// One API call.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// The start includes the ACP handshake (kiro needs ~13 s for session/new).
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// The persona marker the focus persona carries.
pub const FOCUS_PERSONA: &str = "studyloop-focus";

/// Socket or browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// HTTP + WebSocket, no browser.
    Socket,
    /// The SPA in Chromium.
    Browser,
}

/// The trial names for `harness`.
#[must_use]
pub fn trial_name(harness: HarnessName, variant: Variant) -> String {
    match variant {
        Variant::Socket => format!("web-acp::{harness}"),
        Variant::Browser => format!("web-acp-browser::{harness}"),
    }
}

/// Both trials of `harness`, or none when it has no ACP path.
#[must_use]
pub fn trials(harness: HarnessName) -> Vec<TrialSpec> {
    let Some(acp) = crate::harness::spec(harness).acp else {
        return Vec::new();
    };
    let fix = crate::probe::install_hint(harness);
    [Variant::Socket, Variant::Browser]
        .into_iter()
        .map(|variant| {
            let spec = TrialSpec::gated(trial_name(harness, variant), move |ctx| {
                run(ctx, harness, variant)
            })
            .requires(Requirement::HarnessSelected(harness))
            .requires(Requirement::BinaryOnScratchPath {
                binary: acp.argv[0],
                fix,
            });
            match variant {
                Variant::Socket => spec,
                Variant::Browser => spec
                    .requires(Requirement::BinaryOnScratchPath {
                        binary: "chromium",
                        fix: browser::INSTALL_HINT,
                    })
                    .requires(Requirement::BinaryOnScratchPath {
                        binary: "chromedriver",
                        fix: browser::INSTALL_HINT,
                    }),
            }
        })
        .collect()
}

/// Runs one lane; evidence is written whatever happens.
pub fn run(ctx: &TrialContext, harness: HarnessName, variant: Variant) -> TrialReport {
    let mut lane = Lane::new(ctx, harness);
    lane.surface = match variant {
        Variant::Socket => Surface::WebAcp,
        Variant::Browser => Surface::WebAcpBrowser,
    };
    crate::lane::drive_to_finish(lane, |lane| drive(lane, variant))
}

fn err(e: impl std::fmt::Display) -> LaneFailure {
    LaneFailure::errored(e.to_string())
}

fn drive(lane: &mut Lane<'_>, variant: Variant) -> Result<(), LaneFailure> {
    let h = lane.harness;
    lane.step("scratch world", make_scratch)?;
    lane.step("harness binary and version", resolve_binary)?;
    lane.step("provision harness for the auth mode", provision_harness)?;
    let mut server = lane.step("studyloop web", start_server)?;
    let result = match variant {
        Variant::Socket => socket_journey(lane, &server),
        Variant::Browser => browser_journey(lane, &server),
    };
    let state = server.session_state(HTTP_TIMEOUT);
    if let Ok(s) = &state {
        lane.attach(
            "product/session-state.json",
            serde_json::to_vec_pretty(&s.body).unwrap_or_default(),
        );
    }
    result?;
    if lane.stub.is_some() {
        lane.check("stub log: persona and history length per turn", |l| {
            // The persona is turn 0 for the stub (no learner text yet).
            let turns: Vec<u64> = (0..=u64::from(TURNS)).collect();
            let records = l
                .stub
                .as_ref()
                .ok_or("no stub")?
                .records()
                .map_err(|e| e.to_string())?;
            validate::stub_history(&records, l.seed, &turns, FOCUS_PERSONA)
        })?;
    }
    let state = state.map_err(err)?.body;
    lane.check("state: the session ended", |_| {
        match state["mode"].as_str() {
            Some("ended") => Ok(()),
            other => Err(format!("state mode is {other:?}, expected ended: {state}")),
        }
    })?;
    lane.check("db: study_sessions row with persona_hash", |l| {
        crate::lane::checks::db_row(l, &state)
    })?;
    lane.step("stop studyloop web", |l| {
        let code = server.stop(Duration::from_secs(15));
        l.attach("product/web-server.log", server.output());
        if code == Some(0) {
            Ok(())
        } else {
            Err(err(format!("studyloop web exited {code:?} on SIGTERM")))
        }
    })?;
    lane.notes.push(format!(
        "{h}: web-acp {variant:?} journey: persona + {TURNS} learner turns"
    ));
    Ok(())
}

fn start_server(l: &mut Lane<'_>) -> Result<WebServer, LaneFailure> {
    WebServer::start_in(l.scratch()?, &l.env).map_err(err)
}

fn start_session(l: &mut Lane<'_>, server: &WebServer) -> Result<SessionStart, LaneFailure> {
    let topic = format!("Web ACP Lane: {}", l.harness);
    let mut text = String::new();
    let started = server.start_acp_session(&topic, l.harness.as_str(), 5, START_TIMEOUT, |t| {
        text = t.to_owned();
    });
    l.attach("product/session-start.json", text);
    started.map_err(err)
}

/// Checks that turn `n`'s reply carries the stub's nonce (stub-provider mode).
fn prove(l: &Lane<'_>, n: u64, reply: &str) -> Result<(), String> {
    if l.ctx.selection.auth_mode != AuthMode::StubProvider {
        return if reply.trim().is_empty() {
            Err(format!("turn {n}: empty reply"))
        } else {
            Ok(())
        };
    }
    let want = format!("MENTOR-REPLY {n} {}", studyloop_stubs::nonce(l.seed, n));
    if reply.contains(&want) {
        Ok(())
    } else {
        Err(format!("turn {n}: reply {reply:?} lacks {want:?}"))
    }
}

fn socket_journey(lane: &mut Lane<'_>, server: &WebServer) -> Result<(), LaneFailure> {
    let started = lane.step("POST /api/session/start (acp)", |l| {
        start_session(l, server)
    })?;
    let turn_timeout = lane.spec.turn_timeout;
    let ws_url = started.ws_url.clone();
    let mut mentor = lane.step("attach the session socket", |_| {
        AcpMentor::attach(&server.addr, &ws_url, turn_timeout).map_err(err)
    })?;
    let persona = started.persona;
    let first = lane.step("persona as the first prompt", |_| {
        mentor.deliver_persona(&persona).map_err(err)
    });
    let result = first
        .and_then(|reply| lane.check("persona turn proven (stub turn 0)", |l| prove(l, 0, &reply)))
        .and_then(|()| lane.step("conversation", |l| converse(l, &mut mentor, "web-acp")));
    let Stopped {
        turns: records,
        stopped,
        ..
    } = {
        let done = mentor.stop();
        lane.attach("turns.json", done.turns_json());
        lane.attach("ws-frames.jsonl", done.frames_jsonl());
        done
    };
    result?;
    lane.check("turns proven by the stub nonce", |l| {
        // turns[0] is the persona (stub turn 0); learner turn k is stub turn k.
        records
            .iter()
            .enumerate()
            .try_for_each(|(k, r)| prove(l, k as u64, &r.reply))
    })?;
    lane.check("stop frame ended the session", |_| match stopped {
        Some(f) if f["reason"] == "cancel" => Ok(()),
        other => Err(format!(
            "expected a stopped frame with reason cancel, got {other:?}"
        )),
    })
}

fn browser_journey(lane: &mut Lane<'_>, server: &WebServer) -> Result<(), LaneFailure> {
    let chrome = lane.step("launch headless Chromium", |l| {
        let scratch = l.scratch()?;
        let profile = browser::profile_dir(scratch.tmp_dir()).map_err(err)?;
        Browser::launch(scratch, &profile).map_err(err)
    })?;
    let base = format!("http://{}", server.addr);
    let topic = format!("Web ACP Browser Lane: {}", lane.harness);
    let agent = lane.harness.as_str();
    let turn_timeout = lane.spec.turn_timeout;
    let mut shots = Snapshots::default();
    let started = lane.step(
        "start from the Dashboard; the console sends the persona",
        |_| {
            journey::start_acp_session(
                &chrome,
                &mut shots,
                &base,
                &topic,
                agent,
                START_TIMEOUT.max(turn_timeout),
            )
            .map_err(err)
        },
    );
    let mut mentor = BrowserMentor::new(&chrome, shots, turn_timeout, 1);
    let result = started.and_then(|()| {
        lane.step("conversation through the console", |l| {
            converse(l, &mut mentor, "web-acp-browser")
        })
    });
    let proven = result.and_then(|()| {
        lane.check(
            "every reply shown in the console carries its stub nonce",
            |l| {
                transcript_replies(l)
                    .iter()
                    .enumerate()
                    .try_for_each(|(k, r)| prove(l, k as u64 + 1, r))
            },
        )
    });
    let ended =
        proven.and_then(|()| lane.step("end from the console", |_| mentor.end().map_err(err)));
    let shots = std::mem::take(&mut mentor.shots);
    drop(mentor);
    chrome.close();
    for (name, bytes) in shots.files {
        lane.attach(name, bytes);
    }
    ended
}

/// The mentor replies of the actor's transcript (`transcript.json`, attached by
/// the shared `converse`), in turn order.
fn transcript_replies(l: &Lane<'_>) -> Vec<String> {
    let Some((_, bytes)) = l
        .files
        .iter()
        .rev()
        .find(|(name, _)| name == "transcript.json")
    else {
        return Vec::new();
    };
    let v: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    v["turns"]
        .as_array()
        .map(|turns| {
            turns
                .iter()
                .map(|t| t["mentor_reply"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}
