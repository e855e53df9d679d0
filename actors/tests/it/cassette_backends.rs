//! Every model-backed learner (gateway, direct OpenAI, direct Anthropic) built by the
//! factory with a cassette: recorded against the real stub provider over loopback HTTP,
//! then replayed with the stub stopped and the endpoint a closed port; the same turns
//! and usage, and a miss when the conversation changes.

use crate::common;

use studyloop_actors::fake::FakeMentor;
use studyloop_actors::llm::cassette::{Cassette, CassetteMode, CassetteSetting};
use studyloop_actors::{ActorKind, ActorOptions, Budget, CancelToken, Transcript};

const KEY: &str = "sk-stub-cassette-0123456789abcdef";
const LEARNER: [&str; 3] = ["What is a trait?", "And a generic?", "Show me one."];

/// The env selecting `backend` at `base`.
fn env(backend: &str, base: &str) -> (ActorKind, Vec<(&'static str, String)>, Option<String>) {
    match backend {
        "gateway" => (
            ActorKind::Gateway,
            vec![
                ("LITELLM_BASE_URL", base.to_owned()),
                ("LITELLM_API_KEY", KEY.to_owned()),
                ("STUDYLOOP_ACC_GATEWAY_MODEL", "studyloop-stub".to_owned()),
            ],
            None,
        ),
        "openai" => (
            ActorKind::Direct,
            vec![
                ("STUDYLOOP_ACC_DIRECT_PROVIDER", "openai".to_owned()),
                ("OPENAI_API_KEY", KEY.to_owned()),
            ],
            Some(format!("{base}/v1")),
        ),
        _ => (
            ActorKind::Direct,
            vec![
                ("STUDYLOOP_ACC_DIRECT_PROVIDER", "anthropic".to_owned()),
                ("ANTHROPIC_API_KEY", KEY.to_owned()),
            ],
            Some(base.to_owned()),
        ),
    }
}

fn talk(backend: &str, base: &str, cassette: &Cassette, mentor: FakeMentor) -> Transcript {
    let (kind, pairs, direct_base_url) = env(backend, base);
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let options = ActorOptions {
        cassette: Some(cassette.tap(format!("cell-{backend}"))),
        direct_base_url,
        ..ActorOptions::default()
    };
    let mut actor = studyloop_actors::build(kind, pairs.as_slice(), options).unwrap();
    let mut mentor = mentor;
    actor.converse(
        &mut mentor,
        &mut Budget::new(3, None).unwrap(),
        &CancelToken::new(),
    )
}

/// What each turn said and cost (not its wall time).
fn said(t: &Transcript) -> Vec<(String, String, studyloop_actors::Usage)> {
    t.turns
        .iter()
        .map(|turn| (turn.learner.clone(), turn.mentor_reply.clone(), turn.usage))
        .collect()
}

fn open(mode: CassetteMode, file: &std::path::Path) -> Cassette {
    let setting = CassetteSetting {
        mode,
        file: Some(file.to_owned()),
    };
    Cassette::open(&setting, None).unwrap()
}

#[test]
fn every_model_backend_replays_its_recording_with_the_endpoint_closed() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("roles.json");
    let roles = serde_json::json!({"version": 1, "learner": LEARNER});
    std::fs::write(&script, roles.to_string()).unwrap();
    let file = dir.path().join("cassette.jsonl");
    let stub = common::stub(
        &dir.path().join("stub"),
        &[
            "--role",
            "learner",
            "--script",
            script.to_str().unwrap(),
            "--api-key",
            KEY,
        ],
    );
    let backends = ["gateway", "openai", "anthropic"];
    let recorder = open(CassetteMode::Record, &file);
    let recorded: Vec<Transcript> = backends
        .iter()
        .map(|b| talk(b, &stub.base_url(), &recorder, FakeMentor::echo()))
        .collect();
    drop(recorder);
    drop(stub);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        text.lines().count(),
        10,
        "the salt, three turns per backend"
    );
    assert!(!text.contains(KEY), "the key entered the cassette");

    let replayer = open(CassetteMode::Replay, &file);
    for (backend, recorded) in backends.iter().zip(&recorded) {
        assert_eq!(recorded.turns.len(), 3, "{backend}: {recorded:?}");
        let replayed = talk(backend, "http://127.0.0.1:1", &replayer, FakeMentor::echo());
        assert_eq!(
            (replayed.outcome, said(&replayed)),
            (recorded.outcome, said(recorded)),
            "{backend}"
        );
    }
    // Another mentor makes another conversation: the second request differs, and
    // the replay fails loudly there instead of calling out (a fresh handle: the
    // call counters start again).
    drop(replayer);
    let replayer = open(CassetteMode::Replay, &file);
    let other = FakeMentor::with_steps([studyloop_actors::fake::FakeStep::Reply(
        "something else".into(),
    )]);
    let changed = talk("anthropic", "http://127.0.0.1:1", &replayer, other);
    let error = changed.error.clone().unwrap_or_default();
    assert!(
        changed.turns.len() == 1 && error.contains("cassette miss"),
        "{changed:?}"
    );
}
