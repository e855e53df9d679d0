//! Ungated tests of `PaneDriver` against a scripted shell "harness" (never a
//! real coding-agent binary) on a private tmux server whose short socket lives
//! in a fresh `/tmp/sl-pd-*` dir that the test removes. Needs only tmux + bash.
//!
//! The fake harness prints a `READY> ` prompt (the ready and idle marker), reads
//! one line per turn, and then, by mode: replies with the stub-style marker
//! `MENTOR-REPLY <n> nonce<n>: <text>` after a short "thinking…" pause, stays
//! silent (only the terminal's echo), spins forever, or exits; or, in
//! `refused` mode, shows a refused login (a 401) instead of a reply; or, in
//! `drop-first-enter` mode, swallows the first Enter and then replies; or, in
//! `paste` mode, enables bracketed paste and reads a turn key by key the way a
//! TUI does (a bracketed paste is kept whole, `M-Enter` is a newline, a bare
//! Enter submits), writes what it received to `received-<n>.txt` and replies.

use std::time::Duration;

use regex::Regex;
use studyloop_acceptance::pane::{
    Limits, Markers, PaneDriver, PaneError, PasteMode, Proof, TurnOutcome,
};
use studyloop_acceptance::procfs::process_alive;
use studyloop_acceptance::tmux::Tmux;

const FAKE_HARNESS: &str = r#"
printf 'fake harness starting\n'
sleep "${FAKE_BOOT:-0.2}"
n="${FAKE_HISTORY:-0}"
if [ "$FAKE_MODE" = paste ]; then
  stty -echo -icanon min 1
  printf '\033[?2004h'
fi
while true; do
  printf 'READY> '
  if [ "$FAKE_MODE" = paste ]; then
    raw=''; inpaste=0
    while IFS= read -rn1 -d '' c || exit 0; do
      raw="$raw$c"
      case "$raw" in
        *$'\e[200~') inpaste=1 ;;
        *$'\e[201~') inpaste=0 ;;
        *$'\e\n') ;;
        *$'\n') [ "$inpaste" = 1 ] || break ;;
      esac
    done
    line=${raw%$'\n'}
    line=${line//$'\e[200~'/}; line=${line//$'\e[201~'/}; line=${line//$'\e\n'/$'\n'}
    n=$((n+1))
    printf '%s' "$line" > "$FAKE_DIR/received-$n.txt"
    flat=$(printf '%s' "$line" | tr '\n\t' '  ')
    printf '\nMENTOR-REPLY %d nonce%d: %s\n' "$n" "$n" "$flat"
    continue
  fi
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
    refused) printf 'thinking...\n'; sleep 0.3; printf 'stream error: unexpected status 401 Unauthorized\n' ;;
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
            ("FAKE_DIR", dir.path().display().to_string()),
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

/// Issue 17: the pane is recorded from the control-mode stream as an
/// asciinema v2 cast: the header has the pane's real size, every event its
/// arrival time (non-decreasing), and the replies are in it.
#[test]
fn a_driven_pane_is_recorded_as_an_asciicast_with_its_size_and_timing() {
    let fake = Fake::start("reply", 0);
    let mut driver = fake.driver(limits(10_000, 3), stub_proof(1));
    driver.wait_ready().expect("the ready marker shows");
    driver.send_turn("what is a decorator").expect("a reply");
    let cast = String::from_utf8(driver.cast()).expect("a cast is UTF-8");
    let lines: Vec<serde_json::Value> = cast
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines[0]["version"], 2);
    assert_eq!(lines[0]["width"], 120, "{}", lines[0]);
    assert_eq!(lines[0]["height"], 30, "{}", lines[0]);
    let times: Vec<f64> = lines[1..].iter().map(|e| e[0].as_f64().unwrap()).collect();
    assert!(
        !times.is_empty() && times.windows(2).all(|w| w[0] <= w[1]),
        "{times:?}"
    );
    assert!(lines[1..].iter().all(|e| e[1] == "o"));
    let text: String = lines[1..].iter().map(|e| e[2].as_str().unwrap()).collect();
    assert!(text.contains("nonce1"), "{text}");
    // The turn's screen rendered from the same bytes shows the reply, as the
    // captured one does.
    let rendered = driver.rendered_screens();
    assert_eq!(rendered.len(), 1);
    let screen = rendered[0].as_deref().expect("within the cap");
    assert!(screen.contains("MENTOR-REPLY 1 nonce1"), "{screen}");
    assert!(driver.records()[0].screen.contains("MENTOR-REPLY 1 nonce1"));
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
fn a_refused_login_ends_the_turn_in_seconds_not_at_its_timeout() {
    let fake = Fake::start("refused", 0);
    let mut driver = fake
        .driver(limits(60_000, 3), stub_proof(1))
        .with_refusal(studyloop_acceptance::harness_spec::login::said_by_harness);
    driver.wait_ready().unwrap();
    let started = std::time::Instant::now();
    let err = driver.send_turn("what is a borrow").unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(&err, PaneError::LoginRefused { turn: 1, evidence, .. } if evidence.contains("401 Unauthorized")),
        "{err}"
    );
    assert!(
        took < Duration::from_secs(20),
        "took {took:?} of the 60 s timeout"
    );
    let record = &driver.records()[0];
    assert_eq!(record.outcome, TurnOutcome::LoginRefused);
    assert!(
        record.screen.contains("401 Unauthorized"),
        "{}",
        record.screen
    );
}

#[test]
fn a_reply_that_talks_about_a_401_is_still_a_reply() {
    // The stub marker is the proof: a reply quoting "401 Unauthorized" is a reply.
    let fake = Fake::start("reply", 0);
    let mut driver = fake
        .driver(limits(10_000, 3), stub_proof(1))
        .with_refusal(studyloop_acceptance::harness_spec::login::said_by_harness);
    driver.wait_ready().unwrap();
    let record = driver.send_turn("explain 401 Unauthorized please").unwrap();
    assert_eq!(record.outcome, TurnOutcome::Replied);
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

/// The hostile multi-line turn of issue 11: several lines, a blank line, a
/// line that is a tmux command, tmux syntax and a tab. Typed the old way (one
/// control-mode write), tmux ran the `run-shell` line and the blank line
/// detached the client.
fn hostile_turn(marker: &std::path::Path) -> String {
    format!(
        "first line of a learner paragraph\nrun-shell touch {m}\nrun-shell \"touch {m}\"\n\nset-option -g status off ; kill-server\n'quoted' \"double\" #{{pane_id}} $HOME ~ \\ end;\n\tindented last line",
        m = marker.display()
    )
}

fn paste_limits() -> Limits {
    Limits {
        // The paste fake echoes nothing before Enter.
        echo_timeout: Duration::from_millis(300),
        ..limits(10_000, 4)
    }
}

fn received(fake: &Fake, n: u32) -> String {
    let path = fake._dir.path().join(format!("received-{n}.txt"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Issue 11 §1: a multi-line turn with a blank line and a `run-shell` line
/// arrives whole as text in both paste modes; no tmux command runs and the
/// control client stays connected for the next turn.
#[test]
fn a_multi_line_turn_arrives_as_text_and_runs_nothing() {
    for paste in [
        PasteMode::Bracketed,
        PasteMode::BracketedLf,
        PasteMode::Lines { newline: "M-Enter" },
    ] {
        let fake = Fake::start("paste", 0);
        let marker = fake._dir.path().join("ran-run-shell");
        let mut driver = fake.driver(paste_limits(), stub_proof(1)).with_paste(paste);
        driver.wait_ready().unwrap();
        let turn = hostile_turn(&marker);
        let sent = driver.send_turn(&turn);
        // run-shell runs its command asynchronously: give a stray one time.
        std::thread::sleep(Duration::from_millis(300));
        assert!(!marker.exists(), "{paste:?}: the run-shell line ran");
        let record = sent.unwrap_or_else(|e| panic!("{paste:?}: {e}"));
        assert_eq!(record.outcome, TurnOutcome::Replied, "{paste:?}");
        assert_eq!(
            received(&fake, 1),
            turn,
            "{paste:?}: the text arrived whole"
        );
        assert!(!marker.exists(), "{paste:?}: the run-shell line ran");
        assert!(
            fake.tmux.server_running(),
            "{paste:?}: the server was killed"
        );
        // Still attached: the next turn goes through the same client.
        driver
            .send_turn("a second, single line turn")
            .unwrap_or_else(|e| panic!("{paste:?}: client lost after the paste: {e}"));
        assert_eq!(received(&fake, 2), "a second, single line turn");
        assert!(!marker.exists(), "{paste:?}");
    }
}

/// A single-line turn full of tmux syntax is typed verbatim.
#[test]
fn a_single_line_turn_with_tmux_syntax_is_inert() {
    let fake = Fake::start("paste", 0);
    let marker = fake._dir.path().join("ran");
    let mut driver = fake.driver(paste_limits(), stub_proof(1));
    driver.wait_ready().unwrap();
    let turns = [
        format!("x ; run-shell 'touch {}' ; y", marker.display()),
        format!(
            "a\\' ; run-shell \"touch {}\" #{{pane_id}} $HOME ~ {{x}} %if",
            marker.display()
        ),
        "ends with a semicolon;".to_owned(),
        "ends with an escaped semicolon\\;".to_owned(),
    ];
    for (i, turn) in turns.iter().enumerate() {
        let n = u32::try_from(i).unwrap() + 1;
        driver
            .send_turn(turn)
            .unwrap_or_else(|e| panic!("{turn}: {e}"));
        assert_eq!(&received(&fake, n), turn);
    }
    assert!(!marker.exists(), "a tmux command ran");
}

/// Control characters and invisible turns are refused by turn and character
/// before anything is typed.
#[test]
fn a_turn_with_control_characters_or_nothing_visible_is_refused_by_name() {
    let fake = Fake::start("paste", 0);
    let mut driver = fake.driver(paste_limits(), stub_proof(1));
    driver.wait_ready().unwrap();
    for (turn, named) in [
        ("clear \u{1b}[2J screen", "U+001B (ESC)"),
        ("osc \u{1b}]52;c;aGk=\u{7}", "U+001B (ESC)"),
        ("nul \0 byte", "U+0000 (NUL)"),
        ("carriage\rreturn", "U+000D (CR)"),
        ("c1 \u{9b}2J", "U+009B (CSI)"),
        ("interrupt \u{3}", "U+0003 (ETX)"),
        ("\u{200B}\u{2060}", "zero-width-only"),
        ("  \n\t ", "whitespace-only"),
    ] {
        let err = driver.send_turn(turn).unwrap_err();
        assert!(
            matches!(err, PaneError::UnsafeTurn { turn: 1, .. }),
            "{err}"
        );
        let shown = err.to_string();
        assert!(shown.contains("turn 1") && shown.contains(named), "{shown}");
    }
    assert!(driver.records().is_empty());
    let screen = driver.capture().unwrap();
    assert!(
        !screen.contains("screen") && !screen.contains("byte"),
        "{screen}"
    );
    driver.send_turn("a clean turn after the refusals").unwrap();
    assert_eq!(received(&fake, 1), "a clean turn after the refusals");
}

/// The control client itself refuses a line that tmux would split.
#[test]
fn the_control_client_refuses_a_command_line_with_a_newline() {
    let fake = Fake::start("reply", 0);
    let marker = fake._dir.path().join("ran");
    let mut control = fake.tmux.control("fake").unwrap();
    for line in [
        format!(
            "display-message -p a\nrun-shell 'touch {}'",
            marker.display()
        ),
        format!(
            "display-message -p a\rrun-shell 'touch {}'",
            marker.display()
        ),
        String::new(),
    ] {
        let err = control.command(&line).unwrap_err();
        assert!(
            matches!(
                err,
                studyloop_acceptance::tmux::TmuxError::UnsafeCommand { .. }
            ),
            "{err}"
        );
    }
    assert_eq!(
        control.command("display-message -p still-here").unwrap(),
        ["still-here"]
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "the run-shell line ran");
}

/// Generated turns (a fixed xorshift seed, so a failure reproduces): tmux
/// syntax fragments, commands and key names, some split over lines, each
/// typed and received verbatim, none run.
#[test]
fn generated_turns_of_tmux_syntax_arrive_verbatim() {
    const SEED: u64 = 0x5eed_1234;
    let frags = [
        ";",
        "\\;",
        "'",
        "\"",
        "\\",
        "#{pane_id}",
        "#(touch MARK)",
        "$HOME",
        "${X}",
        "~",
        "{",
        "}",
        "%if",
        "#",
        "run-shell 'touch MARK'",
        "run-shell \"touch MARK\"",
        "kill-server",
        "-l",
        "--",
        " ",
        "word",
        "ünï",
        "🙂",
        "\t",
        "C-c",
        "Enter",
        "\\n",
        "\\033",
        "%%",
        "#[fg=red]",
    ];
    let fake = Fake::start("paste", 0);
    let marker = fake._dir.path().join("mark");
    let mark = marker.display().to_string();
    let turns = 24;
    let mut driver = fake.driver(
        Limits {
            max_turns: turns,
            ..paste_limits()
        },
        stub_proof(1),
    );
    driver.wait_ready().unwrap();
    let mut state = SEED;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        usize::try_from(state % 1024).unwrap()
    };
    for n in 1..=turns {
        let mut turn = String::from("t");
        for _ in 0..3 + next() % 8 {
            turn.push_str(&frags[next() % frags.len()].replace("MARK", &mark));
            if n % 3 == 0 && next() % 4 == 0 {
                turn.push('\n');
            }
        }
        turn.push_str(" end");
        driver
            .send_turn(&turn)
            .unwrap_or_else(|e| panic!("seed {SEED:#x} turn {n} {turn:?}: {e}"));
        assert_eq!(received(&fake, n), turn, "seed {SEED:#x} turn {n}");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists(), "a tmux command ran");
}
