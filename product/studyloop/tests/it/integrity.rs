//! Session-end integrity against the real binary and a private tmux server
//! (issue 10, items 8–13): `--end` touches only the recorded tmux session,
//! deletes only inside the session dir, signals only a process whose recorded
//! identity matches, stops children that left the process group, refuses
//! without tmux, recovers a corrupt state with `doctor --fix`, and keeps
//! terminal control sequences out of the feeds and every render.

use crate::common;

use std::path::PathBuf;

use common::{World, wait_until};

fn set_state_field(w: &World, key: &str, value: serde_json::Value) {
    let mut s = w.state().unwrap();
    s[key] = value;
    std::fs::write(w.state_path(), s.to_string()).unwrap();
}

#[test]
fn end_leaves_an_unrelated_study_named_tmux_session_alone() {
    let w = World::new();
    // The learner's own session whose name merely starts with `study-`.
    w.tmux(&["new-session", "-d", "-s", "study-thesis-notes", "sleep 600"])
        .ok();
    w.run(&["study", "Graphs", "--agent", "pi"]).ok();
    let own = w.field("mux_session");
    w.run(&["study", "--end"]).ok();
    assert_eq!(
        w.sessions(),
        vec!["study-thesis-notes".to_owned()],
        "only {own} may be killed"
    );
}

#[test]
fn end_leaves_a_same_named_session_without_the_mark_alone() {
    let w = World::new();
    // The recorded name belongs to a session of the user's by the time of the
    // end: one without a mark, one marked with another study's id.
    for mark in [None, Some("someone-else")] {
        w.run(&["study", "Marks", "--agent", "pi"]).ok();
        let name = w.field("mux_session");
        // The user's session exists before ours is killed: a server whose
        // last session goes exits, and a `new-session` racing that exit fails.
        let spare = format!("{name}-user");
        let made = w.tmux(&["new-session", "-d", "-s", &spare, "sleep 600"]);
        assert_eq!(made.code, 0, "{made:?}");
        if let Some(m) = mark {
            w.tmux(&[
                "set-option",
                "-t",
                &format!("={spare}:"),
                "@studyloop_id",
                m,
            ]);
        }
        w.tmux(&["kill-session", "-t", &format!("={name}")]);
        let renamed = w.tmux(&["rename-session", "-t", &format!("={spare}"), &name]);
        assert_eq!(renamed.code, 0, "{renamed:?}");
        let out = w.run(&["study", "--end"]);
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(
            w.sessions(),
            vec![name.clone()],
            "the user's session (mark {mark:?}) was killed by the end"
        );
        assert!(
            format!("{}{}", out.stdout, out.stderr).contains("does not carry this study's mark"),
            "no warning: {out:?}"
        );
        w.tmux(&["kill-session", "-t", &format!("={name}")]);
    }
}

#[test]
fn end_deletes_only_inside_the_session_dir_and_signals_only_a_recorded_process() {
    let w = World::new();
    w.run(&["study", "Trees", "--agent", "pi"]).ok();
    // A file of the learner's, named by a tampered persona_file.
    let victim = w.home.path().join("thesis.md");
    std::fs::write(&victim, "years of work").unwrap();
    set_state_field(&w, "persona_file", victim.display().to_string().into());
    // An unrelated process whose command line happens to contain "studyloop".
    let mut bystander = std::process::Command::new("sleep");
    std::os::unix::process::CommandExt::arg0(&mut bystander, "studyloop-bystander");
    let mut bystander = bystander
        .arg("600")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = i32::try_from(bystander.id()).unwrap();
    set_state_field(&w, "web_pid", pid.into());
    w.run(&["study", "--end"]).ok();
    assert_eq!(w.field("mode"), "ended");
    assert!(
        victim.exists(),
        "a file outside the session dir was deleted"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let survived = bystander.try_wait().unwrap().is_none();
    let _ = bystander.kill();
    let _ = bystander.wait();
    assert!(survived, "an unrecorded process {pid} was signalled");
}

#[test]
fn end_deletes_no_persona_through_a_symlinked_session_dir_file() {
    let w = World::new();
    w.run(&["study", "Links", "--agent", "pi"]).ok();
    let dir = PathBuf::from(w.field("session_dir"));
    let victim = w.home.path().join("keep.md");
    std::fs::write(&victim, "keep").unwrap();
    // A name inside the session dir that resolves outside it.
    let link = dir.join("escape");
    std::os::unix::fs::symlink(w.home.path(), &link).unwrap();
    set_state_field(
        &w,
        "persona_file",
        link.join("keep.md").display().to_string().into(),
    );
    w.run(&["study", "--end"]).ok();
    assert!(victim.exists(), "deleted through a symlink");
}

#[test]
fn children_that_left_the_process_group_are_stopped_at_end() {
    use crate::contain::{assert_none_left, escapee, skip_nobody, sleeping, unique_sleep};
    skip_nobody("the tmux end");
    // Found by their unique arguments: a pid the agent records is one of its
    // PID namespace's, not the test's.
    let (setsid, nohup, cleared) = (unique_sleep(65), unique_sleep(66), unique_sleep(67));
    let w = World::new().with_env(
        "STUDYLOOP_TEST_AGENT_CMD",
        &format!(
            "setsid sleep {setsid} & nohup sleep {nohup} >/dev/null 2>&1 & {}; exec cat",
            escapee(&cleared)
        ),
    );
    w.run(&["study", "Daemons", "--agent", "pi"]).ok();
    wait_until(10, "the three children running", || {
        [&setsid, &nohup, &cleared]
            .iter()
            .all(|a| !sleeping(a).is_empty())
    });
    w.run(&["study", "--end"]).ok();
    for (arg, how) in [
        (&setsid, "setsid"),
        (&nohup, "nohup"),
        (&cleared, "env -i + double fork + setsid"),
    ] {
        assert_none_left(arg, how);
    }
}

#[test]
fn end_without_tmux_refuses_and_changes_nothing() {
    let mut w = World::new();
    w.run(&["study", "Sets", "--agent", "pi"]).ok();
    let before = w.state().unwrap();
    let name = w.field("mux_session");
    // Only the empty fake-bin dir: no tmux anywhere on PATH.
    let bin = w.bin.display().to_string();
    w.set_env("PATH", &bin);
    let out = w.run(&["study", "--end"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("tmux not found on PATH") && out.stderr.contains("study --end"),
        "{}",
        out.stderr
    );
    w.set_env("PATH", &format!("{bin}:/usr/bin:/bin"));
    assert_eq!(w.state().unwrap(), before, "the state changed");
    assert_eq!(w.sessions(), vec![name], "the harness must keep running");
    w.run(&["study", "--end"]).ok();
    assert!(w.sessions().is_empty());
}

#[test]
fn a_corrupt_state_names_doctor_fix_which_restores_the_live_session() {
    let w = World::new();
    w.run(&["study", "Heaps", "--agent", "pi"]).ok();
    w.run(&["topic", "sift down", "-s", "win", "-n", "log n"])
        .ok();
    let id = w.field("study_session_id");
    let name = w.field("mux_session");
    std::fs::write(w.state_path(), "{not json").unwrap();
    let out = w.run(&["status"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("studyloop doctor --fix")
            && !out.stderr.contains("delete")
            && !out.stderr.contains("move it aside"),
        "{}",
        out.stderr
    );
    // Starting again must not create a second session while the state is corrupt.
    let out = w.run(&["study", "Other", "--agent", "pi"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(w.sessions(), vec![name.clone()]);

    let out = w.run(&["doctor", "--fix"]);
    assert!(out.stdout.contains(&id), "{out:?}");
    assert_eq!(w.field("study_session_id"), id);
    assert_eq!(w.field("mux_session"), name);
    assert_eq!(w.state().unwrap()["mode"].as_str(), Some("study"));
    let kept: Vec<_> = std::fs::read_dir(w.config_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("corrupt"))
        .collect();
    assert_eq!(kept.len(), 1, "the damaged file is kept aside");
    let out = w.run(&["study", "--end"]).ok();
    assert!(out.stdout.contains("1 wins"), "{}", out.stdout);
    assert!(w.sessions().is_empty());
}

const HOSTILE: &[&str] = &[
    "\x1b]0;pwned-title\x07",
    "\x1b]52;c;ZXZpbA==\x07",
    "\x1b[2J",
    "\u{9b}2J",
];

fn assert_clean(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| {
            (c.is_control() && *c != '\n' && *c != '\t') || ('\u{80}'..='\u{9f}').contains(c)
        })
        .collect();
    assert!(bad.is_empty(), "{what} carries controls {bad:?}: {text:?}");
}

#[test]
fn control_sequences_never_reach_the_feeds_or_the_terminal() {
    let w = World::new();
    w.run(&["study", "Escapes", "--agent", "pi"]).ok();
    for (i, h) in HOSTILE.iter().enumerate() {
        w.run(&[
            "topic",
            &format!("t{i}{h}end"),
            "-s",
            "win",
            "-n",
            &format!("n{h}\tx"),
        ])
        .ok();
        w.run(&["park", &format!("q{i}{h}")]).ok();
    }
    let topics = std::fs::read_to_string(w.config_dir().join("session-topics.md")).unwrap();
    assert_clean("the topics feed", &topics);
    assert!(topics.contains("\tx"), "tab is kept: {topics:?}");
    assert_clean(
        "the parking feed",
        &std::fs::read_to_string(w.config_dir().join("session-parking.md")).unwrap(),
    );
    // Text written by another writer straight into the files still renders clean.
    let mut feed = std::fs::OpenOptions::new()
        .append(true)
        .open(w.config_dir().join("session-topics.md"))
        .unwrap();
    use std::io::Write as _;
    for h in HOSTILE {
        writeln!(feed, "- [00:00] raw{h} | status:learning | n{h}").unwrap();
    }
    set_state_field(&w, "topic", format!("topic{}", HOSTILE.concat()).into());
    set_state_field(&w, "agent", format!("pi{}", HOSTILE[0]).into());
    assert_clean("status", &w.run(&["status"]).ok().stdout);
    assert_clean("status --json", &w.run(&["status", "--json"]).ok().stdout);
    assert_clean("the sidebar", &w.run(&["sidebar", "--once"]).ok().stdout);
    let end = w.run(&["study", "--end"]).ok();
    assert_clean("study --end", &end.stdout);
    assert_clean("study --end (stderr)", &end.stderr);
    assert_clean("status after end", &w.run(&["status"]).ok().stdout);
    assert_clean("search", &w.run(&["search", "raw"]).ok().stdout);
}

#[test]
fn doctor_reports_a_relative_session_db_as_a_config_error() {
    let w = World::new();
    let cfg = w.config_dir().join("config.yaml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("state_dir: data\nsession_db: sessions.db\n");
    std::fs::write(&cfg, text).unwrap();
    let out = w.run(&["doctor", "--json"]);
    let report = common::json_result(&out, "doctor");
    let config = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "config")
        .unwrap()
        .clone();
    assert_eq!(config["status"], "fail", "{config}");
    let detail = config["detail"].as_str().unwrap();
    assert!(
        detail.contains("config.yaml") && detail.contains("`data`"),
        "{detail}"
    );
    assert_ne!(out.code, 0);
    let start = w.run(&["study", "X", "--agent", "pi"]);
    assert_eq!(start.code, 1, "{start:?}");
    assert!(
        start.stderr.contains("not an absolute path"),
        "{}",
        start.stderr
    );
}

#[test]
fn a_reused_owner_pid_does_not_block_a_start() {
    let w = World::new();
    // The claim's owner died and its pid now names an unrelated process.
    let mut unrelated = std::process::Command::new("sleep")
        .arg("600")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stale = serde_json::json!({
        "study_session_id": "pending-abc123", "mode": "starting", "topic": "old",
        "pid": unrelated.id(), "pid_start": 1
    });
    std::fs::create_dir_all(w.config_dir()).unwrap();
    std::fs::write(w.state_path(), stale.to_string()).unwrap();
    let out = w.run(&["study", "New", "--agent", "pi"]);
    let _ = unrelated.kill();
    let _ = unrelated.wait();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("reclaiming stale session pending-abc123"),
        "{}",
        out.stderr
    );
    w.run(&["study", "--end"]).ok();
}

#[test]
fn a_fifo_planted_as_the_journal_hangs_nothing_and_doctor_fix_sets_it_aside() {
    let w = World::new();
    std::fs::create_dir_all(w.config_dir()).unwrap();
    let journal = w.config_dir().join("session-journal.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&journal)
        .status()
        .unwrap();
    assert!(made.success());
    let status = w
        .program("timeout", &["10", common::exe(), "status"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(0), "{status:?}");
    assert!(String::from_utf8_lossy(&status.stderr).contains("doctor --fix"));
    let start = w
        .program(
            "timeout",
            &["10", common::exe(), "study", "X", "--agent", "pi"],
        )
        .output()
        .unwrap();
    assert_eq!(start.status.code(), Some(1), "{start:?}");
    assert!(w.sessions().is_empty());
    let fix = w.run(&["doctor", "--fix"]).ok();
    assert!(
        fix.stdout.contains("kept the damaged journal"),
        "{}",
        fix.stdout
    );
    assert!(!journal.exists());
    w.run(&["study", "X", "--agent", "pi"]).ok();
    w.run(&["study", "--end"]).ok();
}
