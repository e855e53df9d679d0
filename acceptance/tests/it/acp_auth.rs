//! Issue 16 item 4, hermetically: an ACP adapter that answers a prompt with ACP's
//! `auth_required` error (-32000 "Authentication required") ends the case as the named
//! skip "not logged in: <harness>: …; <fix>" by the case engine's one rule
//! (`case::auth`), not as a lane error; the same error with other words (a quota) stays
//! a failure. The real `studyloop web` relays the error from `studyloop-stub-acp` (a
//! test double) behind `STUDYLOOP_TEST_ACP_CMD`. Before, both ended as failures.

use serde_json::Value;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::Tier;
use studyloop_acceptance::runner::{TrialContext, TrialReport, TrialSpec, run_with_words};
use studyloop_stubs::acp::knobs;

/// A web ACP case whose agent answers every prompt with `error` (a JSON-RPC error).
fn case(ctx: &TrialContext, error: &'static str) -> TrialReport {
    crate::interrupt::stub_acp_case(ctx, "Login", |_| {
        vec![(knobs::STUB_ACP_PROMPT_ERROR, error.to_owned())]
    })
}

#[test]
fn an_acp_auth_required_error_is_the_named_skip_and_other_errors_stay_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut pairs: Vec<(String, String)> = CallerEnv::capture()
        .iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .filter(|(k, _)| !k.starts_with("STUDYLOOP_") && !k.starts_with("NEXTEST"))
        .collect();
    pairs.push(("STUDYLOOP_ACC".into(), "1".into()));
    pairs.push((
        "STUDYLOOP_ACC_RESULTS_DIR".into(),
        run.display().to_string(),
    ));
    let caller = CallerEnv::from_pairs(pairs);
    let code = run_with_words(
        Tier::Acceptance,
        &caller,
        &["acceptance", "web-acp::", "--test-threads", "2"],
        |_| {
            vec![
                TrialSpec::gated("web-acp::codex::auth-required", |ctx| {
                    case(
                        ctx,
                        r#"{"code":-32000,"message":"Authentication required"}"#,
                    )
                }),
                TrialSpec::gated("web-acp::codex::quota", |ctx| {
                    case(ctx, r#"{"code":-32000,"message":"quota exhausted"}"#)
                }),
            ]
        },
    );
    assert_ne!(
        code,
        std::process::ExitCode::SUCCESS,
        "the quota case fails"
    );
    let lines: Vec<Value> = std::fs::read_to_string(run.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |trial: &str| {
        lines
            .iter()
            .find(|l| l["trial"] == trial)
            .unwrap_or_else(|| panic!("no results line for {trial}: {lines:?}"))
            .clone()
    };
    let auth = of("web-acp::codex::auth-required");
    assert_eq!(auth["outcome"], "skipped", "{auth}");
    let reason = auth["message"].as_str().unwrap();
    assert!(
        reason.starts_with("not logged in: codex: ")
            && reason.contains("Authentication required")
            && reason.ends_with("run `codex login` (or set OPENAI_API_KEY)"),
        "{reason}"
    );
    let quota = of("web-acp::codex::quota");
    assert_eq!(quota["outcome"], "failed", "{quota}");
    assert!(
        quota["message"]
            .as_str()
            .unwrap()
            .contains("quota exhausted"),
        "{quota}"
    );
}
