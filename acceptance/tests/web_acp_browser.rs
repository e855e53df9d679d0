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
    let chrome = Browser::launch(&profile).expect("chromium starts");
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
