//! The web ACP lane's driver, hermetically: the real `studyloop web` in a
//! scratch world, started over HTTP, driven over its session socket by
//! `AcpMentor`, with `studyloop-stub-acp` (a test double) as the agent behind
//! `STUDYLOOP_TEST_ACP_CMD`. Needs `cargo build --bins` first.

use std::ffi::OsString;
use std::time::Duration;

use serde_json::json;
use studyloop_acceptance::bins;
use studyloop_acceptance::door::SessionState;
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::validate::STUDY_PERSONA;
use studyloop_acceptance::web_acp::{AcpMentor, WebServer, http};
use studyloop_actors::Mentor;

const T: Duration = Duration::from_secs(20);

fn pairs(items: &[(&str, String)]) -> Vec<(OsString, OsString)> {
    items
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

#[test]
fn persona_then_three_turns_then_end_leaves_nothing_running() {
    let studyloop = bins::path("studyloop").expect("cargo build --bins");
    let stub = bins::path("studyloop-stub-acp").expect("cargo build --bins");
    let scratch = Scratch::create().expect("scratch world");
    let mut init = scratch.command(&studyloop);
    init.args(["config", "init", "--force"]);
    let done = scratch.run(&mut init, T).expect("config init runs");
    assert_eq!(done.status.code(), Some(0), "config init: {done:?}");

    let extra = pairs(&[("STUDYLOOP_TEST_ACP_CMD", format!("'{}'", stub.display()))]);
    let mut server = WebServer::start(&scratch, &studyloop, &extra).expect("server up");
    // The lanes' own start request (web-acp::<h>): a study session.
    let started = server
        .start_acp_session("Borrow checker", "codex", 5, T, |_| {})
        .expect("start");
    let (ws_url, persona) = (started.ws_url, started.persona);
    let study = format!("<!-- PERSONA={STUDY_PERSONA} -->");
    assert!(persona.starts_with(&study), "{persona:.80}");
    assert_eq!(started.body["purpose"], "study", "{}", started.body);
    let agent_pid = http::request(&server.addr, "GET", "/api/session/state", None, T)
        .expect("state")
        .result()["child_pid"]
        .as_u64()
        .expect("child_pid");

    let mut mentor = AcpMentor::attach(&server.addr, &ws_url, T).expect("attach");
    assert_eq!(mentor.agent.as_deref(), Some("codex"));
    let reply = mentor.deliver_persona(&persona).expect("persona turn");
    assert!(
        reply.starts_with(&format!("STUB-ACP-ECHO 1: {study}")),
        "{reply:.80}"
    );
    for (n, q) in [
        (2, "what is a borrow?"),
        (3, "why one &mut?"),
        (4, "and lifetimes?"),
    ] {
        let r = mentor.send(q).expect("turn");
        assert_eq!(r.text, format!("STUB-ACP-ECHO {n}: {q}"));
    }
    assert_eq!(mentor.turns.len(), 4);
    let done = mentor.stop();
    assert_eq!(done.turns.len(), 4);
    assert_eq!(done.frames_jsonl().unwrap().lines().count(), done.log.len());
    assert_eq!(
        done.stopped.map(|s| s["reason"].clone()),
        Some(json!("cancel"))
    );
    assert!(
        done.log.iter().filter(|l| l.dir == "out").count() >= 5,
        "frames logged"
    );

    let state = http::request(&server.addr, "GET", "/api/session/state", None, T).expect("state");
    assert!(
        SessionState::from(state.result().clone()).is_ended(),
        "{}",
        state.text
    );
    assert!(
        !std::path::Path::new(&format!("/proc/{agent_pid}")).exists(),
        "agent {agent_pid} still running"
    );
    assert_eq!(
        server.stop(Duration::from_secs(10)),
        Some(0),
        "{}",
        server.output()
    );
    scratch.close().expect("scratch swept");
}
