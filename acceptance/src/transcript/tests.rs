//! The readers and the extractor on samples RECORDED from the pinned
//! harnesses (two TUI turns each against `studyloop-stub-provider --seed 4242
//! --replies realistic`, paths redacted, bulky fields trimmed), checked against
//! the exact text the stub sends for those turns.

use std::path::{Path, PathBuf};

use super::store::{self, StoreError, StoreFormat};
use super::{TranscriptError, TurnTrace, mentor_reply, read_reply, screen, sent_reply};
use crate::fidelity::SourceKind;
use crate::fidelity::score;
use crate::selection::HarnessName;

pub(super) const SEED: u64 = 4242;
pub(super) const PROMPTS: [&str; 3] = [
    "explain recursion to me please",
    "and now iterators please",
    "what about ownership",
];

pub(super) fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcript")
        .join(name)
}

pub(super) fn sent(turn: u64) -> String {
    let prompt = PROMPTS[usize::try_from(turn - 1).unwrap()];
    studyloop_stubs::realistic_reply(SEED, turn, Some(prompt), None)
}

/// A scratch HOME with `sample` placed where the pinned version writes it.
fn home_with(sample_name: &str, at: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dest = home.path().join(at);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(sample(sample_name), &dest).unwrap();
    home
}

fn opencode_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let sql = std::fs::read_to_string(sample("opencode-1.18.33-db.sql")).unwrap();
    let db = rusqlite::Connection::open(dir.join("opencode.db")).unwrap();
    // The dump holds only the three tables read; their foreign keys name
    // opencode's `project` table, which the sample leaves out.
    db.execute_batch(&format!("PRAGMA foreign_keys = OFF;\n{sql}"))
        .unwrap();
    home
}

fn trace(home: &Path, turn: u64) -> TurnTrace<'_> {
    TurnTrace {
        home,
        turn,
        screen: "",
        prompt: PROMPTS[usize::try_from(turn - 1).unwrap()],
    }
}

fn assert_store_is_exact(harness: HarnessName, home: &Path) {
    for turn in [1, 2] {
        let got = mentor_reply(harness, &trace(home, turn)).unwrap();
        assert_eq!(got.source, SourceKind::SessionStore, "{harness}");
        assert_eq!(got.text, sent(turn), "{harness} turn {turn}");
        let verdict = score(&sent(turn), &got.text, got.source);
        assert!(verdict.pass && verdict.ratio == Some(1.0));
    }
    let err = read_reply(harness, &trace(home, 2).with_turn(3)).unwrap_err();
    assert!(
        matches!(
            err,
            TranscriptError::Store(StoreError::NoSuchTurn { found: 2, .. })
        ),
        "{harness}: {err}"
    );
}

/// A stub request-log line that answered `n` learner turns with `reply`.
fn log_record(n: u64, reply: &str) -> studyloop_stubs::LogRecord {
    studyloop_stubs::LogRecord {
        seq: n,
        time: String::new(),
        method: "POST".into(),
        path: "/v1/chat/completions".into(),
        model: None,
        protocol: studyloop_stubs::Protocol::ChatCompletions,
        stream: true,
        max_tokens: None,
        practice_check: None,
        message_count: n,
        user_turns: n,
        persona: None,
        user_text_sha256: None,
        recall: None,
        user_agent: None,
        reply: Some(reply.to_owned()),
        usage: studyloop_stubs::UsageRecord::default(),
        status: 200,
        fault: None,
        tool_call: None,
        tool_result: None,
        tool_note: None,
    }
}

impl TurnTrace<'_> {
    fn with_turn(self, turn: u64) -> Self {
        Self { turn, ..self }
    }
}

#[test]
fn codex_rollout_gives_the_exact_text_per_turn() {
    let home = home_with(
        "codex-0.171.0-rollout.jsonl",
        ".codex/sessions/2026/11/30/rollout-2026-11-30T21-10-16-01a22e4b.jsonl",
    );
    assert_store_is_exact(HarnessName::Codex, home.path());
}

#[test]
fn claude_project_session_gives_the_exact_text_per_turn() {
    let home = home_with(
        "claude-2.1.332-session.jsonl",
        ".claude/projects/-home-learner-work/ba4384a6.jsonl",
    );
    // A newer side-agent log below the session's own directory is not it.
    let side = home
        .path()
        .join(".claude/projects/-home-learner-work/ba4384a6/subagents");
    std::fs::create_dir_all(&side).unwrap();
    std::fs::write(
        side.join("agent-1.jsonl"),
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"sub\"}}\n",
    )
    .unwrap();
    assert_store_is_exact(HarnessName::Claude, home.path());
}

#[test]
fn pi_session_gives_the_exact_text_per_turn() {
    let home = home_with(
        "pi-0.73.1-session.jsonl",
        ".pi/agent/sessions/--home-learner-work--/2026-11-30T21-10-19-526Z_01a22e4b.jsonl",
    );
    assert_store_is_exact(HarnessName::Pi, home.path());
}

#[test]
fn opencode_database_gives_the_exact_text_per_turn() {
    let home = opencode_home();
    assert_store_is_exact(HarnessName::Opencode, home.path());
}

#[test]
fn a_missing_store_is_a_clear_error_not_an_empty_reply() {
    let home = tempfile::tempdir().unwrap();
    for harness in [
        HarnessName::Codex,
        HarnessName::Claude,
        HarnessName::Pi,
        HarnessName::Opencode,
    ] {
        let err = read_reply(harness, &trace(home.path(), 1)).unwrap_err();
        assert!(err.to_string().contains("session"), "{harness}: {err}");
    }
}

#[test]
fn the_newest_session_file_is_read_and_hostile_entries_are_skipped() {
    let home = home_with(
        "pi-0.73.1-session.jsonl",
        ".pi/agent/sessions/--w--/b-new.jsonl",
    );
    let dir = home.path().join(".pi/agent/sessions/--w--");
    // An older session, a FIFO and a symlink out of the tree, all newer than
    // nothing the reader would block on or follow.
    let old = dir.join("a-old.jsonl");
    std::fs::write(
        &old,
        "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}\n",
    )
    .unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(past)
        .unwrap();
    studyloop_regular_file::make_fifo_for_tests(&dir.join("z-fifo.jsonl"));
    std::os::unix::fs::symlink("/etc/hostname", dir.join("zz-link.jsonl")).unwrap();
    let got = mentor_reply(HarnessName::Pi, &trace(home.path(), 2)).unwrap();
    assert_eq!(got.text, sent(2));
}

#[test]
fn malformed_and_partial_lines_are_skipped_not_fatal() {
    let text = std::fs::read_to_string(sample("pi-0.73.1-session.jsonl")).unwrap();
    let hostile = format!(
        "not json\n{{\"type\":\"message\"}}\n{text}{{\"type\":\"message\",\"message\":{{\"role\":\"assi"
    );
    let conversation = store::parse_jsonl(StoreFormat::PiSessions, &hostile);
    assert_eq!(store::turn_reply(&conversation, 1), Some(sent(1)));
    assert_eq!(store::turn_reply(&conversation, 0), None);
}

#[test]
fn every_installable_harness_declares_its_reply_source() {
    use super::ReplySource;
    for spec in &crate::harness_spec::SPECS {
        let want = match spec.name {
            HarnessName::Codex => ReplySource::Store(StoreFormat::CodexRollout),
            HarnessName::Claude => ReplySource::Store(StoreFormat::ClaudeProjects),
            HarnessName::Pi => ReplySource::Store(StoreFormat::PiSessions),
            HarnessName::Opencode => ReplySource::Store(StoreFormat::OpencodeDb),
            HarnessName::Grok => ReplySource::Screen(&screen::GROK),
            HarnessName::Kiro => ReplySource::Screen(&screen::UNMEASURED),
        };
        assert_eq!(spec.reply_source, want, "{}", spec.name);
    }
}

#[test]
fn a_reply_still_being_written_is_read_once_it_settles() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".pi/agent/sessions/--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let full = std::fs::read_to_string(sample("pi-0.73.1-session.jsonl")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    // The learner's turn is there, the reply is not yet.
    let file = dir.join("s.jsonl");
    std::fs::write(&file, format!("{}\n", lines[..lines.len() - 1].join("\n"))).unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        std::fs::write(&file, full).unwrap();
    });
    let started = std::time::Instant::now();
    let got = mentor_reply(HarnessName::Pi, &trace(home.path(), 2)).unwrap();
    writer.join().unwrap();
    assert_eq!(got.text, sent(2));
    assert!(started.elapsed() >= std::time::Duration::from_millis(400));
}

#[test]
fn the_sent_text_is_the_turns_answer_not_a_side_request() {
    let title = format!(
        "MENTOR-REPLY 2 {}: title side",
        studyloop_stubs::nonce(SEED, 2)
    );
    let records = vec![
        log_record(1, &sent(1)),
        log_record(1, &title),
        log_record(2, &sent(2)),
        log_record(3, r#"{"title":"x"}"#),
    ];
    assert_eq!(sent_reply(&records, SEED, 1, None), Some(sent(1).as_str()));
    assert_eq!(sent_reply(&records, SEED, 2, None), Some(sent(2).as_str()));
    assert_eq!(sent_reply(&records, SEED, 3, None), None);
    assert_eq!(sent_reply(&records, SEED + 1, 1, None), None);
}

/// Found live (cli-tmux::codex and ::claude, 2026-11-30): the lane's
/// one-shot availability probe is a request with one learner turn, so the
/// stub answers it as `MENTOR-REPLY 1 <nonce>` too, before the session's
/// first turn (opencode's title request likewise). The sent text is the
/// answer to the turn's prompt (its marker echoes the prompt's first words),
/// not the first answer numbered 1; before, turn 1 scored 0.97 against the
/// probe's reply and failed its floor.
#[test]
fn the_sent_text_answers_the_turns_prompt_not_an_earlier_probe() {
    let probe = "availability probe: reply with one short line";
    let records = vec![
        log_record(
            1,
            &studyloop_stubs::realistic_reply(SEED, 1, Some(probe), None),
        ),
        log_record(1, &sent(1)),
        log_record(2, &sent(2)),
    ];
    assert_eq!(
        sent_reply(&records, SEED, 1, Some(PROMPTS[0])),
        Some(sent(1).as_str())
    );
    assert_eq!(
        sent_reply(&records, SEED, 2, Some(PROMPTS[1])),
        Some(sent(2).as_str())
    );
    // Without a prompt, or with one no answer echoes, the old preference stands.
    assert_ne!(sent_reply(&records, SEED, 1, None), Some(sent(1).as_str()));
    assert_eq!(
        sent_reply(&records, SEED, 2, Some("never asked")),
        Some(sent(2).as_str())
    );
}

#[test]
fn record_turn_scores_against_the_stub_log_and_sums_up_the_cell() {
    use super::record_turn;
    use crate::fidelity::CellFidelity;
    let home = home_with(
        "pi-0.73.1-session.jsonl",
        ".pi/agent/sessions/--w--/s.jsonl",
    );
    let records = [log_record(1, &sent(1)), log_record(2, &sent(2))];
    let turns: Vec<_> = [1, 2]
        .iter()
        .map(|&n| record_turn(HarnessName::Pi, &trace(home.path(), n), &records, SEED).unwrap())
        .collect();
    assert!(
        turns
            .iter()
            .all(|t| t.verdict.as_ref().is_some_and(|v| v.pass))
    );
    let cell = CellFidelity::of(&turns);
    assert_eq!(
        (cell.ratio, cell.pass, cell.scored_turns),
        (Some(1.0), true, 2)
    );
    // Real-auth: no stub log, so the verdict is unknown and nothing is proven.
    let unknown = record_turn(HarnessName::Pi, &trace(home.path(), 1), &[], SEED).unwrap();
    assert_eq!(unknown.verdict, None);
    let cell = CellFidelity::of(&[unknown]);
    assert_eq!((cell.ratio, cell.pass), (None, false));
    // One turn below its floor fails the cell.
    let mut bad = turns;
    if let Some(v) = bad[1].verdict.as_mut() {
        v.pass = false;
    }
    assert!(!CellFidelity::of(&bad).pass);
}

#[test]
fn the_pinned_samples_parse_whole_and_a_changed_schema_names_its_first_record() {
    for (format, file) in [
        (StoreFormat::CodexRollout, "codex-0.171.0-rollout.jsonl"),
        (StoreFormat::ClaudeProjects, "claude-2.1.332-session.jsonl"),
        (StoreFormat::PiSessions, "pi-0.73.1-session.jsonl"),
    ] {
        let text = std::fs::read_to_string(sample(file)).unwrap();
        assert_eq!(store::first_unparsable(format, &text), None, "{file}");
        // A line being written (the last, cut) is not a schema change.
        let cut = format!("{text}{{\"type\":\"mess");
        assert_eq!(store::first_unparsable(format, &cut), None, "{file}");
    }
    // A version that moved the message's content (pi: `content` → `parts`).
    let text = std::fs::read_to_string(sample("pi-0.73.1-session.jsonl")).unwrap();
    let changed = text.replacen("\"content\"", "\"parts\"", 1);
    let line = changed
        .lines()
        .position(|l| l.contains("\"parts\""))
        .unwrap()
        + 1;
    let got = store::first_unparsable(StoreFormat::PiSessions, &changed).unwrap();
    assert!(
        got.starts_with(&format!("line {line}: ")) && got.contains("\"parts\""),
        "{got}"
    );
    // Not JSON in the middle of the file is unparsable too.
    let got =
        store::first_unparsable(StoreFormat::PiSessions, &format!("not json\n{text}")).unwrap();
    assert!(got.starts_with("line 1: not json"), "{got}");
    // And the error a missing turn gives names it.
    let err = StoreError::NoSuchTurn {
        path: "s.jsonl".into(),
        turn: 1,
        found: 0,
        unparsable: Some(got),
    };
    assert!(
        err.to_string().contains(
            "the first record that no longer parses as the pinned schema, line 1: not json"
        ),
        "{err}"
    );
}
