//! The real `studyloop web` binary with an ACP agent that asks to read a FIFO
//! in its session dir: the request is refused at once, and SIGTERM still stops
//! the server promptly, ending the session and its agent.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::testkit;
use crate::env::Env;
use crate::web::acp::limit_tests::agent_script;

/// Kills what the test started if it fails half-way (the server, the agent's group).
struct Reap {
    server: std::process::Child,
    agent: Option<i32>,
}

impl Drop for Reap {
    fn drop(&mut self) {
        if let Some(group) = self.agent.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

#[test]
fn a_fifo_read_request_does_not_stop_sigterm_from_ending_the_server() {
    let root = tempfile::tempdir().expect("tempdir");
    let home = root.path().join("home");
    let tmux = root.path().join("t");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&tmux).expect("tmux dir");
    let script = root.path().join("agent.sh");
    let answer = root.path().join("answer.json");
    std::fs::write(
        &script,
        agent_script(
            r#"mkfifo pipe
printf '{"jsonrpc":"2.0","id":"fifo","method":"fs/read_text_file","params":{"sessionId":"script-1","path":"%s/pipe"}}\n' "$PWD"
read -r l; printf '%s\n' "$l" > "$1"; sleep 300"#,
        ),
    )
    .expect("script");
    let pairs: Vec<(String, String)> = vec![
        ("HOME".into(), home.display().to_string()),
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("TMUX_TMPDIR".into(), tmux.display().to_string()),
        (
            "STUDYLOOP_TEST_ACP_CMD".into(),
            format!("/bin/sh '{}' '{}'", script.display(), answer.display()),
        ),
    ];
    let env = Env::from_pairs(pairs.clone());
    let config = crate::settings::config_file(&env).expect("config path");
    crate::config::init(&config, false).expect("default config");

    let server = Command::new(testkit::bin("studyloop"))
        .args(["web", "--port", "0"])
        .env_clear()
        .envs(pairs)
        .current_dir(&home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("studyloop web");
    let mut reap = Reap {
        server,
        agent: None,
    };
    let mut line = String::new();
    BufReader::new(reap.server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let (base, token) = line
        .trim()
        .strip_prefix("studyloop web listening on http://")
        .and_then(|rest| rest.split_once("/?token="))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let base = base.to_owned();
    testkit::register(&base, token);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let (started, state) = rt.block_on(async {
        let body = json!({"topic": "fifo", "agent": "codex", "transport": "acp"});
        let started = testkit::request(&base, "POST", "/api/session/start", Some(&body)).await;
        let state = testkit::request(&base, "GET", "/api/session/state", None).await;
        (started, state.json())
    });
    assert_eq!(started.status, 201, "{}", started.body);
    let agent = state["child_pid"].as_u64().expect("child_pid");
    reap.agent = i32::try_from(agent).ok();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !answer.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let reply = std::fs::read_to_string(&answer).unwrap_or_default();
    assert!(
        reply.contains("\"error\"") && reply.contains("regular file"),
        "the agent must get an error at once, got {reply:?}"
    );

    let pid =
        rustix::process::Pid::from_raw(i32::try_from(reap.server.id()).expect("pid")).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let began = Instant::now();
    let status = loop {
        if let Some(status) = reap.server.try_wait().expect("wait") {
            break Some(status);
        }
        if began.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.is_some(), "studyloop web ignored SIGTERM for 10 s");
    eprintln!("SIGTERM to exit: {:?}", began.elapsed());
    assert!(
        !PathBuf::from(format!("/proc/{agent}")).exists(),
        "agent {agent} outlived the server"
    );
    let paths = crate::settings::session_paths(&env).expect("paths");
    let s = crate::state::StateStore::new(&paths).read().expect("read");
    assert!(
        s.is_none_or(|s| !s.is_active()),
        "the state still says active"
    );
}
