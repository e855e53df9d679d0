//! The resume paths beyond the happy one: reattach to a running agent, a
//! crashed (never ended) session, a lost session dir, and the pane hook of an
//! older session leaving a newer one alone.

use crate::common;

use common::{World, wait_until};

#[test]
fn resume_while_the_agent_runs_reattaches_instead_of_rebuilding() {
    let w = World::new();
    w.run(&["study", "Running", "--agent", "pi"]).ok();
    wait_until(10, "the agent to run", || w.main_pane_has_child());
    let id = w.field("study_session_id");
    let name = w.field("mux_session");
    let out = w.run(&["study", "--resume"]).ok();
    assert_eq!(
        out.stdout,
        format!("Session {name} is still running; attach with: tmux attach -t {name}\n")
    );
    assert_eq!(w.field("study_session_id"), id, "nothing rebuilt");
}

#[test]
fn resume_after_a_crash_records_the_lost_session_first() {
    let w = World::new();
    w.run(&["study", "Crashy", "--agent", "codex"]).ok();
    let old = w.field("study_session_id");
    let name = w.field("mux_session");
    w.run(&["topic", "borrowing", "-s", "win"]).ok();
    // The machine "crashes": the tmux server dies without running the end hook.
    w.tmux(&["kill-server"]);
    wait_until(5, "the server to go", || !w.server_running());
    assert_eq!(w.field("mode"), "study", "still marked active");

    w.run(&["study", "--resume"]).ok();
    assert_ne!(w.field("study_session_id"), old);
    assert_eq!(w.field("mux_session"), name);
    let (outcome, wins): (String, i64) = w
        .db()
        .query_row(
            "SELECT outcome, win_count FROM study_sessions WHERE id = ?1",
            [&old],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (outcome.as_str(), wins),
        ("ended", 1),
        "the crashed session was closed with its feed"
    );
    w.run(&["study", "--end"]).ok();
}

#[test]
fn resume_of_a_session_whose_dir_is_gone() {
    let w = World::new();
    w.run(&["study", "Vanishing", "--agent", "codex"]).ok();
    let dir = w.field("session_dir");
    let name = w.field("mux_session");
    w.run(&["study", "--end"]).ok();
    std::fs::remove_dir_all(&dir).unwrap();
    let out = w.run(&["study", "--resume"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!("session {name} is gone")) && out.stderr.contains(&dir),
        "{}",
        out.stderr
    );
    assert_eq!(w.field("mode"), "ended", "state untouched");
}

#[test]
fn an_old_panes_end_hook_leaves_a_newer_session_alone() {
    let w = World::new();
    w.run(&["study", "Newer", "--agent", "codex"]).ok();
    w.run(&[
        "end-on-exit",
        "--study-id",
        "00000000-0000-4000-8000-000000000000",
    ])
    .ok();
    assert_eq!(w.field("mode"), "study");
    assert_eq!(w.sessions().len(), 1);
    let id = w.field("study_session_id");
    w.run(&["end-on-exit", "--study-id", &id]).ok();
    assert_eq!(w.field("mode"), "ended");
    assert!(w.sessions().is_empty());
}
