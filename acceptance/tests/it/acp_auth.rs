//! Issue 16 item 4, hermetically: an ACP adapter that answers a prompt with ACP's
//! `auth_required` error (-32000 "Authentication required") ends the case as the named
//! skip "not logged in: <harness>: …; <fix>" by the case engine's one rule
//! (`case::auth`), not as a lane error; the same error with other words (a quota) stays
//! a failure. The real `studyloop web` relays the error from `studyloop-stub-acp` (a
//! test double) behind `STUDYLOOP_TEST_ACP_CMD`. Before, both ended as failures.

use std::time::Duration;

use serde_json::Value;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::case::{Case, RunDir, StepFailure, Steps, Transport, converse};
use studyloop_acceptance::evidence::{Surface, Tier};
use studyloop_acceptance::runner::{TrialContext, TrialReport, TrialSpec, run_with_words};
use studyloop_acceptance::scratch::TestHatch;
use studyloop_acceptance::selection::HarnessName;
use studyloop_acceptance::web_acp::AcpMentor;
use studyloop_stubs::acp::knobs;

fn err(e: impl std::fmt::Display) -> StepFailure {
    StepFailure::from_error(e)
}

/// A web ACP case whose agent answers every prompt with `error` (a JSON-RPC error).
fn case(ctx: &TrialContext, error: &'static str) -> TrialReport {
    Case::new(ctx, HarnessName::Codex, Surface::WebAcp)
        .run(&RunDir::new(ctx), |c| {
            c.step(
                "scratch world",
                studyloop_acceptance::lane::setup::make_world,
            )?;
            let stub = studyloop_acceptance::bins::path("studyloop-stub-acp").map_err(err)?;
            c.env = std::mem::take(&mut c.env)
                .with_test_hatch(TestHatch::AcpCmd, format!("'{}'", stub.display()))
                .with_var(knobs::STUB_ACP_PROMPT_ERROR, error)
                .map_err(err)?;
            c.step(
                "studyloop web",
                studyloop_acceptance::lane::web_acp::start_server,
            )?;
            c.step("session start and socket", |c| {
                let server = c.server()?;
                let started = server
                    .start_acp_session("Login", "codex", 5, Duration::from_secs(60), |_| {})
                    .map_err(err)?;
                let mentor =
                    AcpMentor::attach(&server.addr, &started.ws_url, Duration::from_secs(60))
                        .map_err(err)?;
                c.slots.put_acp(mentor);
                Ok(())
            })?;
            c.step("conversation", |c| {
                c.with_acp(|c, m| converse(c, Transport::Socket(m)))
                    .map(drop)
            })
        })
        .report()
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
