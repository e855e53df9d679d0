//! Attacks on cassettes: edited, corrupt, torn, FIFO, symlinked and oversized files;
//! eight concurrent recorders; recorders SIGKILLed mid-write.

use std::path::Path;
use std::time::Duration;

use super::tests::{client, converse, open, server, temp};
use super::*;
use crate::llm::{ChatMessage, LlmError, Wire};

/// Every hostile cassette is refused at open, naming the file: an edited answer, an
/// edited request, a corrupt middle line, a FIFO, a symlink, one over the size bound.
/// A truncated one (torn last line) opens, ignores the torn line, and the lost
/// request is a miss.
#[test]
fn hostile_cassettes_are_refused_naming_the_file() {
    let (_dir, path) = temp();
    let (live, _) = server();
    let recorder = open(CassetteMode::Record, &path).unwrap();
    converse(&client(&live, Some(recorder.tap("cell"))));
    drop(recorder);
    let good = std::fs::read_to_string(&path).unwrap();
    let dir = path.parent().unwrap();
    let refused = |name: &str, text: &str, want: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let err = open(CassetteMode::Replay, &p).unwrap_err().to_string();
        assert!(
            err.contains(want) && err.contains(&p.display().to_string()),
            "{name}: {err}"
        );
    };
    refused(
        "edited-answer.jsonl",
        &good.replacen("answer 1", "answer 9", 1),
        "line 2 was altered",
    );
    refused(
        "edited-usage.jsonl",
        &good.replacen("\"output_tokens\":2", "\"output_tokens\":7", 1),
        "line 3 was altered",
    );
    refused(
        "edited-request.jsonl",
        &good.replacen("And borrowing?", "And lending?", 1),
        "line 4 was altered",
    );
    let lines: Vec<&str> = good.lines().collect();
    refused(
        "corrupt.jsonl",
        &format!("{}\n{{\"v\":2\n{}\n", lines[0], lines[2]),
        "line 2 is not a cassette entry",
    );
    // Truncated mid-line: opens, says the tail was torn, and the lost entry misses.
    let torn = dir.join("torn.jsonl");
    std::fs::write(&torn, &good[..good.len() - 10]).unwrap();
    let c = open(CassetteMode::Replay, &torn).unwrap();
    assert!(c.torn_tail());
    let client = client("http://127.0.0.1:1", Some(c.tap("cell")));
    let all = ["What is ownership?", "What is ownership?", "And borrowing?"]
        .map(|q| client.chat("sys", &[ChatMessage::user(q)], 20));
    assert!(all[0].is_ok() && all[1].is_ok(), "{all:?}");
    assert!(
        matches!(all[2], Err(LlmError::Cassette(CassetteError::Miss { .. }))),
        "{all:?}"
    );
    // A FIFO is refused at once, never read (which would hang).
    let fifo = dir.join("fifo.jsonl");
    studyloop_regular_file::make_fifo_for_tests(&fifo);
    let err = open(CassetteMode::Replay, &fifo).unwrap_err().to_string();
    assert!(err.contains("cannot read the cassette"), "{err}");
    let err = client_record_err(&fifo);
    assert!(err.contains("not a regular file"), "{err}");
    // A symlink is refused for reading and for recording (no redirect).
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(open(CassetteMode::Replay, &link).is_err());
    let before = std::fs::read(&path).unwrap();
    assert!(!client_record_err(&link).is_empty());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "recorded through a symlink"
    );
    // Over the bound: refused before anything is parsed.
    let huge = dir.join("huge.jsonl");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(MAX_CASSETTE_BYTES + 1).unwrap();
    let err = open(CassetteMode::Replay, &huge).unwrap_err().to_string();
    assert!(err.contains("cannot read the cassette"), "{err}");
}

/// Recording into `path` fails; the error text.
fn client_record_err(path: &Path) -> String {
    let (live, _) = server();
    let c = open(CassetteMode::Record, path).unwrap();
    client(&live, Some(c.tap("cell")))
        .chat("s", &[ChatMessage::user("q")], 5)
        .unwrap_err()
        .to_string()
}

/// Eight recorders (threads, each its own cell and its own handle's file lock) append
/// 25 entries each with large answers to one file, while a torn tail is planted
/// between them: every entry survives whole, none interleaved.
#[test]
fn concurrent_recorders_lose_and_interleave_nothing() {
    let (_dir, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A recorder killed mid-line left this torn tail; the next append cuts it.
    std::fs::write(&path, b"{\"v\":1,\"entry\":{\"kind\":\"chat\",\"sco").unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let c = open(CassetteMode::Record, &path).unwrap();
                let tap = c.tap(format!("cell-{t}"));
                for i in 0..25 {
                    let big = format!("{t}-{i} {}", "x".repeat(20_000));
                    let request = tap
                        .request(Wire::AnthropicCompat, &serde_json::json!({"q": big}), None)
                        .unwrap();
                    let response = crate::llm::ChatResponse {
                        text: big,
                        usage: crate::transcript::Usage::UNKNOWN,
                    };
                    tap.record(request, &response).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let c = open(CassetteMode::Replay, &path).unwrap();
    assert!(!c.torn_tail());
    let text = std::fs::read_to_string(&path).unwrap();
    // One salt line, written once by whichever recorder came first.
    assert_eq!(text.lines().count(), 201);
    for t in 0..8 {
        let tap = c.tap(format!("cell-{t}"));
        for i in 0..25 {
            let big = format!("{t}-{i} {}", "x".repeat(20_000));
            let request = tap
                .request(Wire::AnthropicCompat, &serde_json::json!({"q": big}), None)
                .unwrap();
            assert_eq!(tap.serve(&request).unwrap().text, big);
        }
    }
}

/// The child half of the kill test: records 1 MiB entries until it is killed.
fn record_until_killed(path: &Path) -> ! {
    let c = open(CassetteMode::Record, path).unwrap();
    let tap = c.tap("killed");
    let big = "y".repeat(1 << 20);
    for i in 0u64.. {
        let request = tap
            .request(Wire::AnthropicCompat, &serde_json::json!({"i": i}), None)
            .unwrap();
        let response = crate::llm::ChatResponse {
            text: big.clone(),
            usage: crate::transcript::Usage::UNKNOWN,
        };
        tap.record(request, &response).unwrap();
    }
    unreachable!()
}

/// A recorder SIGKILLed mid-write (six times, at different moments, 1 MiB lines) leaves
/// a cassette that opens: complete lines all check, a torn last line is ignored, and
/// the next recorder cuts it and appends whole lines after it.
#[test]
fn a_recorder_killed_mid_write_leaves_a_parseable_cassette() {
    const CHILD: &str = "STUDYLOOP_CASSETTE_KILL_CHILD";
    if let Some(path) = std::env::var_os(CHILD) {
        record_until_killed(Path::new(&path));
    }
    let (_dir, path) = temp();
    let mut torn = 0;
    for round in 0..6u64 {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "llm::cassette::attack_tests::a_recorder_killed_mid_write_leaves_a_parseable_cassette",
                "--nocapture",
            ])
            .env(CHILD, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait for its first bytes (the child loads the rules first), then kill it a
        // little later each round so the kill lands at different points of a line.
        let start = std::fs::metadata(&path).map_or(0, |m| m.len());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::fs::metadata(&path).map_or(0, |m| m.len()) <= start
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(3 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        let c = open(CassetteMode::Replay, &path).unwrap();
        torn += usize::from(c.torn_tail());
        drop(c);
        // The next recorder repairs the tail and its line is whole.
        let c = open(CassetteMode::Record, &path).unwrap();
        c.seed(&format!("after-{round}"), round).unwrap();
        drop(c);
        let c = open(CassetteMode::Replay, &path).unwrap();
        assert!(!c.torn_tail(), "round {round}");
        assert_eq!(c.seed(&format!("after-{round}"), 99).unwrap(), round);
    }
    eprintln!("killed recorders: 6, torn tails left and repaired: {torn}");
}

/// Issue 33 §4: the seal is an unkeyed digest, so it detects corruption, not forgery.
/// A line forged and re-sealed by hand passes the seal; one that carries a string the
/// redaction rules would rewrite (a key smuggled into the answer or the request) is
/// still refused at open, so it never reaches a replayed answer or a bundle.
#[test]
fn a_resealed_line_smuggling_a_secret_is_refused() {
    use super::entry::{Answer, Entry, Salt, line};
    let (_dir, path) = temp();
    let salt = Salt::fresh().unwrap();
    let dir = path.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let key = format!("ghp_{}", "a1B2".repeat(9));
    let forged = |name: &str, request: serde_json::Value, text: &str| {
        let p = dir.join(name);
        let mut bytes = line(Entry::Salt {
            salt: salt.as_str().to_owned(),
        });
        bytes.extend(line(Entry::Chat {
            scope: "cell".into(),
            key: super::entry::key_of(&salt, &request),
            request,
            answer: Answer {
                text: text.to_owned(),
                input_tokens: Some(1),
                output_tokens: Some(1),
            },
        }));
        std::fs::write(&p, bytes).unwrap();
        (p.clone(), open(CassetteMode::Replay, &p))
    };
    let clean = serde_json::json!({"body": {"q": "hi"}, "wire": "openai-chat"});
    // The control: a forged, re-sealed line with clean text opens (the seal is no
    // proof of who wrote it; the docs say so).
    let (_, ok) = forged("clean.jsonl", clean.clone(), "a forged but clean answer");
    assert!(ok.is_ok(), "{ok:?}");
    for (name, request, text) in [
        (
            "answer.jsonl",
            clean.clone(),
            format!("use the token {key}"),
        ),
        (
            "request.jsonl",
            serde_json::json!({"body": {"q": format!("token={key}")}, "wire": "openai-chat"}),
            "fine".to_owned(),
        ),
        // Inside an array, as every real request's `messages` is (issue 33 item 5: a
        // surviving mutant skipped arrays, so a key smuggled into a message replayed).
        (
            "messages.jsonl",
            serde_json::json!({"body": {"messages": [{"role": "user", "content": format!("use {key}")}]}, "wire": "openai-chat"}),
            "fine".to_owned(),
        ),
        ("home.jsonl", clean, "see /home/alice/notes.txt".to_owned()),
    ] {
        let (p, got) = forged(name, request, &text);
        let err = got.unwrap_err().to_string();
        assert!(
            err.contains("redaction rules rewrite") && err.contains(&p.display().to_string()),
            "{name}: {err}"
        );
        assert!(!err.contains(&key), "the error repeats the secret: {err}");
    }
}

/// Recording into a cassette someone left world-readable makes it private again
/// before a line is added (issue 33 item 5: the mode check mutated survived), and a
/// new one is created 0600 in a 0700 directory.
#[test]
fn a_cassette_recorded_into_is_made_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, path) = temp();
    let (live, _) = server();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let recorder = open(CassetteMode::Record, &path).unwrap();
    converse(&client(&live, Some(recorder.tap("cell"))));
    drop(recorder);
    assert_eq!(mode(&path), 0o600, "a new cassette");
    assert_eq!(mode(path.parent().unwrap()), 0o700, "its new directory");
    for loose in [0o644, 0o666, 0o604, 0o640] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(loose)).unwrap();
        let recorder = open(CassetteMode::Record, &path).unwrap();
        client(&live, Some(recorder.tap("cell")))
            .chat("s", &[ChatMessage::user("one more")], 5)
            .unwrap();
        drop(recorder);
        assert_eq!(mode(&path), 0o600, "recorded into a {loose:o} cassette");
    }
}
