//! Hostile agents against the ACP client: output without newlines, a crash
//! with a diagnostic on stderr, a request to read a FIFO. Each agent is a small
//! `/bin/sh` script that speaks just enough ACP (the handshake) to get a
//! session, then misbehaves.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::tests::{command, fast, pid_alive, runtime, until};
use super::{AcpSession, AgentCommand};

/// The `/bin/sh` function `reply LINE RESULT`: answers the request on LINE.
pub(crate) const REPLY_FN: &str = r#"reply() { id=$(printf '%s' "$1" | sed -n 's/.*"id":\("[^"]*"\|[0-9][0-9]*\).*/\1/p'); printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$2"; }"#;

/// The `/bin/sh` source of an ACP agent that answers `initialize` and
/// `session/new` (session id `script-1`), then runs `body`.
pub(crate) fn agent_script(body: &str) -> String {
    format!(
        r#"{REPLY_FN}
read -r l; reply "$l" '{{"protocolVersion":1,"agentCapabilities":{{}}}}'
read -r l; reply "$l" '{{"sessionId":"script-1"}}'
{body}
"#
    )
}

/// [`agent_script`] as a command with the session dir as its cwd.
pub(crate) fn script_agent(session_dir: &Path, body: &str) -> AgentCommand {
    AgentCommand {
        argv: vec!["/bin/sh".into(), "-c".into(), agent_script(body)],
        cwd: session_dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        mcp_servers: Vec::new(),
        turns: None,
    }
}

/// Makes a FIFO at `path`.
pub(crate) fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
}

fn is_stopped(frame: &Value) -> bool {
    frame["type"] == "stopped"
}

#[test]
fn output_without_newlines_ends_the_session_and_kills_the_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    runtime().block_on(async {
        let cmd = script_agent(
            dir.path(),
            "head -c 67108864 /dev/zero | tr '\\0' a; sleep 300",
        );
        let s = AcpSession::start(cmd, fast()).await.expect("start");
        let pid = s.agent_pid().expect("pid");
        let frames = until(&s, is_stopped).await;
        assert!(
            frames.iter().any(|f| f["type"] == "transport_error"
                && f["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("without a newline")),
            "{frames:#?}"
        );
        assert_eq!(
            frames.last().map(|f| f["reason"].clone()),
            Some("error".into())
        );
        s.stop().await;
        assert!(!pid_alive(pid), "agent {pid} still running");
    });
}

#[test]
fn a_crash_mid_session_reports_the_agents_stderr_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    runtime().block_on(async {
        let cmd = script_agent(
            dir.path(),
            "read -r l; echo 'boom: the adapter lost its token' >&2; exit 3",
        );
        let s = AcpSession::start(cmd, fast()).await.expect("start");
        s.prompt("hello").expect("prompt");
        let frames = until(&s, is_stopped).await;
        let crash = frames
            .iter()
            .filter(|f| f["type"] == "transport_error")
            .filter_map(|f| f["message"].as_str())
            .find(|m| m.contains("status 3"));
        assert!(
            crash.is_some_and(|m| m.contains("boom: the adapter lost its token")),
            "{frames:#?}"
        );
    });
}

#[test]
fn a_fifo_read_request_is_refused_and_does_not_hang_the_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let answer = dir.path().join("answer.json");
    runtime().block_on(async {
        let body = r#"printf '{"jsonrpc":"2.0","id":"fifo","method":"fs/read_text_file","params":{"sessionId":"script-1","path":"%s/pipe"}}\n' "$PWD"
read -r l; printf '%s\n' "$l" > answer.json; sleep 300"#;
        let s = AcpSession::start(script_agent(dir.path(), body), fast())
            .await
            .expect("start");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !answer.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let began = Instant::now();
        let stopped = tokio::time::timeout(Duration::from_secs(5), s.stop()).await;
        let took = began.elapsed();
        if stopped.is_err() {
            // Old behaviour: unblock the reader so the test process can exit.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        }
        assert!(stopped.is_ok(), "session end hung on the FIFO ({took:?})");
        let reply = std::fs::read_to_string(&answer).unwrap_or_default();
        assert!(
            reply.contains("\"error\"") && reply.contains("regular file"),
            "the agent must get an error, got {reply:?}"
        );
    });
}

#[test]
fn prompts_beyond_the_in_flight_bound_are_refused_with_an_error_frame() {
    let dir = tempfile::tempdir().expect("tempdir");
    runtime().block_on(async {
        let cmd = command(dir.path(), &[("STUB_ACP_PROMPT_WAIT_FOR_CANCEL", "1")]);
        let s = AcpSession::start(cmd, fast()).await.expect("start");
        for i in 0..6 {
            s.prompt(&format!("prompt {i}")).expect("queued");
        }
        let frames = until(&s, |f| {
            f["type"] == "transport_error"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("already waiting"))
        })
        .await;
        assert!(!frames.is_empty());
        s.stop().await;
    });
}

#[test]
fn file_reads_stop_once_the_agent_leaves_its_answers_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("big.txt"), "x".repeat(8 * 1024 * 1024)).expect("seed");
    runtime().block_on(async {
        let body = r#"for i in 1 2 3 4 5 6 7; do printf '{"jsonrpc":"2.0","id":"r%s","method":"fs/read_text_file","params":{"sessionId":"script-1","path":"%s/big.txt"}}\n' "$i" "$PWD"; done
sleep 0.3; timeout 2 cat > answers.txt; sleep 300"#;
        let s = AcpSession::start(script_agent(dir.path(), body), fast())
            .await
            .expect("start");
        tokio::time::sleep(Duration::from_secs(3)).await;
        s.stop().await;
    });
    let answers = std::fs::read_to_string(dir.path().join("answers.txt")).expect("answers");
    let refused = answers
        .lines()
        .filter(|l| l.contains("still waiting"))
        .count();
    let served = answers
        .lines()
        .filter(|l| l.contains("\"content\""))
        .count();
    eprintln!("backlog: {served} reads served, {refused} refused");
    assert!(
        refused >= 1 && served <= 5,
        "{served} served, {refused} refused"
    );
}
