//! A case's conversation round-trips through a cassette: recorded with the gateway
//! learner on a real HTTP model endpoint (the stub provider playing the learner's
//! model) and the realistic stub mentor, then replayed with the learner's endpoint a
//! listener that counts connections: the same seed, the same learner turns and usage,
//! the same mentor replies, zero connections, and evidence that says "replayed".

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use studyloop_actors::llm::cassette::{CASSETTE_FILE_NAME, CassetteMode};
use studyloop_stubs::StubProvider;

use super::converse::tests::stub_mentor_case;
use super::faithful::Transport;
use super::live::Case;
use super::{StepFailure, Steps, converse};
use crate::caller_env::CallerEnv;
use crate::evidence::{RepoIdentity, RunId, Surface, Tier};
use crate::ledger::RunLog;
use crate::runner::TrialContext;
use crate::scratch::Scratch;
use crate::selection::{HarnessName, Selection};

const CELL: &str = "lane::codex::cassette";

fn context(run: &Path, pairs: Vec<(&str, String)>) -> TrialContext {
    let caller = CallerEnv::from_pairs(pairs);
    TrialContext {
        name: CELL.into(),
        tier: Tier::Acceptance,
        selection: Selection::from_env(&caller).unwrap(),
        caller,
        run_log: RunLog::open(run).unwrap(),
    }
}

/// A listener that accepts and counts connections, answering none.
fn trap() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, count)
}

/// What one conversation produced: (seed, [(learner, usage, mentor reply)]), and the
/// manifest the case would write.
type Talk = (u64, Vec<(String, studyloop_actors::Usage, String)>);

fn talk(ctx: &TrialContext, dir: &Path) -> (Talk, crate::evidence::Manifest) {
    let mentor_dir = dir.join(format!("mentor-{}", crate::hex::random(4)));
    let (mut case, mut mentor) = stub_mentor_case(ctx, &mentor_dir, None);
    let result: Result<_, StepFailure> = case.step("conversation", |c| {
        converse(c, Transport::Socket(&mut mentor))
    });
    let talked = result.unwrap();
    let turns = talked
        .transcript
        .turns
        .iter()
        .map(|t| (t.learner.clone(), t.usage, t.mentor_reply.clone()))
        .collect();
    // The bundle keeps the cell's own lines (its seed and each learner request) after
    // the cassette's salt line, without which they could not be replayed.
    let kept = case
        .record
        .files
        .iter()
        .find(|(rel, _)| rel == super::converse::CELL_CASSETTE)
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).lines().count());
    assert_eq!(
        kept,
        Some(4),
        "salt + seed + 2 learner requests in the bundle"
    );
    let manifest = case.record.manifest(
        &RunId::generate(),
        Tier::Acceptance,
        Surface::WebAcp,
        RepoIdentity::default(),
        Ok(()),
    );
    case.slots.scratch.take().unwrap().close().unwrap();
    ((case.seed, turns), manifest)
}

/// Record, then replay with no learner endpoint: identical turns, usage and mentor
/// replies, zero connections, a manifest that says replayed (mode, sha256, note).
/// Before cassettes the replay had no answers: the closed endpoint failed the turn.
#[test]
fn a_gateway_conversation_replays_identically_with_the_endpoint_gone() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("roles.json");
    let learner = ["What is ownership?", "Why does the borrow checker exist?"];
    let roles = serde_json::json!({"version": 1, "learner": learner});
    std::fs::write(&script, roles.to_string()).unwrap();
    let bin = crate::bins::path("studyloop-stub-provider").unwrap();
    let args = ["--role", "learner", "--script", script.to_str().unwrap()];
    let model = StubProvider::spawn(&bin, &dir.path().join("learner"), args).unwrap();
    let common = |url: String| {
        vec![
            ("STUDYLOOP_ACC_ACTOR", "gateway".to_owned()),
            ("STUDYLOOP_ACC_MAX_TURNS", "2".to_owned()),
            ("LITELLM_BASE_URL", url),
            (
                "LITELLM_API_KEY",
                "sk-planted-0123456789abcdefghij".to_owned(),
            ),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", "studyloop-stub".to_owned()),
            (
                "STUDYLOOP_ACC_APPROVE",
                "learner:gateway/studyloop-stub".to_owned(),
            ),
        ]
    };
    let mut pairs = common(model.base_url());
    pairs.push(("STUDYLOOP_ACC_CASSETTE", "record".to_owned()));
    let run = dir.path().join("run");
    let (recorded, m) = talk(&context(&run, pairs), dir.path());
    let cassette = run.join(CASSETTE_FILE_NAME);
    assert_eq!(recorded.1.len(), 2);
    assert_eq!(
        model.records().unwrap().len(),
        2,
        "the learner's model was asked"
    );
    assert_eq!(m.cassette.as_ref().unwrap().mode, CassetteMode::Record);
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains("sk-planted"), "{text}");
    drop(model);

    let (url, connections) = trap();
    let mut pairs = common(url);
    pairs.push(("STUDYLOOP_ACC_CASSETTE", "replay".to_owned()));
    pairs.push((
        "STUDYLOOP_ACC_CASSETTE_FILE",
        cassette.display().to_string(),
    ));
    let (replayed, m) = talk(&context(&dir.path().join("run2"), pairs), dir.path());
    assert_eq!(
        replayed, recorded,
        "seed, learner turns, usage, mentor replies"
    );
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "replay connected out"
    );
    let c = m.cassette.as_ref().unwrap();
    assert_eq!(c.mode, CassetteMode::Replay);
    let sha = sha256_hex(&std::fs::read(&cassette).unwrap());
    assert_eq!(c.sha256.as_deref(), Some(sha.as_str()));
    assert!(
        m.notes.iter().any(|n| n.contains("replayed from cassette")),
        "{:?}",
        m.notes
    );
    let json = m.to_json().unwrap();
    assert!(json.contains("\"mode\": \"replay\""), "{json}");
}

/// The cassette's sha256 as the manifest's inventory computes digests.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    crate::hex::encode(&sha2::Sha256::digest(bytes))
}

/// A replay whose cassette is missing fails the conversation step, naming the file
/// and the variable to fix, and never reaches the learner's endpoint.
#[test]
fn a_missing_replay_cassette_fails_the_conversation_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let (url, connections) = trap();
    let missing = dir.path().join("no-such-cassette.jsonl");
    let ctx = context(
        &dir.path().join("run"),
        vec![
            ("STUDYLOOP_ACC_ACTOR", "gateway".to_owned()),
            ("LITELLM_BASE_URL", url),
            ("LITELLM_API_KEY", "k".to_owned()),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", "m".to_owned()),
            ("STUDYLOOP_ACC_CASSETTE", "replay".to_owned()),
            ("STUDYLOOP_ACC_CASSETTE_FILE", missing.display().to_string()),
        ],
    );
    let mut case = Case::new(&ctx, HarnessName::Codex, Surface::WebAcp);
    case.slots.put_scratch(Scratch::create().unwrap());
    let mut mentor = studyloop_actors::fake::FakeMentor::echo();
    let err = converse(&mut case, Transport::Socket(&mut mentor)).unwrap_err();
    assert_eq!(err.outcome, crate::evidence::Outcome::Errored, "{err}");
    assert!(
        err.message.contains(&missing.display().to_string())
            && err.message.contains("STUDYLOOP_ACC_CASSETTE_FILE"),
        "{err}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0);
    case.slots.scratch.take().unwrap().close().unwrap();
}
