//! `journey::architect_launch` (ungraded): the Plans view's subject + **Plan with
//! architect** in real Chromium against the real `studyloop web`. Checked: exactly one
//! `POST /api/session/start` with `purpose: "planning"` (the page's request trace, see
//! `browser`), the console's purpose label, the label surviving a reload (the same
//! session, no second start), the planning brief's headings in order in the persona the
//! agent received, and no plan created (none listed, no document on disk).
//!
//! The agent is a shell stand-in behind the product's `STUDYLOOP_TEST_AGENT_CMD` hatch:
//! it copies the persona file the product handed it, prints a ready line and waits. No
//! model takes part, so nothing is graded; what is proven is the product's door.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use studyloop_acceptance::case::{Case, Checks, Destination, Finished, StepFailure, Steps};
use studyloop_acceptance::door::SessionState;
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::scratch::{Scratch, TestHatch};
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_acceptance::web_acp::browser::Browser;
use studyloop_acceptance::web_acp::http;
use studyloop_acceptance::web_acp::journey::Snapshots;
use studyloop_actors::ActorKind;

use super::browser::{self, INSTALL_TRACE, count, read_trace, shot, text_of};
use super::web::{self, HTTP_TIMEOUT, errored};

/// The label every artefact of this cell carries.
pub const LABEL: &str = "plan door check: grades nothing (a shell stand-in behind STUDYLOOP_TEST_AGENT_CMD played the agent; no model)";
/// The subject typed into the Plans view.
pub const SUBJECT: &str = "SQL window functions";
/// The console's label for a planning session.
pub const PURPOSE_LABEL: &str = "Planning session — study-plan architect";
/// The agent the picker resolves (a stand-in binary of that name is on the PATH).
const AGENT: HarnessName = HarnessName::Pi;
/// The stand-in's ready line.
const READY: &str = "agent-stub-ready";
/// The planning brief the product ships (the architect persona's own text).
const BRIEF: &str = studyloop_acceptance::door::shipped::PLAN_ARCHITECT_BRIEF;
/// Browser waits.
const T: Duration = Duration::from_secs(30);

/// The markdown headings of `text`, in order.
#[must_use]
pub fn headings(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| l.starts_with('#'))
        .collect()
}

/// Whether `want` appears in `got` in order (other headings may sit between).
#[must_use]
pub fn in_order(want: &[&str], got: &[&str]) -> bool {
    let mut it = got.iter();
    want.iter().all(|w| it.any(|g| g == w))
}

/// Runs the cell as a case into `dest`.
pub fn run(ctx: &TrialContext, dest: &dyn Destination) -> Finished {
    let mut case = Case::new(ctx, AGENT, Surface::Journey);
    case.actor = ActorKind::Scripted;
    let facts = &mut case.record.facts;
    facts.harness = Some("shell stand-in (STUDYLOOP_TEST_AGENT_CMD)".into());
    facts.auth_mode = None;
    facts.actor_backend = None;
    case.record.notes.push(LABEL.to_owned());
    case.run(dest, drive)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    let received = c.step_doing(
        "scratch",
        "a scrubbed scratch world; a stand-in `pi` on PATH; the agent hatch copies the persona it is handed",
        world,
    )?;
    c.step_doing("config-init", "studyloop config init --force", init_config)?;
    c.step_doing(
        "server-start",
        "studyloop web --port 0 in the scratch world",
        web::start_server,
    )?;
    browser::launch(c)?;
    let before = browser::with_browser(c, launch_plan)?;
    let after = browser::with_browser(c, reload)?;
    let checks = Checks::new()
        .check(
            "exactly one POST /api/session/start, purpose planning",
            |c: &mut Case<'_>| one_planning_start(c, &before.trace),
        )
        .check("the console's purpose label", |_| {
            label_is(before.label.as_deref())
        })
        .check("the label survives a reload, on the same session", |_| {
            label_is(after.label.as_deref())?;
            match (&before.session, &after.session) {
                (Some(a), Some(b)) if a == b => Ok(()),
                (a, b) => Err(format!(
                    "the session changed across the reload: {a:?} → {b:?}"
                )),
            }
        })
        .check(
            "the state: purpose planning, the subject as topic, no plan",
            |_| state_is(&after.state),
        )
        .check(
            "the planning brief's headings in order in the persona the agent received",
            |c: &mut Case<'_>| persona_received(c, &received),
        )
        .check(
            "no plan created (none listed, no document on disk)",
            no_plan,
        );
    c.verify("planning-door", checks)?;
    browser::with_browser(c, |c, chrome, shots| {
        c.step_doing(
            "end",
            "the console's Stop ends the session; state ended",
            |c| end(c, chrome, shots),
        )
    })
}

fn world(c: &mut Case<'_>) -> Result<PathBuf, StepFailure> {
    let scratch =
        Scratch::create_with(c.ctx.caller.clone(), AuthMode::Scrubbed).map_err(errored)?;
    let bin = scratch.tmp_dir().join("bin");
    std::fs::create_dir_all(&bin).map_err(errored)?;
    let pi = bin.join(AGENT.binary());
    std::fs::write(&pi, "#!/bin/sh\nexit 0\n").map_err(errored)?;
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .map_err(errored)?;
    let received = scratch.tmp_dir().join("agent-received-persona.md");
    let path = format!(
        "{}:{}",
        bin.display(),
        scratch
            .env()
            .get("PATH")
            .map_or_else(String::new, |p| p.to_string_lossy().into_owned())
    );
    c.env = scratch
        .env()
        .with_var("PATH", path)
        .and_then(|e| e.with_var("STUDYLOOP_AGENT", AGENT.as_str()))
        .map_err(errored)?
        .with_test_hatch(
            TestHatch::AgentCmd,
            format!(
                "cp {{persona_file}} '{}'; echo {READY}; exec cat",
                received.display()
            ),
        );
    c.slots.put_scratch(scratch);
    Ok(received)
}

fn init_config(c: &mut Case<'_>) -> Result<(), StepFailure> {
    studyloop_acceptance::door::studyloop(c, "config-init", &["config", "init", "--force"])
        .map(drop)
}

/// What the page showed at one point.
struct Seen {
    trace: Value,
    label: Option<String>,
    session: Option<String>,
    state: SessionState,
}

fn state(c: &Case<'_>) -> Result<SessionState, StepFailure> {
    web::session_state(c)
}

fn launch_plan(
    c: &mut Case<'_>,
    chrome: &Browser,
    shots: &mut Snapshots,
) -> Result<Seen, StepFailure> {
    let base = format!("http://{}", c.server()?.addr);
    c.step_doing(
        "plans-view",
        "open #study-plans; wait for the architect door",
        |_| {
            chrome
                .goto(&format!("{base}/#study-plans"))
                .map_err(errored)?;
            let ready = chrome.wait_for(
                "body[data-plans-ready][data-agent-resolved='true'] [data-testid='plan-architect']",
                T,
            );
            shot(chrome, shots, "plans-view")?;
            ready.map_err(errored)
        },
    )?;
    c.step_doing(
        "plan-with-architect",
        "trace the page's requests; type the subject; click Plan with architect; wait for the PTY console and the agent's ready line",
        |_| {
            chrome.eval(INSTALL_TRACE, Vec::new()).map_err(errored)?;
            chrome
                .fill("[data-testid='plan-architect-subject']", SUBJECT)
                .map_err(errored)?;
            shot(chrome, shots, "subject-typed")?;
            chrome.click("[data-testid='plan-architect']").map_err(errored)?;
            let console = chrome.wait_for("#agent-console[data-connected='true'][data-mode='pty']", T);
            let ready = console.map_err(errored).and_then(|()| wait_screen(chrome, READY));
            shot(chrome, shots, "architect-console")?;
            ready
        },
    )?;
    let trace = read_trace(chrome)?;
    c.record.attach_json("browser/trace-launch.json", &trace)?;
    let label = text_of(chrome, "[data-testid=console-purpose-label]")?;
    let state = state(c)?;
    c.record
        .attach_json("product/session-state-launch.json", state.raw())?;
    Ok(Seen {
        trace,
        label,
        session: state.study_session_id().map(str::to_owned),
        state,
    })
}

fn reload(c: &mut Case<'_>, chrome: &Browser, shots: &mut Snapshots) -> Result<Seen, StepFailure> {
    c.step_doing("reload", "reload the page; the console reattaches", |_| {
        // The reload tears the page down under the script: its own result is moot.
        let _ = chrome.eval("location.reload()", Vec::new());
        let back = chrome.wait_for("#agent-console[data-connected='true'][data-mode='pty']", T);
        shot(chrome, shots, "after-reload")?;
        back.map_err(errored)
    })?;
    let trace = read_trace(chrome)?;
    c.record
        .attach_json("browser/trace-after-reload.json", &trace)?;
    let label = text_of(chrome, "[data-testid=console-purpose-label]")?;
    let state = state(c)?;
    c.record
        .attach_json("product/session-state-after-reload.json", state.raw())?;
    Ok(Seen {
        trace,
        label,
        session: state.study_session_id().map(str::to_owned),
        state,
    })
}

fn wait_screen(chrome: &Browser, needle: &str) -> Result<(), StepFailure> {
    let deadline = Instant::now() + T;
    loop {
        let screen = text_of(chrome, "#pty-screen")?.unwrap_or_default();
        if screen.contains(needle) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(errored(format!(
                "the PTY console never showed `{needle}` within {T:?}"
            )));
        }
        studyloop_acceptance::interrupt::check("the PTY console").map_err(errored)?;
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn one_planning_start(c: &mut Case<'_>, trace: &Value) -> Result<(), String> {
    let (fetches, network) = count(trace, "POST", "/api/session/start");
    let bodies: Vec<Value> = trace["fetches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["url"] == "/api/session/start")
        .map(|f| {
            f["body"]
                .as_str()
                .and_then(|b| serde_json::from_str(b).ok())
                .unwrap_or(Value::Null)
        })
        .collect();
    c.record.detail(
        json!({"start_fetches": fetches, "start_network_requests": network, "bodies": bodies}),
    );
    if (fetches, network) != (1, 1) {
        return Err(format!(
            "{fetches} fetch call(s) and {network} network request(s) to POST /api/session/start, expected exactly 1 of each"
        ));
    }
    match bodies.first() {
        Some(b) if b["purpose"] == "planning" && b["topic"] == SUBJECT => Ok(()),
        other => Err(format!(
            "the start's body is {other:?}, expected purpose planning and topic {SUBJECT:?}"
        )),
    }
}

fn label_is(label: Option<&str>) -> Result<(), String> {
    match label {
        Some(PURPOSE_LABEL) => Ok(()),
        other => Err(format!(
            "the console's purpose label is {other:?}, expected {PURPOSE_LABEL:?}"
        )),
    }
}

fn state_is(state: &SessionState) -> Result<(), String> {
    let ok =
        state.purpose() == Some("planning") && state.topic() == Some(SUBJECT) && !state.has_plan();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the session state is {state}, expected purpose planning, topic {SUBJECT:?} and no plan_id"
        ))
    }
}

fn persona_received(c: &mut Case<'_>, received: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(received).map_err(|e| {
        format!(
            "the agent received no persona file ({}): {e}",
            received.display()
        )
    })?;
    c.record.attach("agent/received-persona.md", text.clone());
    let want = headings(BRIEF);
    let got = headings(&text);
    if want.is_empty() {
        return Err("the shipped planning brief has no headings".into());
    }
    if in_order(&want, &got) {
        Ok(())
    } else {
        Err(format!(
            "the persona's headings {got:?} do not hold the brief's {want:?} in order"
        ))
    }
}

fn no_plan(c: &mut Case<'_>) -> Result<(), String> {
    let addr = c.server().map_err(|e| e.message)?.addr.clone();
    let list =
        http::request(&addr, "GET", "/api/plans", None, HTTP_TIMEOUT).map_err(|e| e.to_string())?;
    c.record
        .attach("product/plans-list.json", list.text.clone());
    // Unknown (no `plans` list in the envelope's result) is not "none listed".
    let listed = list.result()["plans"].as_array().map(Vec::len);
    let dir = c
        .scratch()
        .map_err(|e| e.message)?
        .state_dir()
        .join("study-plans");
    let on_disk = std::fs::read_dir(&dir).map_or(0, |d| d.filter_map(Result::ok).count());
    c.record
        .detail(json!({"plans_listed": listed, "plan_files": on_disk}));
    if list.status == 200 && listed == Some(0) && on_disk == 0 {
        Ok(())
    } else {
        let listed = listed.map_or_else(|| "no plan list".to_owned(), |n| format!("{n} plan(s)"));
        Err(format!(
            "GET /api/plans answered {} listing {listed}; {} holds {on_disk} file(s); expected none",
            list.status,
            dir.display()
        ))
    }
}

fn end(c: &mut Case<'_>, chrome: &Browser, shots: &mut Snapshots) -> Result<(), StepFailure> {
    chrome.click("#console-stop").map_err(errored)?;
    let stopped = chrome.wait_for("#agent-console[data-stopped='true']", T);
    shot(chrome, shots, "stopped")?;
    stopped.map_err(errored)?;
    let state = state(c)?;
    c.record
        .attach_json("product/session-state-end.json", state.raw())?;
    if state.is_ended() {
        Ok(())
    } else {
        Err(errored(format!(
            "after Stop the state is {state}, expected mode ended"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_brief_has_headings_and_order_is_checked() {
        let want = headings(BRIEF);
        assert!(want.len() >= 3, "{want:?}");
        let mut persona = String::from("# Context\n");
        for h in &want {
            persona.push_str(h);
            persona.push_str("\nbody\n## extra\n");
        }
        assert!(in_order(&want, &headings(&persona)));
        let mut reversed = want.clone();
        reversed.reverse();
        assert!(!in_order(&want, &reversed));
        assert!(!in_order(&want, &want[1..]));
    }
}
