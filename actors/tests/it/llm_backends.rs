//! The gateway and direct backends (OpenAI-compatible and Anthropic-compatible)
//! against the real stub provider over loopback HTTP: multi-turn conversations
//! with honest usage, both budget caps, unknown usage, injected faults,
//! cancellation, mentor failures, auth, and budgeted judge calls.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{CancellingMentor, stub};
use studyloop_actors::direct::DirectSettings;
use studyloop_actors::fake::{FakeMentor, FakeStep};
use studyloop_actors::gateway::GatewaySettings;
use studyloop_actors::llm::{ChatClient, ChatMessage, GuardedChatError};
use studyloop_actors::llm_actor::{DEFAULT_SYSTEM_PROMPT, LlmActor, LlmActorOptions};
use studyloop_actors::{
    Actor, ActorKind, ActorOptions, Budget, CancelToken, Outcome, Transcript, Usage,
};
use studyloop_stubs::{Protocol, StubProvider};

const KEY: &str = "sk-stub-test";
const LEARNER: [&str; 3] = [
    "What is ownership?",
    "Why does the borrow checker exist at all?",
    "Show me an example.",
];

#[derive(Debug, Clone, Copy)]
enum Backend {
    Gateway,
    DirectOpenAi,
    DirectAnthropic,
}

const ALL: [Backend; 3] = [
    Backend::Gateway,
    Backend::DirectOpenAi,
    Backend::DirectAnthropic,
];

impl Backend {
    fn actor(self, stub: &StubProvider, key: &str, timeout: Duration) -> LlmActor {
        let base = stub.base_url();
        let options = LlmActorOptions {
            request_timeout: timeout,
            ..LlmActorOptions::default()
        };
        match self {
            Backend::Gateway => {
                let env: &[(&str, &str)] = &[
                    ("LITELLM_BASE_URL", &base),
                    ("LITELLM_API_KEY", key),
                    ("STUDYLOOP_ACC_GATEWAY_MODEL", "studyloop-stub"),
                ];
                LlmActor::gateway(&GatewaySettings::from_env(env).unwrap(), options).unwrap()
            }
            Backend::DirectOpenAi | Backend::DirectAnthropic => {
                let (provider, var, base) = match self {
                    Backend::DirectOpenAi => ("openai", "OPENAI_API_KEY", format!("{base}/v1")),
                    _ => ("anthropic", "ANTHROPIC_API_KEY", base),
                };
                let env: &[(&str, &str)] =
                    &[("STUDYLOOP_ACC_DIRECT_PROVIDER", provider), (var, key)];
                let settings = DirectSettings::from_env(env)
                    .unwrap()
                    .with_base_url(&base)
                    .unwrap();
                LlmActor::direct(&settings, options).unwrap()
            }
        }
    }

    fn protocol(self) -> Protocol {
        match self {
            Backend::DirectAnthropic => Protocol::Messages,
            _ => Protocol::ChatCompletions,
        }
    }
}

/// A stub playing the learner with the canned `LEARNER` replies.
fn learner_stub(dir: &Path, extra: &[&str]) -> StubProvider {
    let script = dir.join("roles.json");
    let roles = serde_json::json!({"version": 1, "learner": LEARNER});
    std::fs::write(&script, roles.to_string()).unwrap();
    let mut args = vec![
        "--role",
        "learner",
        "--script",
        script.to_str().unwrap(),
        "--api-key",
        KEY,
    ];
    args.extend_from_slice(extra);
    stub(&dir.join("stub"), &args)
}

fn converse(actor: &mut dyn Actor, budget: &mut Budget) -> (Transcript, FakeMentor) {
    let mut mentor = FakeMentor::echo();
    let transcript = actor.converse(&mut mentor, budget, &CancelToken::new());
    (transcript, mentor)
}

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

#[test]
fn multi_turn_conversations_carry_history_and_report_honest_usage() {
    for backend in ALL {
        let dir = tempfile::tempdir().unwrap();
        let stub = learner_stub(dir.path(), &[]);
        let mut actor = backend.actor(&stub, KEY, Duration::from_secs(10));
        let mut budget = Budget::new(3, None).unwrap();
        let (t, mentor) = converse(&mut actor, &mut budget);
        assert_eq!(t.outcome, Outcome::BudgetExhausted, "{backend:?}: {t:?}");
        let said: Vec<&str> = t.turns.iter().map(|turn| turn.learner.as_str()).collect();
        // Entry k answers a request holding k assistant messages: the history grew.
        assert_eq!(said, LEARNER, "{backend:?}");
        assert_eq!(mentor.received, LEARNER, "{backend:?}");
        let records = stub.records().unwrap();
        assert_eq!(records.len(), 3, "{backend:?}");
        for (turn, record) in t.turns.iter().zip(&records) {
            assert_eq!(record.protocol, backend.protocol());
            assert_eq!(record.status, 200, "{backend:?}: {record:?}");
            assert_eq!(
                turn.usage.output_tokens,
                Some(words(&turn.learner)),
                "{backend:?}"
            );
            assert_eq!(
                (turn.usage.input_tokens, turn.usage.output_tokens),
                (record.usage.input_tokens, record.usage.output_tokens)
            );
        }
        // Turn 3 reads the system prompt, the start marker, two learner turns and two mentor replies.
        let history: u64 = t.turns[..2]
            .iter()
            .map(|turn| words(&turn.learner) + words(&turn.mentor_reply))
            .sum();
        let expected = words(DEFAULT_SYSTEM_PROMPT) + words("(conversation start)") + history;
        assert_eq!(t.turns[2].usage.input_tokens, Some(expected), "{backend:?}");
        assert_eq!(
            budget.output_tokens_spent(),
            LEARNER.iter().map(|l| words(l)).sum::<u64>()
        );
        let model = match backend {
            Backend::Gateway => "studyloop-stub",
            Backend::DirectOpenAi => "gpt-4o-mini",
            Backend::DirectAnthropic => "claude-haiku-4-5",
        };
        assert_eq!(actor.model(), Some(model));
        assert!(
            records.iter().all(|r| r.model.as_deref() == Some(model)),
            "{backend:?}"
        );
    }
}

#[test]
fn anthropic_history_starts_with_a_user_message_on_every_turn() {
    let dir = tempfile::tempdir().unwrap();
    // The stub answers 400 to an assistant-first Messages history, as the real API does.
    let stub = stub(&dir.path().join("stub"), &["--api-key", KEY]);
    let mut actor = Backend::DirectAnthropic.actor(&stub, KEY, Duration::from_secs(10));
    let (t, _) = converse(&mut actor, &mut Budget::new(4, None).unwrap());
    assert_eq!(
        (t.outcome, t.turns.len()),
        (Outcome::BudgetExhausted, 4),
        "{t:?}"
    );
    let turns: Vec<u64> = stub
        .records()
        .unwrap()
        .iter()
        .map(|r| r.user_turns)
        .collect();
    // The start marker plus one mentor reply per earlier turn.
    assert_eq!(turns, [1, 2, 3, 4]);
}

#[test]
fn the_token_cap_stops_before_the_next_turn() {
    for backend in ALL {
        let dir = tempfile::tempdir().unwrap();
        let stub = learner_stub(dir.path(), &[]);
        let mut actor = backend.actor(&stub, KEY, Duration::from_secs(10));
        // Turn 1 spends 3 (< 8), turn 2 spends 8 more (11 >= 8): no third turn.
        let mut budget = Budget::new(10, Some(8)).unwrap();
        let (t, _) = converse(&mut actor, &mut budget);
        assert_eq!(
            (t.outcome, t.turns.len()),
            (Outcome::BudgetExhausted, 2),
            "{backend:?}: {t:?}"
        );
        assert_eq!(budget.output_tokens_spent(), 11);
        assert_eq!(
            stub.records().unwrap().len(),
            2,
            "no request was sent for a turn that could not start"
        );
    }
}

#[test]
fn unknown_usage_is_none_and_never_counts_against_the_token_cap() {
    for backend in ALL {
        let dir = tempfile::tempdir().unwrap();
        let stub = learner_stub(dir.path(), &["--omit-usage"]);
        let mut actor = backend.actor(&stub, KEY, Duration::from_secs(10));
        let mut budget = Budget::new(3, Some(1)).unwrap();
        let (t, _) = converse(&mut actor, &mut budget);
        assert_eq!(
            (t.outcome, t.turns.len()),
            (Outcome::BudgetExhausted, 3),
            "{backend:?}: {t:?}"
        );
        assert!(
            t.turns.iter().all(|turn| turn.usage == Usage::UNKNOWN),
            "{backend:?}: {t:?}"
        );
        assert_eq!(budget.output_tokens_spent(), 0);
    }
}

#[test]
fn faults_end_as_errored_with_the_partial_transcript_kept() {
    let faults: [(&[&str], &str); 4] = [
        (&["--fail-status", "429"], "HTTP 429"),
        (&["--fail-status", "500"], "HTTP 500"),
        (&["--stall-ms", "3000"], "no complete answer within"),
        (&["--truncate-after", "10"], "request to"),
    ];
    for backend in ALL {
        for (flags, needle) in faults {
            let dir = tempfile::tempdir().unwrap();
            let mut args = vec!["--fail-after", "2"];
            args.extend_from_slice(flags);
            let stub = learner_stub(dir.path(), &args);
            let mut actor = backend.actor(&stub, KEY, Duration::from_millis(800));
            let (t, _) = converse(&mut actor, &mut Budget::new(5, None).unwrap());
            assert_eq!(
                (t.outcome, t.turns.len()),
                (Outcome::Errored, 2),
                "{backend:?} {flags:?}: {t:?}"
            );
            let error = t.error.unwrap_or_default();
            assert!(error.contains(needle), "{backend:?} {flags:?}: {error}");
        }
    }
}

#[test]
fn a_wrong_key_is_an_http_401_error() {
    for backend in ALL {
        let dir = tempfile::tempdir().unwrap();
        let stub = learner_stub(dir.path(), &[]);
        let mut actor = backend.actor(&stub, "sk-wrong", Duration::from_secs(10));
        let (t, _) = converse(&mut actor, &mut Budget::new(2, None).unwrap());
        assert_eq!((t.outcome, t.turns.len()), (Outcome::Errored, 0));
        assert!(
            t.error.as_deref().unwrap_or_default().contains("HTTP 401"),
            "{backend:?}: {t:?}"
        );
        assert!(
            !t.error.unwrap_or_default().contains("sk-wrong"),
            "the key never appears in errors"
        );
    }
}

#[test]
fn cancellation_and_mentor_failures_end_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let stub = learner_stub(dir.path(), &[]);
    let mut actor = Backend::Gateway.actor(&stub, KEY, Duration::from_secs(10));
    let cancel = CancelToken::new();
    let mut mentor = CancellingMentor {
        cancel: cancel.clone(),
        after: 2,
        turns: 0,
    };
    let t = actor.converse(&mut mentor, &mut Budget::new(8, None).unwrap(), &cancel);
    assert_eq!((t.outcome, t.turns.len()), (Outcome::Cancelled, 2));

    let mut mentor = FakeMentor::with_steps([FakeStep::Reply("fine".into()), FakeStep::Timeout]);
    let t = actor.converse(
        &mut mentor,
        &mut Budget::new(8, None).unwrap(),
        &CancelToken::new(),
    );
    assert_eq!((t.outcome, t.turns.len()), (Outcome::BudgetExhausted, 1));
    assert!(t.error.unwrap_or_default().contains("no reply within"));

    let mut mentor = FakeMentor::with_steps([FakeStep::Fail("pane died".into())]);
    let t = actor.converse(
        &mut mentor,
        &mut Budget::new(8, None).unwrap(),
        &CancelToken::new(),
    );
    assert_eq!(
        (t.outcome, t.turns.len(), t.error.as_deref()),
        (Outcome::Errored, 0, Some("the mentor failed: pane died"))
    );
}

#[test]
fn judge_calls_spend_from_a_shared_budget_and_stop_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("roles.json");
    std::fs::write(
        &script,
        r#"{"version":1,"judge":["{\"score\":3,\"cites\":[\"turn 1\"]}"]}"#,
    )
    .unwrap();
    let stub = stub(
        &dir.path().join("stub"),
        &[
            "--role",
            "judge",
            "--script",
            script.to_str().unwrap(),
            "--api-key",
            KEY,
        ],
    );
    let env: &[(&str, &str)] = &[
        ("STUDYLOOP_ACC_DIRECT_PROVIDER", "anthropic"),
        ("ANTHROPIC_API_KEY", KEY),
    ];
    let settings = DirectSettings::from_env(env)
        .unwrap()
        .with_base_url(&stub.base_url())
        .unwrap();
    let client = ChatClient::new(settings.endpoint(), Duration::from_secs(10)).unwrap();
    let mut budget = Budget::new(2, None).unwrap();
    let ask = [ChatMessage::user("Grade this transcript.")];
    for _ in 0..2 {
        let answer = client
            .chat_within(&mut budget, "You are a strict judge.", &ask, 300)
            .unwrap();
        assert_eq!(answer.text, r#"{"score":3,"cites":["turn 1"]}"#);
        // Two whitespace-separated words: `{"score":3,"cites":["turn` and `1"]}`.
        assert_eq!(answer.usage.output_tokens, Some(2));
    }
    let err = client
        .chat_within(&mut budget, "You are a strict judge.", &ask, 300)
        .unwrap_err();
    assert!(matches!(err, GuardedChatError::Exhausted(_)), "{err}");
    assert_eq!(stub.records().unwrap().len(), 2);
}

#[test]
fn the_factory_builds_each_http_backend_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let stub = learner_stub(dir.path(), &[]);
    let base = stub.base_url();
    let env: &[(&str, &str)] = &[
        ("LITELLM_BASE_URL", &base),
        ("LITELLM_API_KEY", KEY),
        ("STUDYLOOP_ACC_GATEWAY_MODEL", "alias"),
        ("STUDYLOOP_ACC_DIRECT_PROVIDER", "openrouter"),
        ("STUDYLOOP_ACC_DIRECT_MODEL", "google/gemini-3.5-flash"),
        ("OPENROUTER_API_KEY", KEY),
    ];
    for (kind, model) in [
        (ActorKind::Gateway, "alias"),
        (ActorKind::Direct, "google/gemini-3.5-flash"),
    ] {
        let options = ActorOptions {
            direct_base_url: Some(format!("{base}/v1")),
            ..ActorOptions::default()
        };
        let mut actor = studyloop_actors::build(kind, env, options).unwrap();
        assert_eq!((actor.kind(), actor.model()), (kind, Some(model)));
        let (t, _) = converse(actor.as_mut(), &mut Budget::new(1, None).unwrap());
        assert_eq!(
            (t.outcome, t.turns.len()),
            (Outcome::BudgetExhausted, 1),
            "{kind}: {t:?}"
        );
    }
    let models: Vec<String> = stub
        .records()
        .unwrap()
        .into_iter()
        .filter_map(|r| r.model)
        .collect();
    assert_eq!(models, ["alias", "google/gemini-3.5-flash"]);
}

/// The `max_tokens` of every request the stub logged, in order.
fn max_tokens_sent(stub: &StubProvider) -> Vec<Option<u64>> {
    stub.records()
        .unwrap()
        .iter()
        .map(|r| r.max_tokens)
        .collect()
}

/// The conversation-wide output cap reaches every learner model request: each
/// request's `max_tokens` (as the stub logged it) is the per-turn cap shrunk to
/// what the budget has left, so an honest model cannot overspend it.
#[test]
fn the_output_token_cap_reaches_each_model_request_as_max_tokens() {
    for backend in ALL {
        // 250 left before each of three short turns: the per-turn 200 applies.
        // 10 left, then 10 - 3 = 7; turn 2 spends 8, so no third request.
        for (cap, want) in [
            (250, vec![Some(200), Some(200), Some(200)]),
            (10, vec![Some(10), Some(7)]),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let stub = learner_stub(dir.path(), &[]);
            let mut actor = backend.actor(&stub, KEY, Duration::from_secs(10));
            let mut budget = Budget::new(3, Some(cap)).unwrap();
            let (t, _) = converse(&mut actor, &mut budget);
            assert_eq!(max_tokens_sent(&stub), want, "{backend:?} cap {cap}: {t:?}");
        }
    }
}
