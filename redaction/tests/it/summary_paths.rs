//! Issue 33 item 5 (mutation testing): a refused summary names each leak once, at the
//! path and part where a reader finds it, including the leaks only the joined reading
//! sees (a value under a name further up, a name/value sibling pair, lines of an
//! array). The whole-text scan that runs last would refuse all of these too, but only
//! as `$`: without the joined scans the error still fails the summary and no longer
//! says where to look, and without the de-duplication the same leak is listed twice.

use serde_json::{Value, json};
use studyloop_redaction::{RedactionError, RedactionRules, redact_summary};

/// `n` characters cycling through `alphabet`, so no secret is written out whole here.
fn body(alphabet: &str, n: usize) -> String {
    alphabet.chars().cycle().take(n).collect()
}

const B62: &str = "Ab3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zaBcDeFgHiJkLmNoPqRsTuVwXyZ";
const B64: &str = "Ab3+dE5/gH7jK9mN1pQ2rS4tU6vW8xY0z";

/// The refusal of `journeys` (an allow-listed key) as its violation lines.
fn violations(journeys: Value) -> Vec<String> {
    let rules = RedactionRules::load_default().unwrap();
    let summary = json!({"run_id": "20260101T000000Z-0123abcd", "journeys": journeys});
    match redact_summary(&summary, &rules) {
        Err(RedactionError::Leak { violations }) => {
            violations.iter().map(ToString::to_string).collect()
        }
        other => panic!("expected a leak, got {other:?}"),
    }
}

#[test]
fn each_leak_is_named_once_at_its_own_path_and_part() {
    let ghp = format!("ghp_{}", body(B62, 36));
    let aws = body(B64, 40);
    let pem = vec![
        "-----BEGIN PRIVATE KEY-----".to_owned(),
        body(B64, 64),
        "-----END PRIVATE KEY-----".to_owned(),
    ];
    for (journeys, want) in [
        // A secret-shaped key: once, as the key (not again as "the value under it").
        (
            json!({ghp.clone(): "passed"}),
            "key at `$.journeys.[SECRET:github-token]` matches `github-token`",
        ),
        // A secret value in a name/value pair: once, at the value (not again at the pair).
        (
            json!({"env": [{"name": "note", "value": ghp.clone()}]}),
            "value at `$.journeys.env[0].value` matches `github-token`",
        ),
        // Found only by reading the pair as `{name: value}`: at the pair.
        (
            json!({"env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": aws.clone()}]}),
            "value at `$.journeys.env[0]` matches `aws-secret-access-key`",
        ),
        // Found only with the name further up: at the value.
        (
            json!({"aws_secret_access_key": {"value": aws.clone()}}),
            "value at `$.journeys.aws_secret_access_key.value` matches `aws-secret-access-key`",
        ),
        // Found only with the array's items read as lines, or as words: at the array.
        (
            json!({ "key": pem }),
            "value at `$.journeys.key` matches `private-key-block`",
        ),
        (
            json!({"header": ["Authorization:", "Bearer", body(B62, 40)]}),
            "value at `$.journeys.header` matches `bearer-token`",
        ),
    ] {
        assert_eq!(violations(journeys.clone()), [want], "{journeys}");
    }
}

#[test]
fn violations_come_in_document_order() {
    // `a` holds a key/value pair that leaks only read together, `b` a token on its own:
    // the error lists them as a reader meets them, `a` first.
    let ghp = format!("ghp_{}", body(B62, 36));
    let journeys = json!({"a": {"aws_secret_access_key": body(B64, 40)}, "b": ghp});
    assert_eq!(
        violations(journeys),
        [
            "value at `$.journeys.a.aws_secret_access_key` matches `aws-secret-access-key`",
            "value at `$.journeys.b` matches `github-token`",
        ]
    );
}
