//! Issue 33 §4: keys over the request before redaction, salted per cassette. Two
//! requests differing only inside a redacted span replay their own answers; no key
//! reads back a secret; a format-1 cassette is refused naming the fix.

use std::sync::atomic::Ordering;

use super::entry::{Salt, key_of, redacted};
use super::tests::{client, open, server, temp};
use super::*;
use crate::llm::{ChatMessage, LlmError};

/// The pairs: each pair's questions differ only inside what the rules redact.
const PAIRS: [[&str; 2]; 3] = [
    [
        "Why does /home/alice/notes.txt fail?",
        "Why does /home/bob/notes.txt fail?",
    ],
    [
        "Is password=hunter2first right?",
        "Is password=correcthorse right?",
    ],
    [
        "What is token=ghp_a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2a1B2?",
        "What is token=ghp_z9Y8z9Y8z9Y8z9Y8z9Y8z9Y8z9Y8z9Y8z9Y8?",
    ],
];

fn redactor() -> studyloop_redaction::Redactor {
    studyloop_redaction::Redactor::new(
        &studyloop_redaction::RedactionRules::load_default().unwrap(),
    )
}

/// Recorded in one order, replayed in the other: each question gets the answer it
/// got live (the server numbers its answers). Keyed on the redacted request (format
/// 1), the second question of each pair was served the first one's answer.
#[test]
fn requests_differing_inside_a_redacted_span_replay_their_own_answers() {
    let r = redactor();
    for [a, b] in PAIRS {
        // The precondition: the rules do make the two the same text.
        assert_eq!(r.redact(a), r.redact(b), "{a} / {b} do not redact alike");
        assert_ne!(r.redact(a), a, "{a} is not redacted at all");
    }
    let (_dir, path) = temp();
    let (live, count) = server();
    let recorder = open(CassetteMode::Record, &path).unwrap();
    let c = client(&live, Some(recorder.tap("cell")));
    let mut recorded = Vec::new();
    for q in PAIRS.iter().flatten() {
        recorded.push(c.chat("sys", &[ChatMessage::user(*q)], 9).unwrap().text);
    }
    assert_eq!(count.load(Ordering::SeqCst), 6);
    drop(recorder);
    let replayer = open(CassetteMode::Replay, &path).unwrap();
    let c = client("http://127.0.0.1:1", Some(replayer.tap("cell")));
    let asked: Vec<&str> = PAIRS.iter().flatten().copied().collect();
    for (i, q) in asked.iter().enumerate().rev() {
        let got = c.chat("sys", &[ChatMessage::user(*q)], 9).unwrap().text;
        // The server echoed the question, so the stored answer is its redacted form.
        assert_eq!(
            got,
            r.redact(&recorded[i]),
            "{q} replayed another request's answer"
        );
    }
    // A question never asked, though it redacts like the recorded ones, is a miss.
    let err = c
        .chat(
            "sys",
            &[ChatMessage::user("Why does /home/carol/notes.txt fail?")],
            9,
        )
        .unwrap_err();
    assert!(
        matches!(err, LlmError::Cassette(CassetteError::Miss { .. })),
        "{err}"
    );
}

/// A key is no digest of the request anyone can recompute without the cassette's
/// salt: not of the stored (redacted) request, not of the request as sent; the same
/// request recorded into two cassettes gets two keys; and the secret is nowhere in
/// the file. The salt is the first line, 64 hex digits.
#[test]
fn no_secret_can_be_read_back_from_a_key() {
    let secret = "password=hunter2first";
    let mut keys = Vec::new();
    for _ in 0..2 {
        let (_dir, path) = temp();
        let (live, _) = server();
        let recorder = open(CassetteMode::Record, &path).unwrap();
        let c = client(&live, Some(recorder.tap("cell")));
        c.chat(
            "sys",
            &[ChatMessage::user(format!("Is {secret} right?"))],
            9,
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hunter2first"), "{text}");
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["entry"]["kind"], "salt", "{text}");
        let salt = lines[0]["entry"]["salt"].as_str().unwrap();
        assert!(Salt::parse(salt).is_some(), "{salt}");
        let entry = &lines[1]["entry"];
        let key = entry["key"].as_str().unwrap().to_owned();
        let stored = &entry["request"];
        let unsalted = studyloop_redaction::pinned::digest(stored.to_string().as_bytes());
        assert_ne!(
            key, unsalted,
            "the key is the bare digest of the stored request"
        );
        let sent = serde_json::json!({"body": {"max_tokens": 9, "messages": [
            {"content": "sys", "role": "system"},
            {"content": format!("Is {secret} right?"), "role": "user"}], "model": "m"},
            "wire": "openai-chat"});
        assert_eq!(
            redacted(&sent, &redactor()),
            *stored,
            "the canonical form moved"
        );
        assert_ne!(
            key,
            studyloop_redaction::pinned::digest(sent.to_string().as_bytes())
        );
        // With the salt (and only with it) the key is the request as sent.
        assert_eq!(key, key_of(&Salt::parse(salt).unwrap(), &sent));
        keys.push(key);
    }
    assert_ne!(
        keys[0], keys[1],
        "two cassettes, one key: the salt is not random"
    );
}

/// A cassette an older build wrote (format 1, no salt line) is refused for replay and
/// for recording into, naming the file, the format and the fix.
#[test]
fn a_format_1_cassette_is_refused_naming_the_fix() {
    let (_dir, path) = temp();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "{\"v\":1,\"entry\":{\"kind\":\"seed\",\"scope\":\"web-acp::codex\",\"seed\":2175121267464378556},\"digest\":\"627e4b890a3178e665dd9096568d378fc74a3aa2c88e869961ccfdd71c14fdcd\"}\n",
    )
    .unwrap();
    let err = open(CassetteMode::Replay, &path).unwrap_err();
    assert!(
        matches!(err, CassetteError::OldFormat { format: 1, .. }),
        "{err}"
    );
    let text = err.to_string();
    let file = path.display().to_string();
    for want in [file.as_str(), "format 1", "re-record", "salted"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let recorder = open(CassetteMode::Record, &path).unwrap();
    let err = recorder.seed("cell", 1).unwrap_err();
    assert!(matches!(err, CassetteError::OldFormat { .. }), "{err}");
}

/// The salt line is the first line and the only one: a cassette with an entry before
/// it, or a second salt line, is refused.
#[test]
fn a_cassette_has_one_salt_line_and_it_comes_first() {
    let (_dir, path) = temp();
    let recorder = open(CassetteMode::Record, &path).unwrap();
    recorder.seed("a", 1).unwrap();
    recorder.seed("b", 2).unwrap();
    drop(recorder);
    let good = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    assert_eq!(lines.len(), 3, "{good}");
    let dir = path.parent().unwrap();
    for (name, text, want) in [
        (
            "late.jsonl",
            format!("{}\n{}\n", lines[1], lines[0]),
            "before the cassette's salt",
        ),
        (
            "twice.jsonl",
            format!("{}\n{}\n{}\n", lines[0], lines[0], lines[1]),
            "a second salt",
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let err = open(CassetteMode::Replay, &p).unwrap_err().to_string();
        assert!(err.contains(want) && err.contains(name), "{name}: {err}");
    }
}

/// Issue 33 item 5 (surviving mutants of `is_sha256_hex`): a salt line sealed right but
/// holding no 64-lowercase-hex salt (short, 64 non-hex letters, upper case) is
/// refused by name, and the replay never starts.
#[test]
fn a_salt_that_is_not_64_lowercase_hex_digits_is_refused() {
    let (_dir, path) = temp();
    let dir = path.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for (name, salt) in [
        ("short.jsonl", "abc123".to_owned()),
        ("letters.jsonl", "z".repeat(64)),
        ("upper.jsonl", "A".repeat(64)),
    ] {
        let p = dir.join(name);
        std::fs::write(
            &p,
            super::entry::line(super::entry::Entry::Salt { salt: salt.clone() }),
        )
        .unwrap();
        let err = open(CassetteMode::Replay, &p).unwrap_err().to_string();
        assert!(
            err.contains(&format!("the salt {salt:?} is not 64 lowercase hex digits"))
                && err.contains(name),
            "{name}: {err}"
        );
    }
}
