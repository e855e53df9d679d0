//! The web ACP lanes: `web-acp::<harness>` (over HTTP and the session
//! WebSocket) and `web-acp-browser::<harness>` (the same journey through the
//! SPA in headless Chromium). In a scratch world the real `studyloop web`
//! starts an ACP study session (`purpose: "study"`, the study persona, as the
//! Dashboard's "Start a study session" sends it) with the real pinned adapter;
//! the persona goes first, as the product's console sends it; the selected
//! learner actor talks for the selection's number of turns; every reply is
//! proven by the cell's stub nonce; the session is ended and nothing may be
//! left running. Each lane is a
//! case on the engine (`crate::case`): the server, the socket and the browser
//! sit in its slots, so a Ctrl-C stops them and the case still finishes.
//!
//! grok has no ACP path: it gets no trial here (the matrix marks it n/a).

use std::time::Duration;

use crate::case::{Case, Checks, RunDirBundle, StepFailure, Steps, Transport, converse};
use crate::door::SessionState;
use crate::evidence::Surface;
use crate::lane::setup::{make_scratch, model_path, resolve_binary};
use crate::runner::{Requirement, TrialContext, TrialReport, TrialSpec};
use crate::selection::HarnessName;
use crate::validate::{self, CheckError, STUDY_PERSONA};
use crate::web_acp::browser::{self, Browser};
use crate::web_acp::journey::{self, BrowserMentor, Snapshots};
use crate::web_acp::{AcpMentor, SessionStart, WebServer};
/// One API call.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// The start includes the ACP handshake (kiro needs ~13 s for session/new).
const START_TIMEOUT: Duration = Duration::from_secs(120);

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
pub(crate) fn trial_name(harness: HarnessName, variant: Variant) -> String {
    match variant {
        Variant::Socket => format!("web-acp::{harness}"),
        Variant::Browser => format!("web-acp-browser::{harness}"),
    }
}

/// Both trials of `harness`, or none when it has no ACP path.
#[must_use]
pub fn trials(harness: HarnessName) -> Vec<TrialSpec> {
    let Some(acp) = crate::harness_spec::spec(harness).acp else {
        return Vec::new();
    };
    let fix = crate::harness_spec::install_hint(harness);
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
    let surface = match variant {
        Variant::Socket => Surface::WebAcp,
        Variant::Browser => Surface::WebAcpBrowser,
    };
    Case::new(ctx, harness, surface)
        .run(&RunDirBundle::new(ctx), |case| drive(case, variant))
        .report()
}

fn err(e: impl std::fmt::Display) -> StepFailure {
    StepFailure::from_error(e)
}

fn drive(case: &mut Case<'_>, variant: Variant) -> Result<(), StepFailure> {
    let h = case.harness;
    case.step("scratch world", make_scratch)?;
    case.step("harness binary and version", resolve_binary)?;
    model_path(case, &[])?;
    case.step("studyloop web", start_server)?;
    let answered = match variant {
        Variant::Socket => socket_journey(case),
        Variant::Browser => browser_journey(case),
    };
    let state = case.step("GET /api/session/state", |c| {
        let state = c.server()?.session_state(HTTP_TIMEOUT).map_err(err)?;
        c.record
            .attach_json("product/session-state.json", &state.body)?;
        Ok(SessionState::from(state.result().clone()))
    });
    let answered = answered?;
    let state = state?;
    if variant == Variant::Browser {
        // The console sent the persona inside the page: the bundle keeps the hash
        // the product recorded for it, and says why the text is absent.
        case.record.facts.persona = Some(crate::case::PersonaSeen {
            product_hash: state.persona_hash().map(str::to_owned),
            text: None,
            text_missing: Some(
                "the console sent the persona inside the browser; the lane reads only its \
                 hash (GET /api/session/state)"
                    .to_owned(),
            ),
        });
    }
    let stub = case.has_stub();
    case.verify(
        "the session's record",
        Checks::new()
            .check_if(
                stub,
                "stub log: persona and history length per turn",
                |c: &mut Case<'_>| {
                    // The persona is turn 0 for the stub (no learner text yet).
                    let turns: Vec<u64> = (0..=u64::from(answered)).collect();
                    validate::stub_history(&c.stub_records()?, c.seed, &turns, STUDY_PERSONA)
                },
            )
            .check("state: the session ended", |_| {
                if state.is_ended() {
                    Ok(())
                } else {
                    let mode = state.mode();
                    Err(format!("state mode is {mode:?}, expected ended: {state}"))
                }
            })
            .check("db: study_sessions row with persona_hash", |c| {
                crate::lane::checks::db_row(c, &state)
            }),
    )?;
    case.record.notes.push(format!(
        "{h}: web-acp {variant:?} journey: persona + {answered} learner turns"
    ));
    Ok(())
}

/// Starts `studyloop web --port 0` in the case's scratch world with exactly its env,
/// into the server slot (the one way lanes and journeys start the product server); the
/// step's detail records its address and binary.
///
/// # Errors
/// The server did not print its URL, or the binary is not built.
pub fn start_server(c: &mut Case<'_>) -> Result<(), StepFailure> {
    let server = WebServer::start_in(c.scratch()?, &c.env).map_err(err)?;
    c.record.detail(
        serde_json::json!({"addr": server.addr, "binary": server.binary.display().to_string()}),
    );
    c.slots.put_server(server);
    Ok(())
}

/// `POST /api/session/start` for an ACP study session of the case's harness.
pub(crate) fn start_session(c: &mut Case<'_>) -> Result<SessionStart, StepFailure> {
    let topic = format!("Web ACP Lane: {}", c.harness);
    let mut text = String::new();
    let started =
        c.server()?
            .start_acp_session(&topic, c.harness.as_str(), 5, START_TIMEOUT, |t| {
                text = t.to_owned();
            });
    c.record.attach("product/session-start.json", text);
    started.map_err(err)
}

/// The session's first steps over the socket: `POST /api/session/start`, the socket
/// attached into the ACP slot, the persona as the first prompt (its reply returned:
/// the caller decides what a failed persona turn still needs, e.g. stopping the socket).
///
/// # Errors
/// The start or attach step's failure.
pub(crate) fn open_session(
    case: &mut Case<'_>,
) -> Result<Result<String, StepFailure>, StepFailure> {
    let started = case.step("POST /api/session/start (acp)", start_session)?;
    let turn_timeout = case.spec.turn_timeout;
    case.step("attach the session socket", |c| {
        attach_socket(c, &started.ws_url, turn_timeout)
    })?;
    let persona = started.persona;
    case.record.facts.persona = Some(crate::case::PersonaSeen {
        product_hash: Some(started.persona_hash.clone()),
        text: Some(persona.clone()),
        text_missing: None,
    });
    Ok(case.step("persona as the first prompt", |c| {
        c.with_acp(|_, m| m.deliver_persona(&persona).map_err(err))
    }))
}

/// The socket variant; returns the learner turns answered.
fn socket_journey(case: &mut Case<'_>) -> Result<u32, StepFailure> {
    let first = open_session(case)?;
    let talk = first
        .and_then(|reply| {
            case.check("persona turn proven (stub turn 0)", |c| {
                c.prove_reply(0, &reply)
            })
        })
        .and_then(|()| {
            case.step("conversation", |c| {
                c.with_acp(|c, m| converse(c, Transport::Socket(m)))
            })
        });
    let stopped = case.step("stop the session socket", Case::stop_acp);
    let talk = talk?;
    let stopped = stopped?;
    let replies = talk.replies;
    case.verify(
        "the session over the socket",
        Checks::new()
            .check("turns proven by the stub nonce", |c: &mut Case<'_>| {
                // Learner turn k is stub turn k (the persona was turn 0).
                replies
                    .iter()
                    .enumerate()
                    .try_for_each(|(k, r)| c.prove_reply(k as u64 + 1, &r.text))
            })
            .check("stop frame ended the session", |_| match stopped {
                Some(f) if f["reason"] == "cancel" => Ok(()),
                other => Err(CheckError::NotStopped(format!("{other:?}"))),
            }),
    )?;
    Ok(talk.transcript.turns.len().try_into().unwrap_or(u32::MAX))
}

/// Attaches the session socket at `ws_url` into the case's ACP slot.
pub(crate) fn attach_socket(
    c: &mut Case<'_>,
    ws_url: &str,
    turn_timeout: Duration,
) -> Result<(), StepFailure> {
    let addr = c.server()?.addr.clone();
    let mentor = AcpMentor::attach(&addr, ws_url, turn_timeout).map_err(err)?;
    c.slots.put_acp(mentor);
    Ok(())
}

/// The browser variant; returns the learner turns answered.
fn browser_journey(case: &mut Case<'_>) -> Result<u32, StepFailure> {
    case.step("launch headless Chromium", |c| {
        let scratch = c.scratch()?;
        let profile = browser::profile_dir(scratch.tmp_dir()).map_err(err)?;
        let chrome = Browser::launch(scratch, &profile).map_err(err)?;
        c.slots.put_browser(chrome);
        Ok(())
    })?;
    // The console borrows the browser while the case records steps: take it
    // out of its slot (its Ctrl-C watch stays) and put it back for release.
    let chrome = case
        .slots
        .browser
        .take()
        .ok_or_else(|| StepFailure::errored("no browser"))?;
    let result = console_journey(case, &chrome);
    case.slots.browser = Some(chrome);
    result
}

fn console_journey(case: &mut Case<'_>, chrome: &Browser) -> Result<u32, StepFailure> {
    let base = format!("http://{}", case.server()?.addr);
    let topic = format!("Web ACP Browser Lane: {}", case.harness);
    let agent = case.harness.as_str();
    let turn_timeout = case.spec.turn_timeout;
    let mut shots = Snapshots::default();
    let started = case.step(
        "start from the Dashboard; the console sends the persona",
        |_| {
            journey::start_acp_session(
                chrome,
                &mut shots,
                &base,
                (&topic, agent, false),
                START_TIMEOUT.max(turn_timeout),
            )
            .map_err(err)
        },
    );
    let mut mentor = BrowserMentor::new(chrome, shots, turn_timeout, 1);
    let talk = started.and_then(|()| {
        case.step("conversation through the console", |c| {
            converse(c, Transport::Console(&mut mentor))
        })
    });
    let answered = talk.and_then(|talk| {
        case.check(
            "every reply shown in the console carries its stub nonce",
            |c| {
                talk.replies
                    .iter()
                    .enumerate()
                    .try_for_each(|(k, r)| c.prove_reply(k as u64 + 1, &r.text))
            },
        )?;
        Ok(talk.answered())
    });
    let ended = answered.and_then(|n| {
        case.step("end from the console", |_| mentor.end().map_err(err))
            .map(|()| n)
    });
    for (name, bytes) in std::mem::take(&mut mentor.shots.files) {
        case.record.attach(name, bytes);
    }
    ended
}
