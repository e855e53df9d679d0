//! The ACP client side of the web console as the learner sees it (issue 27,
//! items 7-12): real `studyloop web`, real headless Chromium, and
//! `studyloop-stub-acp` (a test double) scripted by its `STUB_ACP_*` knobs.
//! Each test reads what the page shows (text, order, enabled state) and, where
//! the claim is about the wire, the stub's log of what the client sent.

use std::time::Duration;

use serde_json::{Value, json};
use studyloop_acceptance::web_acp::browser::Browser;
use studyloop_acceptance::web_acp::http;
use studyloop_acceptance::web_acp::journey::{self, BrowserMentor, Snapshots};
use studyloop_actors::Mentor;

use super::web_acp_browser::acp_console_with;

const T: Duration = Duration::from_secs(30);

/// The console entries at level `SEVERE` (errors) gathered since the last read.
fn console_errors(chrome: &Browser) -> Vec<Value> {
    chrome
        .console_log()
        .expect("console log")
        .into_iter()
        .filter(|e| e["level"] == "SEVERE")
        .collect()
}

/// What the learner sees of the latest turn, in page order: one
/// `role: text` line per item (the text as rendered, `innerText`).
pub(crate) fn last_turn(chrome: &Browser) -> Vec<String> {
    let items = chrome
        .eval(
            "const all = [...document.querySelectorAll('#acp-log > li')];\
             const turn = all.length ? all[all.length - 1].dataset.turn : null;\
             return all.filter(li => li.dataset.turn === turn)\
               .map(li => li.dataset.role + ': ' + li.innerText.trim().replace(/\\s*\\n\\s*/g, ' | '));",
            Vec::new(),
        )
        .expect("read the log");
    serde_json::from_value(items).expect("strings")
}

/// A fresh console on the stub scripted by `knobs`, the persona delivered.
fn started(
    knobs: &[(&str, String)],
) -> (
    studyloop_acceptance::scratch::Scratch,
    studyloop_acceptance::web_acp::WebServer,
    Browser,
    Snapshots,
) {
    let (scratch, server, chrome, base) = acp_console_with(knobs, false);
    let mut shots = Snapshots::default();
    journey::start_acp_session(&chrome, &mut shots, &base, ("Ownership", "codex", false), T)
        .expect("started");
    (scratch, server, chrome, shots)
}

/// Issue 27 item 10: a turn that ends for a reason other than `end_turn` says
/// so below its text; before, a reply cut off at the token limit looked whole.
#[test]
fn a_turn_that_stops_early_says_why_in_chromium() {
    let reasons = "end_turn,max_tokens,max_turn_requests,refusal,cancelled,end_turn";
    let (scratch, mut server, chrome, shots) =
        started(&[("STUB_ACP_PROMPT_STOP_REASON", reasons.into())]);
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);
    let mut seen = Vec::new();
    for q in ["one", "two", "three", "four", "five"] {
        mentor.send(q).expect("turn");
        seen.push(last_turn(&chrome));
    }
    let turn = |n: u32, q: &str, note: Option<&str>| {
        let mut lines = vec![
            format!("user: {q}"),
            format!("assistant: STUB-ACP-ECHO {n}: {q}"),
        ];
        lines.extend(note.map(|t| format!("system: {t}")));
        lines
    };
    assert_eq!(
        seen,
        [
            turn(
                2,
                "one",
                Some(
                    "Reply cut off: the model hit its token limit. Ask it to continue, or for a shorter answer."
                )
            ),
            turn(
                3,
                "two",
                Some(
                    "Reply cut off: the agent hit its limit of model requests for one turn. Ask it to continue."
                )
            ),
            turn(
                4,
                "three",
                Some("The model refused to answer this message.")
            ),
            turn(5, "four", Some("Reply cancelled before it finished.")),
            turn(6, "five", None),
        ]
    );
    mentor.end().expect("ended");
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// ACP `session/update` payloads as the stub's knob wants them.
fn chunk(text: &str) -> Value {
    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
}

/// Issue 27 item 9: a turn reads in the order its updates came. Before, text
/// after a tool call was appended to the bubble above the "Tool:" line, and
/// tool call updates, plans and thoughts were never shown.
#[test]
fn a_turn_shows_its_updates_in_the_order_they_came_in_chromium() {
    let turn = json!([
        chunk("Let me look at your notes."),
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read notes.md",
         "kind": "read", "status": "pending"},
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "The notes "}},
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "mention borrowing."}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"},
        chunk("While it reads: "),
        chunk("ownership first."),
        {"sessionUpdate": "plan", "entries": [
            {"content": "Review moves", "priority": "high", "status": "in_progress"},
            {"content": "Practise borrows", "priority": "medium", "status": "pending"}]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
        {"sessionUpdate": "plan", "entries": [
            {"content": "Review moves", "priority": "high", "status": "completed"},
            {"content": "Practise borrows", "priority": "medium", "status": "in_progress"}]},
        {"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Run quiz", "status": "pending"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t2", "status": "failed"},
        chunk("Done."),
    ]);
    let seq = json!([[chunk("persona ok")], turn]);
    let (scratch, mut server, chrome, shots) =
        started(&[("STUB_ACP_PROMPT_UPDATES_SEQ", seq.to_string())]);
    let mut mentor = BrowserMentor::new(&chrome, shots, T, 1);
    let reply = mentor.send("what next?").expect("turn");
    mentor.shots.take(&chrome, "chronology").expect("shot");
    assert_eq!(
        last_turn(&chrome),
        [
            "user: what next?",
            "assistant: Let me look at your notes.",
            "tool: Tool: Read notes.md (done)",
            "thought: Thinking: The notes mention borrowing.",
            "assistant: While it reads: ownership first.",
            "plan: Plan: | ✓ Review moves | ▸ Practise borrows",
            "tool: Tool: Run quiz (failed)",
            "assistant: Done.",
        ]
    );
    // The learner actor reads the whole reply, every stretch of text in order.
    assert_eq!(
        reply.text,
        "Let me look at your notes.\n\nWhile it reads: ownership first.\n\nDone."
    );
    mentor.end().expect("ended");
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// The frames the stub received (its `STUB_ACP_LOG`), parsed.
fn stub_log(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The client's answer to the stub's permission request `id` (its outcome), if any.
fn permission_answer(log: &[Value], id: u64) -> Option<Value> {
    log.iter()
        .find(|f| f["id"] == id && f.get("method").is_none())
        .map(|f| f["result"]["outcome"].clone())
}

/// The permission request items and the message box as the learner sees them.
pub(crate) fn permission_view(chrome: &Browser) -> Value {
    chrome
        .eval(
            "const c = document.getElementById('agent-console');\
             return {asks: [...document.querySelectorAll('.acp-msg[data-role=\"permission\"]')].map(li => ({\
               text: li.innerText.trim(), status: li.dataset.status,\
               buttons: [...li.querySelectorAll('button')].map(b => [b.textContent, !b.disabled])})),\
               input: !document.getElementById('console-input').disabled,\
               send: !document.getElementById('console-send').disabled,\
               stop: !document.getElementById('console-stop').disabled,\
               busy: c.dataset.busy, turns: c.dataset.turns || '0'};",
            Vec::new(),
        )
        .expect("read the console")
}

pub(crate) const PENDING: &str = "#acp-log .acp-msg[data-role='permission'][data-status='pending']";

/// Issue 27 item 7: a permission request during the hidden persona turn was
/// granted by the console (`allow_once`) and never shown. It is the learner's:
/// shown, left waiting until they answer, and answered with their choice.
#[test]
fn a_permission_request_in_the_persona_turn_waits_for_the_learner_in_chromium() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("stub-acp.jsonl");
    let knobs = [
        ("STUB_ACP_EMIT_PERMISSION_REQUEST", "1".to_owned()),
        ("STUB_ACP_LOG", log.display().to_string()),
    ];
    let (scratch, mut server, chrome, base) = acp_console_with(&knobs, false);
    let mut shots = Snapshots::default();
    journey::submit_acp_start(&chrome, &mut shots, &base, ("Ownership", "codex", false))
        .expect("submitted");
    let shown = chrome.wait_for(PENDING, T);
    shots.take(&chrome, "persona-permission").expect("shot");
    shown.expect("the persona turn's permission request is shown");
    // Time in which the old console had long granted it.
    std::thread::sleep(Duration::from_millis(1500));
    let view = permission_view(&chrome);
    assert_eq!(
        view["asks"],
        json!([{"text": "While reading its instructions, the mentor asks: stub-acp asks to edit a file Allow once Deny",
                "status": "pending", "buttons": [["Allow once", true], ["Deny", true]]}]),
        "{view}"
    );
    assert_eq!(
        (&view["busy"], &view["turns"]),
        (&json!("true"), &json!("0"))
    );
    assert_eq!(
        permission_answer(&stub_log(&log), 1),
        None,
        "granted unasked"
    );
    chrome
        .click(&format!("{PENDING} button[data-option-id='opt-deny']"))
        .expect("the learner denies");
    chrome
        .wait_for("#agent-console[data-busy='false'][data-turns='1']", T)
        .expect("the persona turn ends");
    assert_eq!(
        permission_answer(&stub_log(&log), 1),
        Some(json!({"outcome": "selected", "optionId": "opt-deny"}))
    );
    let view = permission_view(&chrome);
    assert_eq!(
        view["asks"][0]["text"],
        "While reading its instructions, the mentor asks: stub-acp asks to edit a file Allow once Deny (you chose: Deny)",
        "{view}"
    );
    assert_eq!(
        view["asks"][0]["buttons"],
        json!([["Allow once", false], ["Deny", false]])
    );
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// Issue 27 item 8: ending the session while a permission request waits
/// answers it `cancelled` (the spec), and nothing stays live: before, the
/// Allow/Reject buttons and the Send box still worked after "Session ended".
#[test]
fn ending_the_session_with_a_permission_pending_cancels_it_and_leaves_nothing_live_in_chromium() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("stub-acp.jsonl");
    let knobs = [
        ("STUB_ACP_EMIT_PERMISSION_REQUEST", "1".to_owned()),
        ("STUB_ACP_LOG", log.display().to_string()),
    ];
    let (scratch, mut server, chrome, base) = acp_console_with(&knobs, false);
    let mut shots = Snapshots::default();
    // The learner answers the persona turn's request (Allow once).
    journey::start_acp_session(&chrome, &mut shots, &base, ("Ownership", "codex", false), T)
        .expect("started");
    chrome
        .fill("#console-input", "edit my notes")
        .expect("type");
    chrome.click("#console-send").expect("send");
    chrome.wait_for(PENDING, T).expect("asked");
    chrome.click("#console-stop").expect("end the session");
    let ended = chrome.wait_for("#agent-console[data-stopped='true']", T);
    shots
        .take(&chrome, "ended-with-permission-pending")
        .expect("shot");
    ended.expect("ended");
    let view = permission_view(&chrome);
    assert_eq!(
        view["asks"][1],
        json!({"text": "stub-acp asks to edit a file Allow once Deny (cancelled: the session ended)",
               "status": "withdrawn", "buttons": [["Allow once", false], ["Deny", false]]}),
        "{view}"
    );
    assert_eq!(
        (&view["input"], &view["send"], &view["stop"]),
        (&json!(false), &json!(false), &json!(false)),
        "the message box is live after the end: {view}"
    );
    let items = last_turn(&chrome);
    assert_eq!(
        items.last().map(String::as_str),
        Some("system: Session ended (cancel)"),
        "{items:#?}"
    );
    assert!(
        !items
            .iter()
            .any(|i| i.contains("Error:") || i.contains("again")),
        "{items:#?}"
    );
    let sent = stub_log(&log);
    assert_eq!(
        permission_answer(&sent, 1),
        Some(json!({"outcome": "selected", "optionId": "opt-allow"}))
    );
    assert_eq!(
        permission_answer(&sent, 2),
        Some(json!({"outcome": "cancelled"})),
        "the pending request was never answered cancelled: {sent:#?}"
    );
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}

/// Issue 27 item 12: `/favicon.ico` was a 404, one console error per page load.
#[test]
fn a_page_load_logs_no_console_error_in_chromium() {
    let (scratch, mut server, chrome, base) = acp_console_with(&[], false);
    for load in 0..2 {
        chrome
            .goto(&format!("{base}/#dashboard"))
            .expect("dashboard");
        chrome
            .wait_for("body[data-agent-resolved] #start-form:not([hidden])", T)
            .expect("dashboard ready");
        // The icon is fetched after the load event: give it time to fail.
        std::thread::sleep(Duration::from_millis(1500));
        let errors = console_errors(&chrome);
        assert_eq!(errors, Vec::<Value>::new(), "page load {load}");
    }
    let icon = http::request(&server.addr, "GET", "/favicon.ico", None, T).expect("icon");
    assert_eq!(icon.status, 200, "{}", icon.text);
    assert!(icon.text.starts_with("<svg"), "{}", icon.text);
    chrome.close();
    server.stop(Duration::from_secs(10));
    scratch.close().expect("scratch swept");
}
