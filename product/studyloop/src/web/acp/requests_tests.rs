//! The fs requests an agent may not make (issue 27 item 11): a relative path
//! (ACP paths are absolute), a `sessionId` other than the one `session/new`
//! returned, and any request before `session/new` has answered. Each agent is
//! a `/bin/sh` script that writes the client's answers to a file in its cwd.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::AcpSession;
use super::limit_tests::{REPLY_FN, script_agent};
use super::tests::{command, fast, runtime, until};

/// Waits (5 s at most) for `file` to hold `lines` JSON lines; returns them.
async fn answers(file: &Path, lines: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let got: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if got.len() >= lines || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The answer with `id`, or a panic listing what came.
fn by_id<'a>(all: &'a [Value], id: &str) -> &'a Value {
    all.iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id}: {all:#?}"))
}

/// The -32602 message of an error answer (a panic when it was served).
fn refusal(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn relative_paths_and_another_sessions_id_are_refused_naming_value_and_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "mine").expect("seed");
    let body = r#"ask() { printf '%s\n' "$1"; read -r a; printf '%s\n' "$a" >> answers.jsonl; }
ask '{"jsonrpc":"2.0","id":"rel-read","method":"fs/read_text_file","params":{"sessionId":"script-1","path":"notes.txt"}}'
ask '{"jsonrpc":"2.0","id":"rel-write","method":"fs/write_text_file","params":{"sessionId":"script-1","path":"planted.txt","content":"x"}}'
ask "{\"jsonrpc\":\"2.0\",\"id\":\"foreign-read\",\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"other-9\",\"path\":\"$PWD/notes.txt\"}}"
ask "{\"jsonrpc\":\"2.0\",\"id\":\"foreign-write\",\"method\":\"fs/write_text_file\",\"params\":{\"sessionId\":\"other-9\",\"path\":\"$PWD/planted.txt\",\"content\":\"x\"}}"
ask "{\"jsonrpc\":\"2.0\",\"id\":\"own\",\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"script-1\",\"path\":\"$PWD/notes.txt\"}}"
sleep 300"#;
    let all = runtime().block_on(async {
        let s = AcpSession::start(script_agent(dir.path(), body), fast())
            .await
            .expect("start");
        let all = answers(&dir.path().join("answers.jsonl"), 5).await;
        s.stop().await;
        all
    });
    for id in ["rel-read", "rel-write"] {
        let msg = refusal(by_id(&all, id));
        assert!(
            msg.contains("notes.txt") || msg.contains("planted.txt"),
            "names the value: {msg}"
        );
        assert!(msg.contains("must be absolute"), "names the rule: {msg}");
    }
    for id in ["foreign-read", "foreign-write"] {
        let msg = refusal(by_id(&all, id));
        assert!(
            msg.contains("`other-9`") && msg.contains("`script-1`"),
            "names the value and the session it serves: {msg}"
        );
    }
    // The refusals are about the request, not the file: its own session's
    // absolute path is served.
    assert_eq!(by_id(&all, "own")["result"]["content"], "mine", "{all:#?}");
    assert!(!dir.path().join("planted.txt").exists());
}

#[test]
fn a_file_request_before_session_new_has_answered_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "mine").expect("seed");
    let script = format!(
        r#"{REPLY_FN}
read -r l; reply "$l" '{{"protocolVersion":1,"agentCapabilities":{{}}}}'
read -r new
printf '{{"jsonrpc":"2.0","id":"early","method":"fs/read_text_file","params":{{"sessionId":"script-1","path":"%s/notes.txt"}}}}\n' "$PWD"
read -r a; printf '%s\n' "$a" > answers.jsonl
reply "$new" '{{"sessionId":"script-1"}}'
sleep 300"#
    );
    let mut cmd = script_agent(dir.path(), "");
    cmd.argv = vec!["/bin/sh".into(), "-c".into(), script];
    let all = runtime().block_on(async {
        let s = AcpSession::start(cmd, fast()).await.expect("start");
        let all = answers(&dir.path().join("answers.jsonl"), 1).await;
        s.stop().await;
        all
    });
    let msg = refusal(by_id(&all, "early"));
    assert!(
        msg.contains("`script-1`") && msg.contains("before session/new answered"),
        "{msg}"
    );
}

/// Issue 27 item 8: ending a session while the agent waits for a permission
/// answer answers it `cancelled` (the spec requires it of a client that
/// cancels), before the `session/cancel`, tells the console which request it
/// withdrew, and reports no failure (nothing asks the learner to send again).
#[test]
fn ending_the_session_answers_a_pending_permission_request_cancelled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("stub-acp.jsonl");
    let log_s = log.display().to_string();
    let knobs = [
        ("STUB_ACP_EMIT_PERMISSION_REQUEST", "1"),
        ("STUB_ACP_LOG", log_s.as_str()),
    ];
    let rest = runtime().block_on(async {
        let s = AcpSession::start(command(dir.path(), &knobs), fast())
            .await
            .expect("start");
        s.prompt("x").expect("prompt");
        until(&s, |f| f["kind"] == "request_permission").await;
        let events = s.events();
        s.stop().await;
        std::iter::from_fn(|| events.try_recv())
            .map(|e| serde_json::to_value(&e).expect("frame"))
            .collect::<Vec<Value>>()
    });
    let sent: Vec<Value> = std::fs::read_to_string(&log)
        .expect("stub log")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let answered = sent
        .iter()
        .position(|f| f["id"] == 1 && f["result"]["outcome"]["outcome"] == "cancelled");
    let cancel = sent.iter().position(|f| f["method"] == "session/cancel");
    assert!(
        matches!((answered, cancel), (Some(a), Some(c)) if a < c),
        "the pending request must be answered cancelled before session/cancel: {sent:#?}"
    );
    // The console is told which request was withdrawn, and why.
    assert!(
        rest.iter().any(|f| f["kind"] == "permission_cancelled"
            && f["payload"] == serde_json::json!({"_request_id": "1", "why": "the session ended"})),
        "{rest:#?}"
    );
    assert!(
        !rest.iter().any(|f| f["type"] == "transport_error"),
        "{rest:#?}"
    );
}

/// Issue 27 item 8: an agent that drops the prompt with an error as the
/// session ends (as adapters do when their stream closes) ends the turn
/// `cancelled`; before, the learner read "the reply was cut off … send your
/// message again" just before "Session ended".
#[test]
fn a_prompt_that_fails_because_the_session_ends_reads_as_cancelled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = r#"read -r p; read -r c
id=$(printf '%s' "$p" | sed -n 's/.*"id":\("[^"]*"\|[0-9][0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"Internal error","data":"stream closed"}}\n' "$id"
sleep 300"#;
    let rest = runtime().block_on(async {
        let s = AcpSession::start(script_agent(dir.path(), body), fast())
            .await
            .expect("start");
        s.prompt("x").expect("prompt");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let events = s.events();
        s.stop().await;
        std::iter::from_fn(|| events.try_recv())
            .map(|e| serde_json::to_value(&e).expect("frame"))
            .collect::<Vec<Value>>()
    });
    let kinds: Vec<String> = rest
        .iter()
        .map(|f| format!("{}/{}", f["type"], f["kind"]).replace('"', ""))
        .collect();
    assert_eq!(
        kinds,
        ["agent_message/turn_end", "stopped/null"],
        "{rest:#?}"
    );
    assert_eq!(rest[0]["payload"]["reason"], "cancelled");
}
