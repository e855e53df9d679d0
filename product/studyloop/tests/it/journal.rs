//! Start and end are journaled (issue 10, item 7): `studyloop` SIGKILLs itself
//! at every step named in [`studyloop::session::KILL_POINTS`] (the
//! `STUDYLOOP_TEST_KILL_AT` hatch), and a later command must leave a
//! consistent world: never two live sessions, no DB row `active` without its
//! session, no harness running while the state says ended, and no lost
//! progress or notes.

use crate::common;

use common::World;
use studyloop::session::KILL_POINTS;

fn steps(op: &str) -> Vec<&'static str> {
    KILL_POINTS
        .iter()
        .copied()
        .filter(|s| s.starts_with(op))
        .collect()
}

fn active_rows(w: &World) -> Vec<String> {
    if !w.config_dir().join("sessions.db").exists() {
        return Vec::new();
    }
    w.db()
        .prepare("SELECT id FROM study_sessions WHERE outcome = 'active'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn marked(id: &str) -> Vec<i32> {
    studyloop::procs::with_env(studyloop::env::STUDYLOOP_SESSION_MARK, id)
}

fn journal(w: &World) -> std::path::PathBuf {
    w.config_dir().join("session-journal.json")
}

/// The world after a repair: the state, tmux and the DB agree.
#[track_caller]
fn consistent(w: &World, step: &str) {
    assert!(!journal(w).exists(), "{step}: the journal was not repaired");
    let state = w.state();
    let active = state
        .as_ref()
        .is_some_and(|s| s["mode"] != "ended" && s["study_session_id"].is_string());
    let sessions = w.sessions();
    if active {
        let s = state.unwrap();
        assert_eq!(
            sessions,
            vec![s["mux_session"].as_str().unwrap_or("?").to_owned()],
            "{step}: one live session, the recorded one"
        );
        assert_eq!(
            active_rows(w),
            vec![s["study_session_id"].as_str().unwrap().to_owned()],
            "{step}: only the live session's row is active"
        );
    } else {
        assert!(sessions.is_empty(), "{step}: sessions left: {sessions:?}");
        assert!(active_rows(w).is_empty(), "{step}: rows left active");
    }
}

#[test]
fn a_start_killed_at_any_step_is_repaired_by_the_next_command() {
    let w = World::new();
    let start = steps("start:");
    assert!(start.len() >= 6, "{start:?}");
    for (i, step) in start.iter().enumerate() {
        let topic = format!("Kill {i}");
        w.killed_at(step, &["study", &topic, "--agent", "pi"]);
        assert!(w.sessions().len() <= 1, "{step}: two sessions");
        // Alternate the repairing door: a read-only command, or a new start.
        if i % 2 == 0 {
            w.run(&["status"]).ok();
            consistent(&w, step);
            if w.state().is_some_and(|s| s["mode"] != "ended") {
                w.run(&["study", "--end"]).ok();
            }
        } else {
            let out = w.run(&["study", "After", "--agent", "pi"]);
            consistent(&w, step);
            // A start finished by repair blocks the new one; else the new one runs.
            assert!(
                out.code == 0 || out.stderr.contains("already active"),
                "{step}: {out:?}"
            );
            w.run(&["study", "--end"]).ok();
        }
        consistent(&w, step);
    }
}

#[test]
fn an_end_killed_at_any_step_loses_nothing_and_is_finished_later() {
    let w = World::new();
    let end = steps("end:");
    assert!(end.len() >= 6, "{end:?}");
    for (i, step) in end.iter().enumerate() {
        let topic = format!("End {i}");
        w.run(&["study", &topic, "--agent", "pi"]).ok();
        let id = w.field("study_session_id");
        let concept = format!("concept{i}");
        w.run(&["topic", &concept, "-s", "win", "-n", "kept"]).ok();
        w.run(&["park", &format!("question{i}")]).ok();
        w.killed_at(step, &["study", "--end"]);
        if w.state().is_some_and(|s| s["mode"] == "ended") {
            assert!(w.sessions().is_empty(), "{step}: ended, harness running");
            assert!(marked(&id).is_empty(), "{step}: ended, children running");
        }
        // Alternate the repairing door: --end again, status, or a new start.
        match i % 3 {
            0 => drop(w.run(&["study", "--end"]).ok()),
            1 => drop(w.run(&["status"]).ok()),
            _ => {
                w.run(&["study", "Next", "--agent", "pi"]).ok();
                w.run(&["study", "--end"]).ok();
            }
        }
        consistent(&w, step);
        assert!(marked(&id).is_empty(), "{step}: children survived");
        let db = w.db();
        let (outcome, notes): (String, String) = db
            .query_row(
                "SELECT outcome, notes FROM study_sessions WHERE id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(outcome, "ended", "{step}");
        assert!(
            notes.contains(&format!("{concept}: kept")) && notes.contains(&format!("question{i}")),
            "{step}: notes lost: {notes}"
        );
        let progress: i64 = db
            .query_row(
                "SELECT count(*) FROM study_progress WHERE concept = ?1 AND study_session_id = ?2",
                [&concept, &id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(progress, 1, "{step}: progress lost");
        let logged: i64 = db
            .query_row(
                "SELECT count(*) FROM messages WHERE session_id = ?1",
                [&id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(logged, 2, "{step}: search notes lost or doubled");
    }
}

#[test]
fn an_unknown_kill_point_is_refused() {
    let w = World::new();
    let out = w
        .cmd(&["study", "X", "--agent", "pi"])
        .env("STUDYLOOP_TEST_KILL_AT", "start:nowhere")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("STUDYLOOP_TEST_KILL_AT=`start:nowhere`") && err.contains("start:claim"),
        "{err}"
    );
    assert!(w.sessions().is_empty() && w.state().is_none());
}

#[test]
fn a_repair_killed_half_way_is_finished_by_the_next_command() {
    let w = World::new();
    // The end dies right after its intent; each repairing `--end` then dies at
    // a later step; a plain `status` must still finish the job.
    for (i, step) in steps("end:").into_iter().skip(1).enumerate() {
        w.run(&["study", &format!("Twice {i}"), "--agent", "pi"])
            .ok();
        let id = w.field("study_session_id");
        w.run(&["topic", &format!("c{i}"), "-s", "struggling"]).ok();
        w.killed_at("end:intent", &["study", "--end"]);
        w.killed_at(step, &["study", "--end"]);
        w.run(&["status"]).ok();
        consistent(&w, step);
        assert!(marked(&id).is_empty(), "{step}: children survived");
        let struggles: i64 = w
            .db()
            .query_row(
                "SELECT struggle_count FROM study_sessions WHERE id = ?1",
                [&id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(struggles, 1, "{step}");
    }
}

#[test]
fn a_resume_killed_half_way_keeps_the_session_dir_and_can_be_retried() {
    let w = World::new();
    w.run(&["study", "Resumable", "--agent", "pi"]).ok();
    let dir = w.field("session_dir");
    let name = w.field("mux_session");
    w.run(&["topic", "kept", "-s", "win"]).ok();
    w.run(&["study", "--end"]).ok();
    for step in ["start:dir", "start:tmux", "start:live"] {
        w.killed_at(step, &["study", "--resume"]);
        let out = w.run(&["study", "--resume"]).ok();
        assert!(out.stdout.contains("Resumed"), "{step}: {out:?}");
        assert!(
            std::path::Path::new(&dir).is_dir(),
            "{step}: the session dir was removed"
        );
        assert_eq!(w.sessions(), vec![name.clone()], "{step}");
        consistent(&w, step);
        w.run(&["study", "--end"]).ok();
        consistent(&w, step);
    }
}
