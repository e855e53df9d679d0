//! The canary: one secret of every shape planted across a full private bundle (env file,
//! config, transcript, pane capture, request log). None may survive the Redactor on free
//! text, and none may reach a redacted summary, whether it sits in an allow-listed field
//! (refused, listing every violation) or in a dropped one (never copied).

use crate::common;

use std::collections::BTreeMap;
use std::fs;

use serde_json::{Value, json};
use studyloop_redaction::{RedactionError, RedactionRules, Redactor, redact_summary};

/// Every planted secret, with the rule id expected to catch it.
fn canaries() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = [
        ("openai-key", "openai"),
        ("openai-key", "openai-project"),
        ("anthropic-key", "anthropic"),
        ("aws-access-key-id", "aws"),
        ("aws-access-key-id", "aws-temp"),
        ("github-token", "github"),
        ("github-token", "github-oauth"),
        ("github-token", "github-server"),
        ("github-fine-grained-token", "github-pat"),
        ("google-api-key", "google"),
        ("slack-token", "slack"),
        ("stripe-key", "stripe-secret"),
        ("stripe-key", "stripe-restricted"),
        ("stripe-key", "stripe-publishable"),
        ("jwt", "jwt"),
    ]
    .into_iter()
    .map(|(rule, kind)| (rule, common::fake(kind)))
    .collect();
    out.extend([
        ("home-path", "/home/canary-linux-user".to_owned()),
        ("home-path", "/Users/canary-mac-user".to_owned()),
        ("url-credentials", "canary-user:canary-pass-77".to_owned()),
        (
            "private-key-block",
            "-----BEGIN PRIVATE KEY-----\nQ0FOQVJZLUtFWS1NQVRFUklBTA==\n-----END PRIVATE KEY-----"
                .to_owned(),
        ),
        (
            "known-secret:CANARY_ENV_SECRET",
            "canary-env-value-that-has-no-shape".to_owned(),
        ),
    ]);
    out
}

/// Writes a bundle-shaped tree with the canaries scattered across its files.
fn plant(dir: &std::path::Path) -> BTreeMap<&'static str, String> {
    let c: Vec<String> = canaries().into_iter().map(|(_, s)| s).collect();
    let mut files = BTreeMap::new();
    files.insert(
        "env.txt",
        format!(
            "OPENAI_API_KEY={}\nOPENAI_PROJECT_KEY={}\nANTHROPIC_API_KEY={}\nAWS_ACCESS_KEY_ID={}\nAWS_SESSION={}\nCANARY_ENV_SECRET={}\nHOME={}\n",
            c[0], c[1], c[2], c[3], c[4], c[19], c[15]
        ),
    );
    files.insert(
        "config.yaml",
        format!(
            "github_token: {}\noauth: {}\nserver: {}\npat: {}\ngoogle: {}\ndatabase: postgres://{}@db:5432/app\nworkdir: {}/study\n",
            c[5], c[6], c[7], c[8], c[9], c[17], c[16]
        ),
    );
    files.insert(
        "transcript.jsonl",
        serde_json::to_string(&json!({
            "learner": format!("my slack token is {} and my stripe key is {}", c[10], c[11]),
            "mentor": format!("never paste {} or {} into chat", c[12], c[13]),
        }))
        .unwrap()
            + "\n",
    );
    files.insert(
        "pane.txt",
        format!("$ cat id\n{}\n$ echo {}\n", c[18], c[14]),
    );
    files.insert(
        "requests.jsonl",
        serde_json::to_string(&json!({
            "path": "/v1/chat/completions",
            "headers": {"authorization": format!("Bearer {}", c[0])},
            "body": format!("session token {} home {}/x", c[14], c[15]),
        }))
        .unwrap()
            + "\n",
    );
    for (name, text) in &files {
        fs::write(dir.join(name), text).unwrap();
    }
    files
}

fn redactor(rules: &RedactionRules) -> Redactor {
    Redactor::new(rules)
        .with_secret("CANARY_ENV_SECRET", "canary-env-value-that-has-no-shape")
        .unwrap()
}

#[test]
fn no_canary_survives_the_redactor_in_any_bundle_file() {
    let rules = RedactionRules::load_default().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let planted = plant(tmp.path());
    let r = redactor(&rules);
    let mut all = String::new();
    for name in planted.keys() {
        let text = fs::read_to_string(tmp.path().join(name)).unwrap();
        let out = r.redact(&text);
        for (rule, secret) in canaries() {
            assert!(
                !out.contains(&secret),
                "{rule} canary survived in {name}:\n{out}"
            );
        }
        assert!(
            r.findings(&out).is_empty(),
            "{name} still has findings: {out}"
        );
        all.push_str(&text);
    }
    let found: Vec<String> = r.findings(&all).into_iter().map(|f| f.rule).collect();
    for (rule, _) in canaries() {
        assert!(
            found.iter().any(|f| f == rule),
            "{rule} never reported: {found:?}"
        );
    }
}

#[test]
fn a_summary_carrying_the_bundle_is_refused_with_every_violation_listed() {
    let rules = RedactionRules::load_default().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let planted = plant(tmp.path());
    // The worst case: someone copies raw files into allow-listed fields, one per key and
    // one as a key itself, nested inside maps and arrays.
    let mut journeys = serde_json::Map::new();
    for (name, text) in &planted {
        journeys.insert((*name).to_owned(), json!({"evidence": [text]}));
    }
    journeys.insert(canaries()[0].1.clone(), json!("passed"));
    let summary = json!({
        "run_id": "20260101T000000Z-0123abcd",
        "journeys": journeys,
        "arbitration_note": planted["transcript.jsonl"],
        "transcript": planted["transcript.jsonl"],
    });
    let err = redactor(&rules).summary(&summary).unwrap_err();
    let RedactionError::Leak { violations } = &err else {
        panic!("expected a leak error, got {err}");
    };
    let msg = err.to_string();
    for (rule, secret) in canaries() {
        assert!(
            violations.iter().any(|v| v.rule == rule),
            "{rule} not listed: {msg}"
        );
        assert!(
            !msg.contains(&secret),
            "the error repeats the {rule} secret: {msg}"
        );
    }
    assert!(
        violations
            .iter()
            .any(|v| v.part == studyloop_redaction::Part::Key),
        "the leaking key is not reported: {msg}"
    );
    // Without the literal secret the pattern rules still refuse it.
    assert!(redact_summary(&summary, &rules).is_err());
}

#[test]
fn dropped_fields_never_reach_the_summary_and_a_clean_one_passes_unchanged() {
    let rules = RedactionRules::load_default().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let planted = plant(tmp.path());
    let summary = json!({
        "run_id": "20260101T000000Z-0123abcd",
        "verdict": "PASS",
        "journeys": {"journey_smoke": {"outcome": "passed", "required": true}},
        "transcript": planted["transcript.jsonl"],
        "pane": planted["pane.txt"],
        "absolute_bundle_path": "/home/canary-linux-user/.local/share/studyloop/uat/x",
    });
    let kept = redact_summary(&summary, &rules).expect("allow-listed fields are clean");
    assert_eq!(
        kept.keys().map(String::as_str).collect::<Vec<_>>(),
        ["journeys", "run_id", "verdict"]
    );
    let text = Value::Object(kept).to_string();
    for (rule, secret) in canaries() {
        assert!(!text.contains(&secret), "{rule} reached the summary");
    }
}

#[test]
fn a_summary_must_be_an_object() {
    let rules = RedactionRules::load_default().unwrap();
    let err = redact_summary(&json!(["run_id"]), &rules).unwrap_err();
    assert!(err.to_string().contains("an array"), "{err}");
}
