//! The full CLI lifecycle against the real binary, a private tmux server and
//! the test-agent hatch: start → topic/park → end → resume → end, plus the
//! claim rules and the agent-exit door.

use crate::common;

use common::{AGENT_CMD, World, mode_of, read_when_ready, wait_until};
use sha2::Digest;

fn sha16(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn start_topic_park_end_resume_end() {
    let w = World::new();

    // Start.
    let out = w
        .run(&[
            "study",
            "SQL window functions",
            "--agent",
            "codex",
            "--energy",
            "7",
        ])
        .ok();
    assert!(
        out.stdout.contains("Started study session"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("Attach with: tmux attach -t study-sql-window-functions-"),
        "no TTY: no attach, a hint instead"
    );
    let s = w.state().unwrap();
    let id1 = w.field("study_session_id");
    let name = w.field("mux_session");
    let dir = std::path::PathBuf::from(w.field("session_dir"));
    assert_eq!(id1.len(), 36);
    assert_eq!(name, format!("study-sql-window-functions-{}", &id1[..8]));
    assert_eq!(s["tmux_session"], s["mux_session"], "legacy mirror");
    assert_eq!(
        (
            s["mode"].as_str(),
            s["energy"].as_u64(),
            s["energy_label"].as_str()
        ),
        (Some("study"), Some(7), Some("medium"))
    );
    assert_eq!(
        (s["agent"].as_str(), s["resumed"].as_bool()),
        (Some("codex"), Some(false))
    );
    assert!(
        s.get("pid").is_none(),
        "the CLI process is gone; tmux owns the session"
    );
    assert_eq!(mode_of(&w.state_path()), 0o600);
    assert_eq!(dir, w.config_dir().join("sessions").join(&name));
    assert_eq!(w.sessions(), vec![name.clone()]);
    let panes = w
        .tmux(&[
            "list-panes",
            "-t",
            &format!("={name}:"),
            "-F",
            "#{pane_id} #{pane_width}",
        ])
        .ok();
    assert_eq!(
        panes.stdout.lines().count(),
        2,
        "main pane + sidebar: {}",
        panes.stdout
    );
    wait_until(10, "a live child in the main pane", || {
        w.main_pane_has_child()
    });

    // The harness got the canonical persona, and the hatch stayed out of its env.
    let persona = read_when_ready(&dir.join("persona-seen.md"), 10);
    assert!(
        persona.starts_with("<!-- PERSONA=studyloop-study -->\n# Study Session Context"),
        "{persona}"
    );
    assert_eq!(sha16(&persona), w.field("persona_hash"));
    assert!(
        persona.contains(
            &w.config_dir()
                .join("session-topics.md")
                .display()
                .to_string()
        )
    );
    let agent_env = read_when_ready(&dir.join("agent-env.txt"), 10);
    assert!(
        !agent_env.contains("STUDYLOOP_TEST_AGENT_CMD"),
        "hatch leaked into the agent env"
    );
    assert!(
        agent_env
            .lines()
            .any(|l| l.starts_with(&format!("PATH={}:", dir.display()))),
        "session dir first on PATH"
    );
    assert!(
        dir.join("studyloop").is_file()
            && dir.join("AGENTS.md").is_file()
            && dir.join("CLAUDE.md").is_file()
    );

    // The agent's side: the `studyloop` shim on the pane's PATH logs topics.
    let shim = dir.join("studyloop");
    let st = std::process::Command::new(&shim)
        .args(["topic", "ROW_NUMBER", "-s", "win", "-n", "ranks rows"])
        .env_clear()
        .envs([("HOME", w.home.path().as_os_str())])
        .status()
        .unwrap();
    assert!(st.success(), "shim runs this install");
    w.run(&["topic", "RANGE frames", "-s", "struggling", "-n", "peers?"])
        .ok();
    w.run(&["park", "How do NULLs sort?"]).ok();
    let status = common::json_result(&w.run(&["status", "--json"]).ok(), "status");
    assert_eq!(
        (
            status["active"].as_bool(),
            status["topics_logged"].as_u64(),
            status["parked"].as_u64()
        ),
        (Some(true), Some(2), Some(1))
    );
    let sidebar = w.run(&["sidebar", "--once"]).ok().stdout;
    assert!(
        sidebar.contains("SQL window functions") && sidebar.contains("ROW_NUMBER"),
        "{sidebar}"
    );

    // End.
    let out = w.run(&["study", "--end"]).ok();
    assert!(out.stdout.contains("1 wins, 1 struggles"), "{}", out.stdout);
    assert_eq!(w.field("mode"), "ended");
    assert!(w.sessions().is_empty(), "the session's tmux session killed");
    assert!(w.state_path().exists(), "state file kept");
    assert!(
        !w.config_dir().join("session-topics.md").exists()
            && !w.config_dir().join("session-parking.md").exists()
    );
    let db = w.db();
    let (outcome, wins, struggles, notes, ended): (String, i64, i64, String, Option<String>) = db
        .query_row("SELECT outcome, win_count, struggle_count, notes, ended_at FROM study_sessions WHERE id = ?1", [&id1], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap();
    assert_eq!((outcome.as_str(), wins, struggles), ("ended", 1, 1));
    assert!(ended.is_some());
    assert_eq!(
        notes,
        "Wins:\n- ROW_NUMBER: ranks rows\n\nStruggling:\n- RANGE frames: peers?\n\nParked:\n- How do NULLs sort?"
    );
    let progress: Vec<(String, String)> = db
        .prepare("SELECT concept, confidence FROM study_progress WHERE topic = 'sql window functions' ORDER BY concept")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        progress,
        vec![
            ("RANGE frames".into(), "struggling".into()),
            ("ROW_NUMBER".into(), "confident".into())
        ]
    );
    assert_eq!(
        w.run(&["study", "--end"]).ok().stdout,
        "No active session found.\n"
    );

    // Resume: same tmux name and dir, new id, the harness's resume argv, old notes in the persona.
    let seen = dir.join("persona-seen.md");
    std::fs::remove_file(&seen).unwrap();
    let out = w.run(&["study", "--resume"]).ok();
    assert!(
        out.stdout.contains("Resumed study session"),
        "{}",
        out.stdout
    );
    let id2 = w.field("study_session_id");
    assert_ne!(id2, id1);
    assert_eq!(
        (w.field("mux_session"), w.field("session_dir")),
        (name.clone(), dir.display().to_string())
    );
    assert_eq!(w.field("mode"), "study");
    assert_eq!(w.state().unwrap()["resumed"].as_bool(), Some(true));
    assert!(
        w.field("agent_command").ends_with("'resume' '--last'"),
        "{}",
        w.field("agent_command")
    );
    assert_eq!(w.sessions(), vec![name.clone()]);
    let persona2 = read_when_ready(&seen, 10);
    assert!(
        persona2.contains("## Resuming Previous Session")
            && persona2.contains("ROW_NUMBER: ranks rows"),
        "{persona2}"
    );

    // End again; the search index has the first session's log.
    w.run(&["study", "--end"]).ok();
    assert_eq!(w.field("mode"), "ended");
    assert!(w.sessions().is_empty());
    let hits = common::json_result(&w.run(&["search", "row_number", "--json"]).ok(), "search");
    let first = &hits["results"][0];
    assert_eq!(first["session_id"].as_str(), Some(id1.as_str()), "{hits}");
    assert_eq!(first["source"].as_str(), Some("studyloop"));
}

#[test]
fn the_agent_exiting_ends_the_session() {
    let w = World::new().with_env("STUDYLOOP_TEST_AGENT_CMD", "echo bye");
    w.run(&["study", "Quick", "--agent", "pi"]).ok();
    let id = w.field("study_session_id");
    wait_until(15, "the pane hook to end the session", || {
        w.state().is_some_and(|s| s["mode"] == "ended")
    });
    wait_until(10, "the tmux session to go", || w.sessions().is_empty());
    // The pane's end dies by its own last step; the next command tidies up quietly.
    let journal = w.config_dir().join("session-journal.json");
    wait_until(10, "the next command to tidy the journal", || {
        let status = w.run(&["status"]).ok();
        assert_eq!(status.stderr, "", "no repair notice after a normal end");
        !journal.exists()
    });
    let outcome: String = w
        .db()
        .query_row(
            "SELECT outcome FROM study_sessions WHERE id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(outcome, "ended");
}

#[test]
fn a_live_session_blocks_a_second_start() {
    let w = World::new();
    w.run(&["study", "First", "--agent", "claude"]).ok();
    let before = w.state().unwrap();
    let out = w.run(&["study", "Second", "--agent", "pi"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("A session is already active"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("--resume") && out.stderr.contains("--end"),
        "{}",
        out.stderr
    );
    assert_eq!(
        out.stderr.trim().lines().count(),
        1,
        "one line: {}",
        out.stderr
    );
    assert_eq!(
        w.state().unwrap(),
        before,
        "the live session's state is untouched"
    );
    assert_eq!(w.sessions().len(), 1);
    let rows: i64 = w
        .db()
        .query_row("SELECT count(*) FROM study_sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn a_stale_claim_is_reclaimed_with_a_warning() {
    let w = World::new();
    // A session whose CLI died and whose tmux session is gone.
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    std::fs::create_dir_all(w.config_dir()).unwrap();
    std::fs::write(
        w.config_dir().join("session-topics.md"),
        "- [00:00] leftover | status:win | old\n",
    )
    .unwrap();
    let stale = serde_json::json!({
        "study_session_id": "11111111-2222-4333-8444-555555555555",
        "mode": "study", "topic": "old", "pid": dead_pid,
        "mux_session": "study-old-11111111", "tmux_session": "study-old-11111111"
    });
    std::fs::write(w.state_path(), stale.to_string()).unwrap();
    let out = w.run(&["study", "New topic", "--agent", "opencode"]).ok();
    assert!(
        out.stderr
            .contains("warning: reclaiming stale session 11111111-2222-4333-8444-555555555555"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("study-old-11111111 is gone"),
        "{}",
        out.stderr
    );
    assert_ne!(
        w.field("study_session_id"),
        "11111111-2222-4333-8444-555555555555"
    );
    assert_eq!(w.field("topic"), "New topic");
    let topics = std::fs::read_to_string(w.config_dir().join("session-topics.md")).unwrap();
    assert!(topics.is_empty(), "stale feed cleared: {topics}");
}

#[test]
fn resume_with_nothing_to_resume() {
    let w = World::new();
    let out = w.run(&["study", "--resume"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr.trim(),
        "studyloop: error: No active session to resume."
    );
}

#[test]
fn scrub_env_keeps_credentials_from_the_harness() {
    let mut w = World::new();
    w.set_env("OPENAI_API_KEY", "sk-test-not-real");
    w.set_env("MONKEY", "kept");
    w.run(&["study", "Scrubbed", "--agent", "codex", "--scrub-env"])
        .ok();
    let dir = std::path::PathBuf::from(w.field("session_dir"));
    let env = read_when_ready(&dir.join("agent-env.txt"), 10);
    assert!(
        !env.contains("OPENAI_API_KEY") && env.contains("MONKEY=kept"),
        "{env}"
    );
    w.run(&["study", "--end"]).ok();

    // Without --scrub-env the harness inherits the caller's env, as in the reference.
    w.run(&["study", "Inherit", "--agent", "codex"]).ok();
    let dir = std::path::PathBuf::from(w.field("session_dir"));
    let env = read_when_ready(&dir.join("agent-env.txt"), 10);
    assert!(env.contains("OPENAI_API_KEY=sk-test-not-real"), "{env}");
    assert!(!env.contains("STUDYLOOP_TEST_AGENT_CMD"));
    w.run(&["study", "--end"]).ok();
    let _ = AGENT_CMD;
}

#[test]
fn a_terminal_is_attached_to_the_new_session() {
    let w = World::new();
    // `script` gives studyloop a terminal on stdin, as a learner's shell would.
    let line = format!("{} study Attached --agent pi", common::exe());
    let mut child = w
        .program("/usr/bin/script", &["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until(10, "a tmux client attached to the study session", || {
        w.state().is_some_and(|s| s["mux_session"].is_string())
            && w.tmux(&["list-clients", "-F", "#{client_session}"])
                .stdout
                .trim()
                == w.field("mux_session")
    });
    w.run(&["study", "--end"]).ok();
    wait_until(10, "the attached client to exit with the session", || {
        child.try_wait().unwrap().is_some()
    });
}
