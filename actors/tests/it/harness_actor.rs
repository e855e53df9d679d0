//! The harness backend against a scripted shell "harness" in a real tmux on a
//! private short socket under /tmp: turn-taking, echo and blank-line handling,
//! literal typing, scrolling past the screen, caps, timeouts, cancellation,
//! and cleanup of the private tmux server.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use studyloop_actors::fake::{FakeMentor, FakeStep};
use studyloop_actors::harness_actor::{HarnessActor, HarnessSettings, find_on_path};
use studyloop_actors::{
    Actor, ActorKind, ActorOptions, Budget, CancelToken, Outcome, Transcript, Usage,
};

fn tmux() -> PathBuf {
    find_on_path("tmux", std::env::var("PATH").ok().as_deref())
        .expect("tmux is installed on the test machines")
}

/// A short private directory under /tmp (the socket path must stay small).
fn socket_root() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sl-act-")
        .tempdir_in("/tmp")
        .unwrap()
}

fn child_env(home: &Path) -> Vec<(OsString, OsString)> {
    vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("HOME".into(), home.into()),
        ("LANG".into(), "C.UTF-8".into()),
    ]
}

fn actor(root: &Path, script: &str, reply_timeout: Duration) -> HarnessActor {
    std::fs::create_dir_all(root).unwrap();
    let path = root.join("h.sh");
    std::fs::write(&path, script).unwrap();
    HarnessActor::new(HarnessSettings {
        command: format!("sh {}", path.display()),
        socket_dir: root.join("t"),
        tmux: tmux(),
        env: child_env(root),
        reply_timeout,
    })
    .unwrap()
}

fn run(actor: &mut HarnessActor, mentor: &mut FakeMentor, max_turns: u32) -> Transcript {
    actor.converse(
        mentor,
        &mut Budget::new(max_turns, None).unwrap(),
        &CancelToken::new(),
    )
}

fn server_alive(socket: &Path) -> bool {
    Command::new(tmux())
        .arg("-S")
        .arg(socket)
        .arg("has-session")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn converses_line_by_line_until_the_sentinel() {
    let root = socket_root();
    let script = r#"
echo "first question"
IFS= read -r a; echo "you said: $a"
IFS= read -r b; IFS= read -r blank; IFS= read -r c; echo "two paragraphs: $b / $c"
IFS= read -r d; echo "literally: $d"
IFS= read -r e; echo STUDYLOOP_ACTOR_DONE
"#;
    let mut actor = actor(root.path(), script, Duration::from_secs(10));
    let mut mentor = FakeMentor::with_steps(
        [
            "ends with a semicolon;",
            "para one\n\npara two",
            "C-c",
            "bye",
        ]
        .map(|s| FakeStep::Reply(s.into())),
    );
    let t = run(&mut actor, &mut mentor, 10);
    assert_eq!(t.outcome, Outcome::Completed, "{t:?}");
    let learner: Vec<&str> = t.turns.iter().map(|turn| turn.learner.as_str()).collect();
    assert_eq!(
        learner,
        [
            "first question",
            "you said: ends with a semicolon;",
            "two paragraphs: para one / para two",
            "literally: C-c"
        ]
    );
    assert!(t.turns.iter().all(|turn| turn.usage == Usage::UNKNOWN));
    let socket = actor.socket().to_owned();
    assert!(server_alive(&socket));
    drop(actor);
    assert!(
        !server_alive(&socket),
        "the private tmux server is gone after drop"
    );
}

#[test]
fn keeps_its_place_after_the_pane_scrolls() {
    let root = socket_root();
    // 60 turns of two lines each (question + echo) scroll a 50-row pane.
    let script = r#"
i=0
while [ $i -lt 60 ]; do echo "question $i"; IFS= read -r r; i=$((i+1)); done
echo STUDYLOOP_ACTOR_DONE
"#;
    let mut actor = actor(root.path(), script, Duration::from_secs(10));
    let t = run(&mut actor, &mut FakeMentor::echo(), 100);
    assert_eq!(
        (t.outcome, t.turns.len()),
        (Outcome::Completed, 60),
        "{t:?}"
    );
    for (i, turn) in t.turns.iter().enumerate() {
        assert_eq!(turn.learner, format!("question {i}"));
    }
}

#[test]
fn the_turn_cap_stops_it_and_unknown_usage_never_counts() {
    let root = socket_root();
    let script = "while true; do echo more; IFS= read -r r; done\n";
    let mut actor = actor(root.path(), script, Duration::from_secs(10));
    let mut budget = Budget::new(3, Some(1)).unwrap();
    let t = actor.converse(&mut FakeMentor::echo(), &mut budget, &CancelToken::new());
    assert_eq!(
        (t.outcome, t.turns.len()),
        (Outcome::BudgetExhausted, 3),
        "{t:?}"
    );
    assert_eq!(budget.output_tokens_spent(), 0);
}

#[test]
fn silence_exit_and_cancellation_end_the_conversation() {
    let root = socket_root();
    let mut silent = actor(
        &root.path().join("a"),
        "echo hello\nsleep 30\n",
        Duration::from_millis(700),
    );
    let t = run(&mut silent, &mut FakeMentor::echo(), 5);
    assert_eq!((t.outcome, t.turns.len()), (Outcome::Errored, 1), "{t:?}");
    assert!(
        t.error
            .unwrap_or_default()
            .contains("timed out after 700ms (reply_timeout)")
    );

    let mut quitter = actor(
        &root.path().join("b"),
        "echo bye\nexit 0\n",
        Duration::from_secs(5),
    );
    let t = run(&mut quitter, &mut FakeMentor::echo(), 5);
    assert_eq!(t.outcome, Outcome::Errored, "{t:?}");
    assert!(
        t.error
            .unwrap_or_default()
            .contains("exited without printing STUDYLOOP_ACTOR_DONE")
    );

    let mut waiting = actor(
        &root.path().join("c"),
        "sleep 30\n",
        Duration::from_secs(20),
    );
    let cancel = CancelToken::new();
    let remote = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        remote.cancel();
    });
    let started = std::time::Instant::now();
    let t = waiting.converse(
        &mut FakeMentor::echo(),
        &mut Budget::new(5, None).unwrap(),
        &cancel,
    );
    canceller.join().unwrap();
    assert_eq!((t.outcome, t.turns.len()), (Outcome::Cancelled, 0));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel is observed while waiting"
    );
}

#[test]
fn the_factory_checks_the_socket_path_before_touching_anything() {
    let root = socket_root();
    let long = root.path().join("x".repeat(120));
    let env: &[(&str, &str)] = &[
        (
            "STUDYLOOP_ACC_HARNESS_ACTOR_CMD",
            "echo STUDYLOOP_ACTOR_DONE",
        ),
        ("PATH", "/usr/bin:/bin"),
    ];
    let options = ActorOptions {
        harness_socket_dir: Some(long.clone()),
        ..ActorOptions::default()
    };
    let err = studyloop_actors::build(ActorKind::Harness, env, options)
        .err()
        .expect("too long");
    assert!(err.to_string().contains("AF_UNIX limit"), "{err}");
    assert!(!long.exists(), "nothing was created");

    let options = ActorOptions {
        harness_socket_dir: Some(root.path().join("t")),
        harness_env: Some(child_env(root.path())),
        ..ActorOptions::default()
    };
    let mut actor = studyloop_actors::build(ActorKind::Harness, env, options).unwrap();
    let t = actor.converse(
        &mut FakeMentor::echo(),
        &mut Budget::new(2, None).unwrap(),
        &CancelToken::new(),
    );
    assert_eq!((t.outcome, t.turns.len()), (Outcome::Completed, 0), "{t:?}");
}

/// Issue 11 §1 for the harness actor: the mentor's reply travels to tmux as
/// one argv argument, so tmux syntax in it is typed, never run; a control
/// character in it is refused by name instead of being typed as a key.
#[test]
fn a_mentor_reply_with_tmux_syntax_is_typed_and_control_characters_are_refused() {
    let root = socket_root();
    let marker = root.path().join("ran");
    let m = marker.display();
    let hostile = [
        format!("x ; run-shell 'touch {m}' ; y"),
        format!("run-shell \"touch {m}\" \\; #{{pane_id}} $HOME ~ {{x}} 'q' \\"),
        ";".to_owned(),
        "odd\\;".to_owned(),
        "-l".to_owned(),
    ];
    let script = r#"
echo "ask"
for i in 1 2 3 4 5; do IFS= read -r a; echo "got: $a"; done
IFS= read -r z; echo STUDYLOOP_ACTOR_DONE
"#;
    let mut steps: Vec<FakeStep> = hostile.iter().cloned().map(FakeStep::Reply).collect();
    steps.push(FakeStep::Reply("bye".into()));
    let mut a = actor(root.path(), script, Duration::from_secs(10));
    let t = run(&mut a, &mut FakeMentor::with_steps(steps), 10);
    assert_eq!(t.outcome, Outcome::Completed, "{t:?}");
    let got: Vec<String> = t.turns[1..].iter().map(|t| t.learner.clone()).collect();
    let want: Vec<String> = hostile.iter().map(|h| format!("got: {h}")).collect();
    assert_eq!(got, want);
    assert!(!marker.exists(), "a tmux command ran");
    drop(a);

    let mut b = actor(&root.path().join("b"), script, Duration::from_secs(10));
    let steps = [FakeStep::Reply("clear \u{1b}[2J".into())];
    let t = run(&mut b, &mut FakeMentor::with_steps(steps), 10);
    assert_eq!(t.outcome, Outcome::Errored, "{t:?}");
    let err = t.error.unwrap_or_default();
    assert!(err.contains("U+001B (ESC)"), "{err}");
}
