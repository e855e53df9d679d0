//! Ungated tests of `PaneDriver` against a scripted shell "harness" (never a
//! real coding-agent binary) on a private tmux server whose short socket lives
//! in a fresh `/tmp/sl-pd-*` dir that the test removes. Needs only tmux + bash.
//!
//! The fake harness prints a `READY> ` prompt (the ready and idle marker), reads
//! one line per turn, and then, by mode: replies with the stub-style marker
//! `MENTOR-REPLY <n> nonce<n>: <text>` after a short "thinking…" pause, stays
//! silent (only the terminal's echo), spins forever, or exits; or, in
//! `drop-first-enter` mode, swallows the first Enter and then replies.

use std::time::Duration;

use regex::Regex;
use studyloop_acceptance::pane::{Limits, Markers, PaneDriver, PaneError, Proof, TurnOutcome};
use studyloop_acceptance::procfs::process_alive;
use studyloop_acceptance::tmux::Tmux;

const FAKE_HARNESS: &str = r#"
printf 'fake harness starting\n'
sleep "${FAKE_BOOT:-0.2}"
n="${FAKE_HISTORY:-0}"
while true; do
  printf 'READY> '
  if [ "$FAKE_MODE" = drop-first-enter ]; then
    # Key by key, echoing itself; the very first Enter is swallowed with no
    # visible change, as an Ink TUI under load does.
    line=''
    while IFS= read -rsn1 c || exit 0; do
      if [ -z "$c" ]; then
        if [ -z "$dropped" ]; then dropped=1; continue; fi
        printf '\n'; break
      fi
      printf '%s' "$c"; line="$line$c"
    done
  else
    IFS= read -r line || exit 0
  fi
  n=$((n+1))
  case "$FAKE_MODE" in
    silent) ;;
    spinner) while true; do for c in '|' '/' '-' '+'; do printf '\r%s working' "$c"; sleep 0.05; done; done ;;
    exit) exit 3 ;;
    *) printf 'thinking...\n'; sleep 0.3; printf 'MENTOR-REPLY %d nonce%d: %s\n' "$n" "$n" "$line" ;;
  esac
done
"#;

/// A private tmux server running the fake harness; killed and removed on drop.
struct Fake {
    tmux: Tmux,
    pane: String,
    _dir: tempfile::TempDir,
}

impl Fake {
    fn start(mode: &str, history: u32) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("sl-pd-")
            .tempdir_in("/tmp")
            .expect("create a private dir under /tmp");
        let script = dir.path().join("fake-harness.sh");
        std::fs::write(&script, FAKE_HARNESS).expect("write the fake harness");
        let env = [
            ("PATH", "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ("HOME", dir.path().display().to_string()),
            ("LANG", "C.UTF-8".to_owned()),
            ("FAKE_MODE", mode.to_owned()),
            ("FAKE_HISTORY", history.to_string()),
        ];
        let tmux = Tmux::new(dir.path().join("s"), env).expect("short socket path");
        let script = script.display().to_string();
        let pane = tmux
            .new_session(
                "fake",
                dir.path(),
                (120, 30),
                &["bash", "--noprofile", "--norc", &script],
            )
            .expect("start the fake harness in tmux");
        Self {
            tmux,
            pane,
            _dir: dir,
        }
    }

    fn driver(&self, limits: Limits, proof: Proof) -> PaneDriver {
        PaneDriver::attach(&self.tmux, "fake", &self.pane, markers(), limits, proof)
            .expect("attach a control client")
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.tmux.kill_server();
    }
}

fn markers() -> Markers {
    Markers {
        ready: Regex::new(r"(?m)^READY> ?$").unwrap(),
        idle: Some(Regex::new(r"(?m)^READY> ?$").unwrap()),
        busy: Some(Regex::new("working").unwrap()),
    }
}

fn limits(turn_timeout_ms: u64, max_turns: u32) -> Limits {
    Limits {
        ready_timeout: Duration::from_secs(10),
        turn_timeout: Duration::from_millis(turn_timeout_ms),
        max_turns,
        ..Limits::default()
    }
}

fn stub_proof(next_turn: u32) -> Proof {
    Proof::StubMarker {
        marker: Box::new(|n, prompt| {
            let first: Vec<&str> = prompt.split_whitespace().take(2).collect();
            format!("MENTOR-REPLY {n} nonce{n}: {}", first.join(" "))
        }),
        next_turn,
    }
}

#[test]
fn waits_for_ready_then_detects_each_stub_reply_by_its_nonce() {
    let fake = Fake::start("reply", 0);
    let mut driver = fake.driver(limits(10_000, 3), stub_proof(1));
    driver.wait_ready().expect("the ready marker shows");
    for (i, prompt) in ["what is a decorator", "and a closure", "and a generator"]
        .iter()
        .enumerate()
    {
        let n = u32::try_from(i).unwrap() + 1;
        let record = driver.send_turn(prompt).expect("the fake harness replies");
        assert_eq!(record.outcome, TurnOutcome::Replied);
        assert_eq!(record.stub_turn, Some(n));
        let reply = record
            .reply
            .clone()
            .expect("a reply was read off the screen");
        assert!(
            reply.contains(&format!("MENTOR-REPLY {n} nonce{n}: {prompt}")),
            "turn {n} reply {reply:?}"
        );
        assert!(
            !reply.contains("thinking"),
            "the pre-reply chatter is not the reply: {reply:?}"
        );
    }
    assert_eq!(driver.records().len(), 3);
    assert!(String::from_utf8_lossy(driver.stream()).contains("nonce3"));
}

#[test]
fn an_enter_the_harness_swallows_is_pressed_again() {
    let fake = Fake::start("drop-first-enter", 0);
    let mut driver = fake.driver(limits(10_000, 2), stub_proof(1));
    driver.wait_ready().unwrap();
    for (n, prompt) in [(1, "what is a decorator"), (2, "and a closure")] {
        let record = driver
            .send_turn(prompt)
            .expect("the driver presses Enter again when the screen did not change");
        assert_eq!(record.outcome, TurnOutcome::Replied);
        assert!(
            record
                .reply
                .as_deref()
                .unwrap()
                .contains(&format!("MENTOR-REPLY {n} nonce{n}: {prompt}")),
            "{record:?}"
        );
    }
}

#[test]
fn after_a_resume_the_stub_turn_continues_from_the_history_length() {
    let fake = Fake::start("reply", 3);
    let mut driver = fake.driver(limits(10_000, 1), stub_proof(4));
    driver.wait_ready().unwrap();
    let record = driver.send_turn("one more after resume").unwrap();
    assert_eq!(record.stub_turn, Some(4));
    assert!(
        record
            .reply
            .as_deref()
            .unwrap()
            .contains("MENTOR-REPLY 4 nonce4")
    );
}

#[test]
fn a_wrong_turn_number_is_not_accepted_as_proof() {
    // The harness answers as turn 1, the driver expects turn 2 (history lost):
    // the reply on screen must not count.
    let fake = Fake::start("reply", 0);
    let mut driver = fake.driver(limits(1_500, 1), stub_proof(2));
    driver.wait_ready().unwrap();
    let err = driver.send_turn("history check").unwrap_err();
    assert!(
        matches!(err, PaneError::TurnTimeout { turn: 1, .. }),
        "{err}"
    );
    assert!(driver.records()[0].screen.contains("MENTOR-REPLY 1 nonce1"));
}

#[test]
fn an_echo_alone_is_not_a_reply_and_the_timeout_records_the_screen_first() {
    let fake = Fake::start("silent", 0);
    let mut driver = fake.driver(limits(1_500, 3), Proof::NewContent);
    driver.wait_ready().unwrap();
    let err = driver.send_turn("is anybody there").unwrap_err();
    assert!(
        matches!(err, PaneError::TurnTimeout { turn: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("exceeded"), "{err}");
    let record = &driver.records()[0];
    assert_eq!(record.outcome, TurnOutcome::TimedOut);
    assert_eq!(record.reply, None);
    assert!(
        record.screen.contains("READY> is anybody there"),
        "screen: {}",
        record.screen
    );
}

#[test]
fn a_spinner_is_not_a_reply() {
    let fake = Fake::start("spinner", 0);
    let mut driver = fake.driver(limits(1_500, 3), Proof::NewContent);
    driver.wait_ready().unwrap();
    let err = driver.send_turn("spin for me").unwrap_err();
    assert!(matches!(err, PaneError::TurnTimeout { .. }), "{err}");
    assert!(driver.records()[0].screen.contains("working"));
}

#[test]
fn the_turn_ceiling_stops_before_sending() {
    let fake = Fake::start("reply", 0);
    let mut driver = fake.driver(limits(10_000, 1), stub_proof(1));
    driver.wait_ready().unwrap();
    driver.send_turn("the only turn").unwrap();
    let err = driver.send_turn("one too many").unwrap_err();
    assert!(
        matches!(err, PaneError::TurnCeiling { max: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("turn budget exhausted"), "{err}");
    assert_eq!(driver.records().len(), 1);
    assert!(
        !driver.capture().unwrap().contains("one too many"),
        "the turn was typed"
    );
}

#[test]
fn a_harness_that_never_gets_ready_is_reported_with_its_screen() {
    let fake = Fake::start("reply", 0);
    let mut markers = markers();
    markers.ready = Regex::new("NEVER-SHOWN").unwrap();
    let limits = Limits {
        ready_timeout: Duration::from_millis(800),
        ..limits(1_000, 1)
    };
    let mut driver = PaneDriver::attach(
        &fake.tmux,
        "fake",
        &fake.pane,
        markers,
        limits,
        Proof::NewContent,
    )
    .unwrap();
    let err = driver.wait_ready().unwrap_err();
    assert!(matches!(err, PaneError::NotReady { .. }), "{err}");
    assert!(err.to_string().contains("READY>"), "{err}");
}

#[test]
fn a_harness_that_exits_mid_turn_ends_the_drive() {
    let fake = Fake::start("exit", 0);
    let mut driver = fake.driver(limits(5_000, 1), stub_proof(1));
    driver.wait_ready().unwrap();
    let err = driver.send_turn("goodbye").unwrap_err();
    assert!(matches!(err, PaneError::Gone { .. }), "{err}");
    assert_eq!(driver.records().len(), 1, "the turn is still recorded");
}

#[test]
fn kill_server_leaves_no_server_and_no_pane_process() {
    let fake = Fake::start("reply", 0);
    let pids = fake.tmux.pane_pids();
    assert_eq!(pids.len(), 1);
    fake.tmux.kill_server();
    assert!(!fake.tmux.server_running());
    for pid in pids {
        assert!(!process_alive(pid), "pane process {pid} survived");
    }
}
