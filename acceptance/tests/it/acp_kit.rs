//! The ACP client conformance kit: the real console in Chromium against a
//! scripted agent written on the official `@agentclientprotocol/sdk` (pinned in
//! `.ci/acp-kit/package-lock.json`, installed by `just deps-acp-kit`), not on
//! our own stub. The learner types the script (`.ci/acp-kit/agent.mjs` says
//! what each prompt does); the test asserts what the page shows and, from the
//! agent's report, what the client sent on the wire.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use studyloop_acceptance::web_acp::journey::{self, BrowserMentor, Snapshots};
use studyloop_actors::Mentor;

use super::acp_console::{PENDING, last_turn, permission_view};
use super::web_acp_browser::acp_console_with;

const T: Duration = Duration::from_secs(30);

/// `.ci/acp-kit` with its SDK installed, and node; else a failure naming the fix.
fn kit() -> (PathBuf, PathBuf) {
    let dir = super::markdown::workspace_root().join(".ci/acp-kit");
    let sdk = dir.join("node_modules/@agentclientprotocol/sdk/package.json");
    assert!(
        sdk.is_file(),
        "the ACP kit's SDK is not installed at {}; run `just deps-acp-kit`",
        sdk.display()
    );
    let node = ["/usr/bin/node", "/usr/local/bin/node"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("node is not installed (apt-get install nodejs)");
    (dir.join("agent.mjs"), node)
}

fn report(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn fact<'a>(facts: &'a [Value], key: &str) -> &'a Value {
    facts
        .iter()
        .find_map(|f| f.get(key))
        .unwrap_or_else(|| panic!("the kit reported no {key}: {facts:#?}"))
}

#[test]
fn the_console_against_an_agent_on_the_official_sdk_in_chromium() {
    let (agent, node) = kit();
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("kit-report.jsonl");
    let knobs = [
        (
            "STUDYLOOP_TEST_ACP_CMD",
            format!("'{}' '{}'", node.display(), agent.display()),
        ),
        ("ACP_KIT_REPORT", log.display().to_string()),
    ];
    let (scratch, mut server, chrome, base) = acp_console_with(&knobs, false);
    let mut shots = Snapshots::default();
    journey::start_acp_session(&chrome, &mut shots, &base, ("Lifetimes", "codex", false), T)
        .expect("started against the kit");
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);

    // Capability negotiation: v1, the fs methods offered, the client named.
    let init = fact(&report(&log), "initialize").clone();
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(
        init["clientCapabilities"]["fs"],
        json!({"readTextFile": true, "writeTextFile": true}),
        "{init}"
    );
    assert_eq!(init["clientInfo"]["name"], "studyloop", "{init}");

    // Streaming, a tool call with its updates, a thought and the plan, in order.
    mentor.send("stream").expect("stream turn");
    assert_eq!(
        last_turn(&chrome),
        [
            "user: stream",
            "assistant: Reading your notes.",
            "tool: Tool: Read notes.md (done)",
            "thought: Thinking: They mention lifetimes.",
            "plan: Plan: | ▸ Explain lifetimes | ○ Quiz",
            "assistant: Lifetimes name how long a borrow lasts.",
        ]
    );

    // A permission request, answered by the learner's click.
    let reply = mentor.send("permission").expect("permission turn");
    assert_eq!(reply.text, "permission outcome: selected opt-allow");
    assert_eq!(
        last_turn(&chrome)[1],
        "permission: kit asks to edit notes.md Allow once Reject (you chose: Allow once)"
    );

    // fs: inside served; outside, relative and another session's id refused.
    let reply = mentor.send("fs").expect("fs turn");
    assert_eq!(
        reply.text,
        "inside: ok; outside: refused -32602; relative: refused -32602; foreign: refused -32602"
    );
    let session_dir = fact(&report(&log), "fs").clone();
    assert_eq!(session_dir["inside"], "ok", "{session_dir}");

    // Terminal requests are not advertised (`terminal: false`), so refused.
    assert_eq!(init["clientCapabilities"]["terminal"], false, "{init}");
    let reply = mentor.send("terminal").expect("terminal turn");
    assert_eq!(reply.text, "terminal: refused -32601");

    // Every stop reason but end_turn says why the reply stopped.
    for (reason, note) in [
        (
            "max_tokens",
            "Reply cut off: the model hit its token limit. Ask it to continue, or for a shorter answer.",
        ),
        (
            "max_turn_requests",
            "Reply cut off: the agent hit its limit of model requests for one turn. Ask it to continue.",
        ),
        ("refusal", "The model refused to answer this message."),
        ("cancelled", "Reply cancelled before it finished."),
    ] {
        mentor.send(&format!("stop {reason}")).expect("stop turn");
        assert_eq!(
            last_turn(&chrome),
            [
                format!("user: stop {reason}"),
                format!("assistant: stopping: {reason}"),
                format!("system: {note}"),
            ]
        );
    }

    // A permission request pending when the learner ends the session.
    chrome.fill("#console-input", "wait").expect("type");
    chrome.click("#console-send").expect("send");
    chrome.wait_for(PENDING, T).expect("asked");
    chrome.click("#console-stop").expect("end");
    let ended = chrome.wait_for("#agent-console[data-stopped='true']", T);
    mentor.shots.take(&chrome, "kit-ended").expect("shot");
    ended.expect("ended");
    let view = permission_view(&chrome);
    assert_eq!(
        view["asks"][1]["text"],
        "kit asks to edit notes.md Allow once Reject (cancelled: the session ended)",
        "{view}"
    );
    assert_eq!(
        (&view["input"], &view["send"], &view["stop"]),
        (&json!(false), &json!(false), &json!(false)),
        "{view}"
    );
    let facts = report(&log);
    assert_eq!(
        fact(&facts, "pending_at_end")["result"],
        json!({"outcome": {"outcome": "cancelled"}}),
        "{facts:#?}"
    );
    assert!(
        facts.iter().any(|f| f.get("cancel").is_some()),
        "{facts:#?}"
    );
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}
