//! The SPA in real headless Chromium against the real `studyloop web`, with
//! `studyloop-stub-acp` (a test double) as the agent: start from the
//! Dashboard, persona delivered by the console, two typed turns, end. Needs
//! `cargo build --bins` and Chromium (`just deps-browser`); without Chromium
//! it fails naming the install command rather than passing silently.

use std::ffi::OsString;
use std::time::Duration;

use serde_json::json;
use studyloop_acceptance::bins;
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::web_acp::browser::{self, Browser};
use studyloop_acceptance::web_acp::journey::{self, BrowserMentor, Snapshots};
use studyloop_acceptance::web_acp::{WebServer, http};
use studyloop_actors::Mentor;

const T: Duration = Duration::from_secs(30);

#[test]
fn dashboard_start_persona_two_turns_and_end_in_chromium() {
    if let Err(e) = browser::available() {
        panic!("{e}");
    }
    let studyloop = bins::path("studyloop").expect("cargo build --bins");
    let stub = bins::path("studyloop-stub-acp").expect("cargo build --bins");
    let scratch = Scratch::create().expect("scratch world");
    let mut init = scratch.command(&studyloop);
    init.args(["config", "init", "--force"]);
    assert_eq!(
        scratch
            .run(&mut init, T)
            .expect("config init")
            .status
            .code(),
        Some(0)
    );
    let extra = vec![(
        OsString::from("STUDYLOOP_TEST_ACP_CMD"),
        OsString::from(format!("'{}'", stub.display())),
    )];
    let mut server = WebServer::start(&scratch, &studyloop, &extra).expect("server up");
    let base = format!("http://{}", server.addr);

    let profile = browser::profile_dir(scratch.tmp_dir()).expect("profile dir");
    let chrome = Browser::launch(&scratch, &profile).expect("chromium starts");
    let mut shots = Snapshots::default();
    journey::start_acp_session(&chrome, &mut shots, &base, "Ownership", "codex", T)
        .expect("started");
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);
    for (n, q) in [(2, "what moves?"), (3, "what copies?")] {
        let reply = mentor.send(q).expect("turn");
        assert_eq!(reply.text, format!("STUB-ACP-ECHO {n}: {q}"));
    }
    mentor.end().expect("ended from the console");
    let label = chrome.eval(
        "return document.querySelector('[data-testid=console-purpose-label]').textContent",
        Vec::new(),
    );
    let shots = mentor.shots;
    chrome.close();
    assert_eq!(label.expect("label"), json!("Focus session"));
    assert!(
        shots.files.len() >= 8,
        "a screenshot and HTML per step: {}",
        shots.files.len()
    );
    assert!(
        shots
            .files
            .iter()
            .any(|(n, b)| n.ends_with(".png") && b.starts_with(b"\x89PNG"))
    );
    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    assert_eq!(state.body["mode"], "ended", "{}", state.text);
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// The Plans door: subject + "Plan with architect" starts one planning PTY
/// session; the console shows the terminal and the purpose label, which
/// survives a reload.
#[test]
fn plan_architect_starts_a_planning_pty_session_whose_label_survives_reload() {
    if let Err(e) = browser::available() {
        panic!("{e}");
    }
    let studyloop = bins::path("studyloop").expect("cargo build --bins");
    let scratch = Scratch::create().expect("scratch world");
    let mut init = scratch.command(&studyloop);
    init.args(["config", "init", "--force"]);
    assert_eq!(
        scratch
            .run(&mut init, T)
            .expect("config init")
            .status
            .code(),
        Some(0)
    );
    // A stand-in `pi` so the picker resolves an agent; the hatch replaces its launch.
    let bin = scratch.tmp_dir().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    std::fs::write(bin.join("pi"), "#!/bin/sh\nexit 0\n").expect("fake pi");
    std::fs::set_permissions(
        bin.join("pi"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let extra = vec![
        (OsString::from("PATH"), OsString::from(path)),
        (OsString::from("STUDYLOOP_AGENT"), OsString::from("pi")),
        (
            OsString::from("STUDYLOOP_TEST_AGENT_CMD"),
            OsString::from("echo agent-stub-ready; exec cat"),
        ),
    ];
    let mut server = WebServer::start(&scratch, &studyloop, &extra).expect("server up");
    let base = format!("http://{}", server.addr);
    let profile = browser::profile_dir(scratch.tmp_dir()).expect("profile dir");
    let chrome = Browser::launch(&scratch, &profile).expect("chromium starts");
    let mut shots = Snapshots::default();
    chrome.goto(&format!("{base}/#study-plans")).expect("plans");
    chrome
        .wait_for(
            "body[data-plans-ready][data-agent-resolved='true'] [data-testid='plan-architect']",
            T,
        )
        .expect("plans view ready");
    chrome
        .fill(
            "[data-testid='plan-architect-subject']",
            "SQL window functions",
        )
        .expect("subject");
    chrome
        .click("[data-testid='plan-architect']")
        .expect("click");
    chrome
        .wait_for("#agent-console[data-connected='true'][data-mode='pty']", T)
        .expect("pty console");
    let screen = "return document.getElementById('pty-screen').textContent";
    let deadline = std::time::Instant::now() + T;
    while !chrome
        .eval(screen, Vec::new())
        .expect("screen")
        .as_str()
        .unwrap_or_default()
        .contains("agent-stub-ready")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no PTY output in the console"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    shots.take(&chrome, "architect-console").expect("shot");
    let label = "return document.querySelector('[data-testid=console-purpose-label]').textContent";
    assert_eq!(
        chrome.eval(label, Vec::new()).expect("label"),
        json!("Planning session — study-plan architect")
    );
    chrome.eval("location.reload()", Vec::new()).ok();
    chrome
        .wait_for("#agent-console[data-connected='true'][data-mode='pty']", T)
        .expect("reattached");
    assert_eq!(
        chrome.eval(label, Vec::new()).expect("label"),
        json!("Planning session — study-plan architect")
    );
    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    assert_eq!(
        (state.body["purpose"].clone(), state.body["topic"].clone()),
        (json!("planning"), json!("SQL window functions"))
    );
    assert!(state.body.get("plan_id").is_none());
    chrome.click("#console-stop").expect("end");
    chrome
        .wait_for("#agent-console[data-stopped='true']", T)
        .expect("stopped");
    chrome.close();
    assert!(!shots.files.is_empty());
    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    assert_eq!(state.body["mode"], "ended", "{}", state.text);
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}
