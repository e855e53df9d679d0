//! Bad input and closed gates: each is a one-line error naming the value and
//! the fix, a non-zero exit, and nothing left behind (no state, no DB row, no
//! session dir, no tmux server).

use crate::common;

use common::World;

/// Nothing a start could have written exists.
#[track_caller]
fn assert_untouched(w: &World) {
    assert!(!w.state_path().exists(), "state file written");
    assert!(!w.config_dir().join("sessions.db").exists(), "DB created");
    assert!(
        !w.config_dir().join("sessions").exists(),
        "session dir created"
    );
    assert!(!w.server_running(), "a tmux server was started");
}

#[track_caller]
fn one_line_error(out: &common::Out, code: i32) -> String {
    assert_eq!(out.code, code, "{out:?}");
    assert_eq!(
        out.stderr.trim().lines().count(),
        1,
        "one line: {}",
        out.stderr
    );
    assert!(
        out.stderr.starts_with("studyloop: error: "),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE"));
    out.stderr.clone()
}

#[test]
fn no_scope_exits_2_and_launches_nothing() {
    let w = World::bare().with_env("STUDYLOOP_TEST_AGENT_CMD", common::AGENT_CMD);
    let err = one_line_error(&w.run(&["study", "Test Topic", "--agent", "codex"]), 2);
    assert!(
        err.contains("No context scope configured") && err.contains("memory.default_scope"),
        "{err}"
    );
    assert!(!err.contains("Traceback"));
    assert_untouched(&w);
    // A config without a scope is the same gate.
    std::fs::create_dir_all(w.config_dir()).unwrap();
    std::fs::write(w.config_dir().join("config.yaml"), "topics: []\n").unwrap();
    one_line_error(&w.run(&["study", "Test Topic", "--agent", "codex"]), 2);
    assert!(!w.state_path().exists());
    // SESSION_CONTEXT_SCOPE opens it; a bad value is a clear error.
    let w2 = w.with_env("SESSION_CONTEXT_SCOPE", "galaxy");
    let err = one_line_error(&w2.run(&["study", "Test Topic", "--agent", "codex"]), 1);
    assert!(
        err.contains("SESSION_CONTEXT_SCOPE=`galaxy`")
            && err.contains("personal, work, unclassified"),
        "{err}"
    );
}

#[test]
fn unknown_agent_names_the_six() {
    let w = World::new();
    let err = one_line_error(&w.run(&["study", "x", "--agent", "oclode"]), 1);
    assert!(
        err.contains("`oclode`") && err.contains("codex, claude, kiro, pi, opencode, grok"),
        "{err}"
    );
    assert_untouched(&w);
}

#[test]
fn bad_energy_and_mode() {
    let w = World::new();
    for bad in ["0", "11", "high"] {
        let err = one_line_error(&w.run(&["study", "x", "--agent", "pi", "--energy", bad]), 1);
        assert!(
            err.contains(&format!("`{bad}`")) && err.contains("1 (low) to 10 (high)"),
            "{err}"
        );
    }
    let err = one_line_error(
        &w.run(&["study", "x", "--agent", "pi", "--mode", "focus"]),
        1,
    );
    assert!(
        err.contains("`focus`") && err.contains("study, co-study, plan-architect"),
        "{err}"
    );
    let err = one_line_error(&w.run(&["study", "   ", "--agent", "pi"]), 1);
    assert!(err.contains("topic is required"), "{err}");
    assert_untouched(&w);
}

#[test]
fn malformed_config_names_file_and_line() {
    let w = World::bare().with_env("STUDYLOOP_TEST_AGENT_CMD", common::AGENT_CMD);
    std::fs::create_dir_all(w.config_dir()).unwrap();
    let cfg = w.config_dir().join("config.yaml");
    std::fs::write(&cfg, "topics: []\nmemory:\n  default_scope: [unclosed\n").unwrap();
    let err = one_line_error(&w.run(&["study", "x", "--agent", "codex"]), 1);
    assert!(
        err.contains(&cfg.display().to_string()) && err.contains("line"),
        "{err}"
    );
    assert_untouched(&w);
    std::fs::write(&cfg, "memory:\n  default_scope: galaxy\n").unwrap();
    let err = one_line_error(&w.run(&["study", "x", "--agent", "codex"]), 1);
    assert!(err.contains("at line 2"), "{err}");
    assert_untouched(&w);
    // An unreadable config (a directory here) is an error too, not a default.
    std::fs::remove_file(&cfg).unwrap();
    std::fs::create_dir(&cfg).unwrap();
    let err = one_line_error(&w.run(&["study", "x", "--agent", "codex"]), 1);
    assert!(err.contains("cannot read config file"), "{err}");
}

#[test]
fn missing_tmux_is_reported_before_anything_is_written() {
    let mut w = World::new();
    w.set_env("PATH", &w.bin.display().to_string());
    let err = one_line_error(&w.run(&["study", "x", "--agent", "codex"]), 1);
    assert!(
        err.contains("tmux not found on PATH") && err.contains("3.1"),
        "{err}"
    );
    assert!(!w.state_path().exists() && !w.config_dir().join("sessions.db").exists());
}

#[test]
fn old_tmux_is_refused() {
    let w = World::new();
    w.fake_bin("tmux", "echo 'tmux 2.9a'");
    let err = one_line_error(&w.run(&["study", "x", "--agent", "codex"]), 1);
    assert!(
        err.contains("tmux 2.9a is too old") && err.contains("3.1"),
        "{err}"
    );
    assert!(!w.state_path().exists());
}

#[test]
fn missing_harness_binary_without_the_hatch() {
    let mut w = World::new();
    w.remove_env("STUDYLOOP_TEST_AGENT_CMD");
    let err = one_line_error(&w.run(&["study", "x", "--agent", "codex"]), 1);
    assert!(
        err.contains("binary `codex` not found on PATH") && err.contains("--agent"),
        "{err}"
    );
    assert_untouched(&w);
    let err = one_line_error(&w.run(&["study", "x"]), 1);
    assert!(err.contains("No AI agent found"), "{err}");
    assert_untouched(&w);
}

#[test]
fn bad_switch_values_fail_before_the_claim() {
    let w = World::new().with_env("STUDYLOOP_GROK_TRUST_SESSION_DIR", "yes");
    let err = one_line_error(&w.run(&["study", "x", "--agent", "grok"]), 1);
    assert!(
        err.contains("STUDYLOOP_GROK_TRUST_SESSION_DIR=`yes`"),
        "{err}"
    );
    assert_untouched(&w);
    let w = World::new().with_env(
        "STUDYLOOP_KIRO_AGENT_TEMPLATE",
        "/nonexistent/template.json",
    );
    let err = one_line_error(&w.run(&["study", "x", "--agent", "kiro"]), 1);
    assert!(
        err.contains("/nonexistent/template.json") && err.contains("STUDYLOOP_KIRO_AGENT_TEMPLATE"),
        "{err}"
    );
    assert_untouched(&w);
}

#[test]
fn a_failure_after_the_claim_rolls_everything_back() {
    let w = World::new();
    // tmux that works for everything but creating the session.
    w.fake_bin("tmux", "case \"$1\" in new-session) echo 'boom: no space for a pane' >&2; exit 1;; esac\nexec /usr/bin/tmux \"$@\"");
    let err = one_line_error(&w.run(&["study", "Doomed", "--agent", "codex"]), 1);
    assert!(err.contains("tmux new-session failed: boom"), "{err}");
    assert!(!w.state_path().exists(), "previous (absent) state restored");
    assert!(
        !w.config_dir().join("session-topics.md").exists()
            && !w.config_dir().join("session-parking.md").exists()
    );
    let dirs = std::fs::read_dir(w.config_dir().join("sessions"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(dirs, 0, "the fresh session dir was removed");
    let (outcome, notes): (String, String) = w
        .db()
        .query_row("SELECT outcome, notes FROM study_sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(outcome, "aborted");
    assert!(
        notes.starts_with("Aborted: tmux new-session failed"),
        "{notes}"
    );
    assert!(w.sessions().is_empty());
}

#[test]
fn feeds_need_an_active_session_and_a_known_status() {
    let w = World::new();
    let err = one_line_error(&w.run(&["topic", "x"]), 1);
    assert!(err.contains("No active session"), "{err}");
    let err = one_line_error(&w.run(&["topic", "x", "-s", "done"]), 1);
    assert!(
        err.contains("`done`") && err.contains("learning, struggling, insight, win, parked"),
        "{err}"
    );
    one_line_error(&w.run(&["park", "why?"]), 1);
}

#[test]
fn search_and_status_before_any_session() {
    let w = World::new();
    let st = common::json_result(&w.run(&["status", "--json"]).ok(), "status");
    assert_eq!(st["active"], false);
    assert!(
        st["state"].is_null() && st["elapsed_seconds"].is_null(),
        "unknown is null: {st}"
    );
    assert_eq!(w.run(&["status"]).ok().stdout, "No active session.\n");
    let found = common::json_result(&w.run(&["search", "anything", "--json"]).ok(), "search");
    assert_eq!(found["results"], serde_json::json!([]), "{found}");
    assert_eq!(found["count"], 0, "{found}");
    one_line_error(&w.run(&["search", "  "]), 1);
    assert!(
        !w.config_dir().join("sessions.db").exists(),
        "search does not create the DB"
    );
}
