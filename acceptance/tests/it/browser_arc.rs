//! The browser pieces of the study arc, hermetically (real Chromium, the real
//! `studyloop web`, `studyloop-stub-acp` as the agent): Chromium's own network
//! trace holds every start request and every WebSocket frame the page sent and
//! received, and the Dashboard's resume box starts the topic again with the last
//! session's struggle in the persona the console sends. Before, the browser kept
//! no network log and the web console had no resume.

use std::time::Duration;

use studyloop_acceptance::bins;
use studyloop_acceptance::web_acp::journey::{self, BrowserMentor, Snapshots};
use studyloop_acceptance::web_acp::trace::NetworkTrace;
use studyloop_actors::Mentor;

use crate::web_acp_browser::acp_console_with;

const T: Duration = Duration::from_secs(30);

#[test]
fn the_trace_holds_every_start_and_frame_and_the_resume_box_carries_the_struggle() {
    let (scratch, mut server, chrome, base) = acp_console_with(&[], true);
    let mut shots = Snapshots::default();
    let mut trace = NetworkTrace::default();
    journey::start_acp_session(&chrome, &mut shots, &base, ("Closures", "codex", false), T)
        .expect("started");
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);
    mentor.send("why do loop lambdas share i?").expect("turn");
    // The mentor's `log_topic`, as the CLI the agent may also call.
    let studyloop = bins::path("studyloop").expect("cargo build --bins");
    let mut topic = scratch.command(&studyloop);
    topic.args([
        "topic",
        "late binding",
        "--status",
        "struggling",
        "--note",
        "loop lambdas share one variable",
    ]);
    let done = scratch.run(&mut topic, T).expect("topic");
    assert!(done.status.success(), "{}", done.stderr_text());
    mentor.end().expect("ended");
    let shots = std::mem::take(&mut mentor.shots);
    drop(mentor);
    trace.extend(chrome.network_log().expect("performance log"));

    let mut shots = shots;
    journey::start_acp_session(&chrome, &mut shots, &base, ("closures", "codex", true), T)
        .expect("resumed");
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);
    let persona_echo = mentor.last_reply().expect("the persona's reply");
    mentor.end().expect("ended");
    drop(mentor);
    trace.extend(chrome.network_log().expect("performance log"));
    chrome.close();

    assert!(
        persona_echo.contains("Resuming Previous Session"),
        "{persona_echo:.400}"
    );
    assert_eq!(
        trace.count("POST", "/api/session/start"),
        2,
        "{}",
        trace.summary()
    );
    assert!(trace.sockets().len() >= 2, "{}", trace.summary());
    let inputs: Vec<&str> = trace
        .frames_sent()
        .into_iter()
        .filter(|f| f.contains("\"type\":\"input\""))
        .collect();
    // Persona, one turn, then the resumed persona.
    assert_eq!(inputs.len(), 3, "{inputs:#?}");
    assert!(inputs[1].contains("why do loop lambdas share i?"));
    let resumed = inputs[2];
    for needle in [
        "## Resuming Previous Session",
        "(earlier today)",
        "late binding: loop lambdas share one variable",
    ] {
        assert!(resumed.contains(needle), "{needle}: {resumed:.600}");
    }
    assert!(trace.frames_received().len() > inputs.len());
    assert!(trace.jsonl().lines().count() == trace.events.len());
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}
