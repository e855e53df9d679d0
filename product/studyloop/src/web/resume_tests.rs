//! The web resume door end to end (hermetic, on the start tests' world): a
//! session on a topic logs a struggle, a win and a parked question and ends;
//! a start with `"resume": true` on the same topic carries those notes into
//! the persona under "Resuming Previous Session", headed by when the last
//! session ended. Before the door existed `resume` was ignored and the
//! persona had no resume section.

use serde_json::json;

use super::start_tests::world;
use crate::feeds::{self, TopicStatus};

#[test]
fn a_resumed_start_carries_the_last_sessions_struggle_into_the_persona() {
    let w = world(&[]);
    w.rt.block_on(async {
        let start = json!({"topic": "Rust lifetimes", "agent": "codex", "transport": "acp"});
        let (status, first) = w.start(start.clone()).await;
        assert_eq!(status, 201, "{first}");
        let persona = first["persona_text"].as_str().expect("persona");
        assert!(!persona.contains("Resuming Previous Session"), "{persona}");
        assert_eq!(first["resumed"], false);
        let paths = crate::settings::session_paths(&w.state.ctx.env).expect("paths");
        let struggle = "why a returned reference needs the input's lifetime";
        feeds::append_topic(
            &paths,
            "09:00",
            "elision",
            TopicStatus::Struggling,
            struggle,
        )
        .expect("topic");
        feeds::append_topic(
            &paths,
            "09:05",
            "borrowing",
            TopicStatus::Win,
            "explained &mut",
        )
        .expect("topic");
        feeds::append_parked(&paths, "What does 'static really promise?").expect("park");
        let (status, ended) = w.http("POST", "/api/session/end", None).await;
        assert_eq!(status, 200, "{ended}");

        let mut resume = start.clone();
        resume["resume"] = json!(true);
        resume["topic"] = json!("rust LIFETIMES");
        let (status, body) = w.start(resume).await;
        assert_eq!(status, 201, "{body}");
        // The console shows a resumed session's opening reply (the review).
        assert_eq!(body["resumed"], true);
        let persona = body["persona_text"].as_str().expect("persona");
        for needle in [
            "## Resuming Previous Session",
            "Last session on this topic ended ",
            "(earlier today)",
            "Struggling:\n- elision: why a returned reference",
            "Parked:\n- What does 'static really promise?",
        ] {
            assert!(persona.contains(needle), "{needle} missing: {persona}");
        }
        w.http("POST", "/api/session/end", None).await;
    });
}

#[test]
fn resume_without_a_past_session_or_with_a_non_boolean_is_refused_by_name() {
    let w = world(&[]);
    w.rt.block_on(async {
        let (status, body) = w
            .start(json!({"topic": "Never studied", "agent": "codex", "transport": "acp", "resume": true}))
            .await;
        assert_eq!(status, 404, "{body}");
        let e = body["error"]["message"].as_str().unwrap_or_default();
        assert!(e.contains("`Never studied`") && e.contains("without resume"), "{e}");
        // The refused start left the slot free.
        let (status, body) = w
            .start(json!({"topic": "x", "agent": "codex", "transport": "acp", "resume": "yes"}))
            .await;
        assert_eq!(status, 422, "{body}");
        let e = body["error"]["message"].as_str().unwrap_or_default();
        assert!(e.contains("resume `\"yes\"`") && e.contains("true or false"), "{e}");
        let (status, body) = w
            .start(json!({"topic": "x", "agent": "codex", "transport": "acp"}))
            .await;
        assert_eq!(status, 201, "{body}");
        w.http("POST", "/api/session/end", None).await;
    });
}
