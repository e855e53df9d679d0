//! Issue 11, each item pinned by a test named after it, through the public API only (so
//! each one runs, and fails, against the code before the fix). Secret-shaped values are
//! assembled from parts at run time.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use studyloop_redaction::pinned::{PinnedFile, digest};
use studyloop_redaction::{PinError, RedactionRules, Redactor, redact_summary, yaml};

fn redactor() -> Redactor {
    Redactor::new(&RedactionRules::load_default().expect("shipped rules"))
}

/// `n` characters cycling through `alphabet`, offset so different calls differ.
fn body(alphabet: &str, n: usize, offset: usize) -> String {
    alphabet.chars().cycle().skip(offset).take(n).collect()
}

const B62: &str = "Ab3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zaBcDeFgHiJkLmNoPqRsTuVwXyZ";
const B64: &str = "Ab3+dE5/gH7jK9mN1pQ2rS4tU6vW8xY0z";
const HEX: &str = "0a1b2c3d4e5f6789";

fn escaped(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

#[test]
fn issue11_npm_azure_gcp_and_opaque_payload_jwts_are_redacted() {
    let r = redactor();
    let npm = format!("{}_{}", "npm", body(B62, 36, 1));
    let azure = format!("{}==", body(B64, 86, 2));
    let gcp_id = body(HEX, 40, 3);
    let jwt = format!(
        "{}{}.{}.{}",
        "eyJ",
        body(B62, 20, 4),
        body(B62, 60, 5),
        body(B62, 43, 6)
    );
    for (text, secret) in [
        (format!("//registry.npmjs.org/:_authToken={npm}"), &npm),
        (
            format!(
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={azure};EndpointSuffix=core.windows.net"
            ),
            &azure,
        ),
        (
            json!({"type": "service_account", "private_key_id": gcp_id}).to_string(),
            &gcp_id,
        ),
        (format!("cookie: session={jwt}; Path=/"), &jwt),
    ] {
        let out = r.redact(&text);
        assert!(!out.contains(secret.as_str()), "survived: {out}");
        assert!(!out.contains(&secret[..16]), "part survived: {out}");
    }
}

#[test]
fn issue11_context_patterns_work_on_escaped_json() {
    let r = redactor();
    let aws = body(B64, 40, 7);
    let api = body(HEX, 32, 8);
    for (name, value) in [("aws_secret_access_key", &aws), ("api_key", &api)] {
        let once = json!({ name: value }).to_string();
        for text in [escaped(&once), escaped(&escaped(&once))] {
            let out = r.redact(&text);
            assert!(!out.contains(value.as_str()), "{name} survived in {out}");
        }
    }
}

#[test]
fn issue11_a_literal_secret_with_quotes_and_backslashes_is_found_escaped() {
    let value = format!("pa\"ss\\wo/rd-{}", body(B62, 10, 9));
    let r = redactor().with_secret("CALLER_SECRET", &value).unwrap();
    let line = json!({"learner": format!("my password is {value}")}).to_string();
    for text in [line.clone(), escaped(&line), escaped(&escaped(&line))] {
        let out = r.redact(&text);
        assert!(
            out.contains("[SECRET:CALLER_SECRET]"),
            "not found in {text}: {out}"
        );
        assert!(!out.contains(&value[9..]), "survived: {out}");
    }
}

#[test]
fn issue11_the_summary_scans_a_key_and_its_value_together() {
    let rules = RedactionRules::load_default().unwrap();
    let aws = body(B64, 40, 10);
    let summary = json!({
        "run_id": "20260101T000000Z-0123abcd",
        "journeys": {"journey::smoke": {"aws_secret_access_key": aws}},
    });
    let err = redact_summary(&summary, &rules).expect_err("the pair leaks a secret");
    assert!(!err.to_string().contains(&aws), "{err}");
    assert!(err.to_string().contains("aws_secret_access_key"), "{err}");
    // A secret-shaped key is refused on its own, and its path never shows it.
    let npm = format!("{}_{}", "npm", body(B62, 36, 11));
    let summary = json!({"journeys": {npm.clone(): "passed"}});
    let err = redact_summary(&summary, &rules).expect_err("the key is a secret");
    assert!(!err.to_string().contains(&npm), "{err}");
}

#[test]
fn issue11_ordinary_sentences_reach_judges_unchanged() {
    let r = redactor();
    for clean in [
        "The bearer authentication scheme sends a token in a header.",
        "She was the bearer of bad news about the exam timetable.",
        "Open https://example.com/home/dashboard after you sign in.",
        "The login page redirects to https://example.com/login?next=/home/settings by default.",
        "We wrote up the /root-cause of the outage on Friday.",
        "The sk-learn-compatible estimators follow the fit and predict convention.",
        "Set API_KEY=your-key-goes-here in .env before you start.",
        "A key file starts with -----BEGIN RSA PRIVATE KEY----- and nothing after this must go.",
    ] {
        assert_eq!(r.redact(clean), clean, "garbled");
        assert_eq!(r.redact(&escaped(clean)), escaped(clean), "garbled escaped");
    }
}

#[test]
fn issue11_a_pem_block_needs_its_end_line_and_a_truncated_one_its_body() {
    let r = redactor();
    let lines: Vec<String> = (0..4).map(|i| body(B64, 64, i)).collect();
    let block = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
        lines.join("\n")
    );
    let text =
        format!("see -----BEGIN PRIVATE KEY----- in the docs.\n{block}\nThe end of the note.");
    assert_eq!(
        r.redact(&text),
        "see -----BEGIN PRIVATE KEY----- in the docs.\n[SECRET:private-key]\nThe end of the note."
    );
    let cut = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n{}\n(pane scrolled)",
        lines[0], lines[1]
    );
    assert_eq!(r.redact(&cut), "[SECRET:private-key]\n(pane scrolled)");
    // In JSON (a GCP service-account file) the line breaks are escaped.
    let json = json!({"private_key": block}).to_string();
    assert_eq!(r.redact(&json), r#"{"private_key":"[SECRET:private-key]"}"#);
}

#[test]
fn issue11_a_registry_that_names_a_version_twice_is_refused() {
    let (released, edited) = (b"v: 1\n".as_slice(), b"v: 1 # edited\n".as_slice());
    let registry = format!(
        "{{\"1\": \"{}\",\n \"1\": \"{}\"}}",
        digest(released),
        digest(edited)
    );
    let err = PinnedFile {
        file: "thing_v1.yaml",
        version: 1,
        bytes: edited,
        registry: "thing_registry.json",
        registry_bytes: registry.as_bytes(),
    }
    .verify()
    .expect_err("a duplicate version must not replace the released digest");
    let msg = err.to_string();
    assert!(
        msg.contains("thing_registry.json") && msg.contains("`1`"),
        "{msg}"
    );
    assert!(!matches!(err, PinError::Tampered { .. }), "{msg}");
}

#[test]
fn issue11_a_pinned_yaml_key_spelt_twice_is_refused() {
    #[derive(Debug, serde::Deserialize)]
    #[expect(dead_code, reason = "only whether parsing succeeds matters")]
    struct Doc {
        anchors: BTreeMap<u8, String>,
    }
    for text in [
        "anchors:\n  1: strict\n  '1': lenient\n",
        "anchors:\n  1: strict\n  \"1\": lenient\n",
    ] {
        let err = yaml::parse::<Doc>(text).expect_err("last-wins would drop a line");
        assert!(err.detail.contains("duplicate key `1`"), "{err}");
    }
}
