//! Record then replay through a real loopback HTTP server; replay against a listener
//! that counts connections; planted secrets; seeds. Hostile cassettes, concurrent and
//! killed recorders: `attack_tests`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::llm::{ApiKey, ChatClient, ChatMessage, Endpoint, LlmError, Wire};

/// A loopback server answering every request with `answer <n>: <last message>` and
/// usage `{prompt_tokens: 10+n, completion_tokens: n}`; returns its base URL and the
/// count of connections it accepted.
pub(super) fn server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let last = body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .and_then(|m| m["content"].as_str())
                .unwrap_or("")
                .to_owned();
            let reply = serde_json::json!({
                "choices": [{"message": {"content": format!("answer {n}: {last}")}}],
                "usage": {"prompt_tokens": 10 + n, "completion_tokens": n},
            })
            .to_string();
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (base, count)
}

pub(super) const KEY: &str = "sk-proj-PLANTEDkey0123456789abcdefghijklmnop";

pub(super) fn client(base: &str, tap: Option<Tap>) -> ChatClient {
    let endpoint = Endpoint {
        wire: Wire::OpenAiCompat {
            max_completion_tokens: false,
        },
        base_url: base.into(),
        api_key: ApiKey::new(KEY),
        model: "m".into(),
    };
    let c = ChatClient::new(endpoint, Duration::from_secs(10)).unwrap();
    match tap {
        Some(tap) => c.with_cassette(tap),
        None => c,
    }
}

pub(super) fn open(mode: CassetteMode, path: &Path) -> Result<Cassette, CassetteError> {
    Cassette::open(
        &CassetteSetting {
            mode,
            file: Some(path.to_owned()),
        },
        None,
    )
}

pub(super) fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run").join(CASSETTE_FILE_NAME);
    (dir, path)
}

/// A conversation of three turns, the same first question asked twice.
pub(super) fn converse(c: &ChatClient) -> Vec<(String, Option<u64>, Option<u64>)> {
    let mut out = Vec::new();
    for q in ["What is ownership?", "What is ownership?", "And borrowing?"] {
        let r = c.chat("sys", &[ChatMessage::user(q)], 20).unwrap();
        out.push((r.text, r.usage.input_tokens, r.usage.output_tokens));
    }
    out
}

/// Record against a live server, then replay with the endpoint pointed at a listener
/// that counts connections: the same answers and usage, in order, and zero
/// connections. Before cassettes the replay client had nothing to answer from.
#[test]
fn a_recording_replays_identically_without_a_single_connection() {
    let (_dir, path) = temp();
    let (live, live_count) = server();
    let recorder = open(CassetteMode::Record, &path).unwrap();
    let recorded = converse(&client(&live, Some(recorder.tap("cell-a"))));
    assert_eq!(live_count.load(Ordering::SeqCst), 3);
    // Two identical first questions got two different answers; replay keeps both.
    assert_ne!(recorded[0].0, recorded[1].0);
    drop(recorder);
    let (trap, trap_count) = server();
    let replayer = open(CassetteMode::Replay, &path).unwrap();
    let replayed = converse(&client(&trap, Some(replayer.tap("cell-a"))));
    assert_eq!(replayed, recorded);
    assert_eq!(trap_count.load(Ordering::SeqCst), 0, "replay connected out");
    let evidence = replayer.evidence();
    assert_eq!(evidence.mode, CassetteMode::Replay);
    assert_eq!(
        evidence.sha256.as_deref(),
        Some(studyloop_redaction::pinned::digest(&std::fs::read(&path).unwrap()).as_str())
    );
    // Also against a closed port: still answered, from the cassette.
    let closed = client("http://127.0.0.1:1", Some(replayer.tap("cell-b")));
    let err = closed
        .chat("sys", &[ChatMessage::user("What is ownership?")], 20)
        .unwrap_err();
    // Another scope recorded nothing: a miss naming the hash, the file and the fix,
    // never a transport error (which would mean it tried the network).
    let LlmError::Cassette(CassetteError::Miss {
        key,
        scope,
        path: p,
        ..
    }) = &err
    else {
        panic!("{err}");
    };
    assert_eq!((scope.as_str(), p), ("cell-b", &path));
    let text = err.to_string();
    assert!(
        text.contains(key.as_str())
            && text.contains(&path.display().to_string())
            && text.contains("STUDYLOOP_ACC_CASSETTE=record"),
        "{text}"
    );
    // A fourth call in the recorded scope is a miss too, naming the recorded count.
    let c = client("http://127.0.0.1:1", Some(replayer.tap("cell-a")));
    let _ = c.chat("sys", &[ChatMessage::user("And borrowing?")], 20);
    let err = c
        .chat("sys", &[ChatMessage::user("And borrowing?")], 20)
        .unwrap_err()
        .to_string();
    assert!(err.contains("call 3") || err.contains("call 2"), "{err}");
    assert!(err.contains("1 recorded for it"), "{err}");
}

/// The file is private and keys never enter it: a key in the header, the same key
/// and other secret shapes planted in the system prompt, a message and the answer.
#[test]
fn keys_and_secret_shaped_strings_never_reach_the_cassette() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp();
    let (live, _) = server();
    let recorder = open(CassetteMode::Record, &path).unwrap();
    let c = client(&live, Some(recorder.tap("cell")));
    let planted = [
        KEY,
        "sk-ant-api03-PLANTEDabcdefghijklmnopqrstuvwxyz012345",
        "AKIAIOSFODNN7PLANTED",
        "ghp_PLANTEDabcdefghijklmnopqrstuvwxyz0123",
    ];
    for secret in planted {
        // The server echoes the last message, so each secret is in the answer too.
        let said = format!("my key is {secret} ok");
        c.chat(
            &format!("system with {secret}"),
            &[ChatMessage::user(said)],
            5,
        )
        .unwrap();
    }
    let bytes = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        bytes.lines().count(),
        1 + planted.len(),
        "the salt and one line each"
    );
    for secret in planted {
        assert!(!bytes.contains(secret), "{secret} leaked into {bytes}");
        assert!(!bytes.contains(&secret[4..20]), "part of {secret} leaked");
    }
    assert!(!bytes.to_ascii_lowercase().contains("bearer"), "{bytes}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    // The redacted cassette still replays the same request (its key is over the
    // request as sent, salted).
    let replayer = open(CassetteMode::Replay, &path).unwrap();
    let c = client("http://127.0.0.1:1", Some(replayer.tap("cell")));
    let r = c
        .chat(
            &format!("system with {}", planted[2]),
            &[ChatMessage::user(format!("my key is {} ok", planted[2]))],
            5,
        )
        .unwrap();
    assert!(!r.text.contains(planted[2]), "{}", r.text);
}

/// Seeds: a record stores the fresh seed, a replay returns the recorded one (never
/// the fresh one) and misses loudly when the scope recorded none.
#[test]
fn seeds_replay_as_recorded() {
    let (_dir, path) = temp();
    let r = open(CassetteMode::Record, &path).unwrap();
    assert_eq!(r.seed("cell", 41).unwrap(), 41);
    drop(r);
    let p = open(CassetteMode::Replay, &path).unwrap();
    assert_eq!(p.seed("cell", 7).unwrap(), 41);
    let err = p.seed("other", 7).unwrap_err().to_string();
    assert!(
        err.contains("scope `other`") && err.contains("re-record"),
        "{err}"
    );
}
