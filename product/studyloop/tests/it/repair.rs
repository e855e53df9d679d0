//! `doctor --fix` loses nothing (issue 25, items 7 and 8): its rebuild of a
//! damaged state is journaled, so a SIGKILL at each of its steps
//! (`fix:intent`, `fix:aside`, `fix:state`) still leaves the session found,
//! recorded and endable with its notes; a state that is simply absent while
//! the session runs is rebuilt by `doctor --fix` and refused by `study`; and
//! a rollback kills only the tmux session its start marked.

use crate::common;

use common::World;
use studyloop::session::KILL_POINTS;

/// The session `id` ended with its progress and notes recorded.
#[track_caller]
fn ended_with_notes(w: &World, id: &str, concept: &str, question: &str, what: &str) {
    let db = w.db();
    let (outcome, notes): (String, String) = db
        .query_row(
            "SELECT outcome, notes FROM study_sessions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(outcome, "ended", "{what}");
    assert!(
        notes.contains(concept) && notes.contains(question),
        "{what}: notes lost: {notes}"
    );
    let progress: i64 = db
        .query_row(
            "SELECT count(*) FROM study_progress WHERE concept = ?1 AND study_session_id = ?2",
            [concept, id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(progress, 1, "{what}: progress lost");
}

#[test]
fn a_fix_killed_at_any_step_loses_no_session() {
    let w = World::new();
    let fix: Vec<&str> = KILL_POINTS
        .iter()
        .copied()
        .filter(|s| s.starts_with("fix:"))
        .collect();
    assert_eq!(fix, ["fix:intent", "fix:aside", "fix:state"]);
    let mut lost = 0;
    for (i, step) in fix.iter().enumerate() {
        w.run(&["study", &format!("Fix {i}"), "--agent", "pi"]).ok();
        let id = w.field("study_session_id");
        let name = w.field("mux_session");
        let (concept, question) = (format!("concept{i}"), format!("question{i}"));
        w.run(&["topic", &concept, "-s", "win"]).ok();
        w.run(&["park", &question]).ok();
        std::fs::write(w.state_path(), "{not json").unwrap();
        w.killed_at(step, &["doctor", "--fix"]);
        // The second fix must still find the session (never "nothing to fix"
        // over an absent state while its harness runs).
        let out = w.run(&["doctor", "--fix"]).ok();
        let state = w.state();
        if state.as_ref().and_then(|s| s["study_session_id"].as_str()) != Some(id.as_str()) {
            lost += 1;
            eprintln!("{step}: lost; second fix said {}", out.stdout);
        }
        // A second session must not start beside the running one.
        let second = w.run(&["study", "Other", "--agent", "pi"]);
        assert_eq!(second.code, 1, "{step}: {second:?}");
        assert_eq!(w.sessions(), vec![name.clone()], "{step}: two sessions");
        w.run(&["study", "--end"]).ok();
        assert!(w.sessions().is_empty(), "{step}: the harness still runs");
        ended_with_notes(&w, &id, &concept, &question, step);
        assert!(
            !w.config_dir().join("session-journal.json").exists(),
            "{step}: journal left"
        );
    }
    assert_eq!(lost, 0, "sessions lost by a killed fix");
}

#[test]
fn an_absent_state_beside_a_live_session_is_rebuilt_and_blocks_a_start() {
    let w = World::new();
    w.run(&["study", "Tries", "--agent", "pi"]).ok();
    let id = w.field("study_session_id");
    let name = w.field("mux_session");
    w.run(&["topic", "prefix", "-s", "win"]).ok();
    w.run(&["park", "why tries"]).ok();
    std::fs::remove_file(w.state_path()).unwrap();
    let out = w.run(&["study", "Other", "--agent", "pi"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(&id) && out.stderr.contains("doctor --fix"),
        "{}",
        out.stderr
    );
    assert_eq!(w.sessions(), vec![name.clone()]);
    let out = w.run(&["doctor", "--fix"]).ok();
    assert!(out.stdout.contains(&id), "{out:?}");
    assert_eq!(w.field("mux_session"), name);
    w.run(&["study", "--end"]).ok();
    assert!(w.sessions().is_empty());
    ended_with_notes(&w, &id, "prefix", "why tries", "absent state");
    // Nothing runs now: an absent state is healthy again.
    let out = w.run(&["doctor", "--fix"]).ok();
    assert!(out.stdout.contains("nothing to fix"), "{out:?}");
}

/// A start killed before `live` is rolled back by the next command; the
/// rollback kills the tmux session its journal names only when that session
/// carries the start's own mark: a session of the same name made by someone
/// else (the record forged or the name reused) survives.
#[test]
fn a_rollback_kills_only_the_session_its_start_marked() {
    let w = World::new();
    w.killed_at("start:tmux", &["study", "Marked", "--agent", "pi"]);
    let journal = w.config_dir().join("session-journal.json");
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&journal).unwrap()).unwrap();
    let name = record["tmux_session"].as_str().unwrap().to_owned();
    let id = record["study_session_id"].as_str().unwrap().to_owned();
    let mark = w.tmux(&[
        "show-options",
        "-qv",
        "-t",
        &format!("={name}:"),
        "@studyloop_id",
    ]);
    assert_eq!(mark.stdout.trim(), id, "the start marks its session");
    // Swap the marked session for the user's own one of the same name. The
    // user's session exists before the marked one is killed: killing a
    // server's last session makes it exit, and a `new-session` racing that
    // exit fails with "server exited unexpectedly" (seen in CI).
    let spare = format!("{name}-user");
    let made = w.tmux(&["new-session", "-d", "-s", &spare, "sleep 600"]);
    assert_eq!(made.code, 0, "{made:?}");
    w.tmux(&["kill-session", "-t", &format!("={name}")]);
    let renamed = w.tmux(&["rename-session", "-t", &format!("={spare}"), &name]);
    assert_eq!(renamed.code, 0, "{renamed:?}");
    w.run(&["status"]).ok();
    assert!(!journal.exists(), "the start was rolled back");
    assert_eq!(
        w.sessions(),
        vec![name.clone()],
        "the unmarked session was killed"
    );
    w.tmux(&["kill-session", "-t", &format!("={name}")]);
    // And the start's own marked session is killed by its rollback.
    w.killed_at("start:tmux", &["study", "Marked", "--agent", "pi"]);
    assert_eq!(w.sessions().len(), 1);
    w.run(&["status"]).ok();
    assert!(
        w.sessions().is_empty(),
        "the marked session survived its rollback"
    );
}
