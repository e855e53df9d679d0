//! A committed cassette still replays: `fixtures/web-acp-codex-gateway.cassette.jsonl`
//! was recorded by a real `web-acp::codex` lane (the codex harness over the product's
//! web ACP socket, the realistic stub mentor, the gateway learner on the stub provider;
//! 6.6 KB, the salt, 1 seed + 3 learner requests; migrated to format 2 by re-keying
//! each line under a fresh salt, which its unredacted requests allowed). For each
//! recorded request the client today
//! builds the same request from the same history, so it must hash to the recorded key
//! and get the recorded answer with the endpoint closed. A change to the request body
//! or to the canonical form fails here first: re-record the fixture (README, cassettes).

use std::path::Path;

use serde_json::Value;
use studyloop_actors::gateway::GatewaySettings;
use studyloop_actors::llm::cassette::{Cassette, CassetteMode, CassetteSetting};
use studyloop_actors::llm::{ChatClient, ChatMessage};

const SCOPE: &str = "web-acp::codex";

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures/web-acp-codex-gateway.cassette.jsonl")
}

#[test]
fn a_committed_lane_recording_replays_request_by_request() {
    let setting = CassetteSetting {
        mode: CassetteMode::Replay,
        file: Some(fixture()),
    };
    let cassette = Cassette::open(&setting, None).unwrap();
    assert_eq!(cassette.seed(SCOPE, 1).unwrap(), 2_175_121_267_464_378_556);
    let env: &[(&str, &str)] = &[
        ("LITELLM_BASE_URL", "http://127.0.0.1:1"),
        ("LITELLM_API_KEY", "any-placeholder"),
        ("STUDYLOOP_ACC_GATEWAY_MODEL", "stub-learner"),
    ];
    let endpoint = GatewaySettings::from_env(env).unwrap().endpoint();
    let client = ChatClient::new(endpoint, std::time::Duration::from_secs(5))
        .unwrap()
        .with_cassette(cassette.tap(SCOPE));
    let text = std::fs::read_to_string(fixture()).unwrap();
    let mut replayed = 0;
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let entry = &entry["entry"];
        if entry["kind"] != "chat" {
            continue;
        }
        let body = &entry["request"]["body"];
        let messages = body["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap();
        // The client adds the conversation-start message itself when the history
        // opens with the learner's own turn.
        let history: Vec<ChatMessage> = messages[2..]
            .iter()
            .map(|m| {
                let content = m["content"].as_str().unwrap().to_owned();
                match m["role"].as_str() {
                    Some("assistant") => ChatMessage::assistant(content),
                    _ => ChatMessage::user(content),
                }
            })
            .collect();
        let cap = u32::try_from(body["max_tokens"].as_u64().unwrap()).unwrap();
        let answer = client.chat(system, &history, cap).unwrap();
        assert_eq!(answer.text, entry["answer"]["text"].as_str().unwrap());
        assert_eq!(
            answer.usage.output_tokens,
            entry["answer"]["output_tokens"].as_u64()
        );
        replayed += 1;
    }
    assert_eq!(replayed, 3);
}
