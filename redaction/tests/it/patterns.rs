//! Each detection pattern in the shipped rules: what it catches, what it leaves alone,
//! and what the rewritten text looks like.

use crate::common;

use common::fake;
use studyloop_redaction::{RedactionRules, Redactor};

fn redactor() -> Redactor {
    Redactor::new(&RedactionRules::load_default().expect("shipped rules"))
}

#[test]
fn every_vendor_key_shape_is_replaced_by_its_placeholder() {
    let r = redactor();
    let cases = [
        ("openai", "[SECRET:openai-key]"),
        ("openai-project", "[SECRET:openai-key]"),
        ("anthropic", "[SECRET:anthropic-key]"),
        ("aws", "[SECRET:aws-access-key-id]"),
        ("aws-temp", "[SECRET:aws-access-key-id]"),
        ("github", "[SECRET:github-token]"),
        ("github-oauth", "[SECRET:github-token]"),
        ("github-server", "[SECRET:github-token]"),
        ("github-pat", "[SECRET:github-token]"),
        ("google", "[SECRET:google-api-key]"),
        ("slack", "[SECRET:slack-token]"),
        ("stripe-secret", "[SECRET:stripe-key]"),
        ("stripe-restricted", "[SECRET:stripe-key]"),
        ("stripe-publishable", "[SECRET:stripe-key]"),
        ("jwt", "[SECRET:jwt]"),
    ];
    for (kind, placeholder) in cases {
        let secret = fake(kind);
        let text = format!("export TOKEN=\"{secret}\" # {kind}");
        let out = r.redact(&text);
        assert_eq!(
            out,
            format!("export TOKEN=\"{placeholder}\" # {kind}"),
            "{kind}"
        );
    }
}

#[test]
fn home_paths_keep_their_tail_but_lose_the_user() {
    let r = redactor();
    let cases = [
        ("cwd=/home/alice/src/app", "cwd=[HOME]/src/app"),
        (
            "open /Users/bob/Library/x.log now",
            "open [HOME]/Library/x.log now",
        ),
        ("\"/root/.config/codex\"", "\"[HOME]/.config/codex\""),
        ("HOME=/root", "HOME=[HOME]"),
        ("see ~/notes/today.md", "see [HOME]/notes/today.md"),
        ("file:///home/carol/a.txt", "file://[HOME]/a.txt"),
        (r"C:\Users\dave\AppData", r"[HOME]\AppData"),
        ("line one\n/home/erin/x", "line one\n[HOME]/x"),
        // Found by the idempotence property: a nested `home` dir inside a home.
        ("/home/alice/home/alice", "[HOME]/home/alice"),
        ("/root/root", "[HOME]/root"),
    ];
    for (input, expected) in cases {
        assert_eq!(r.redact(input), expected, "{input}");
    }
}

#[test]
fn look_alikes_are_left_alone() {
    let r = redactor();
    for clean in [
        "sk-learn is a library",
        "the task-runner flag",
        "/srv/home/shared is not a home dir",
        "/rooted/path and chroot/root-like words",
        "AKIA is a prefix, AKIA123 is too short",
        "xoxb- alone",
        "a~/b is not home-relative",
        "https://example.com:8443/path",
        "https://user@example.com/no-password",
        "eyJ alone is just base64",
    ] {
        assert_eq!(r.redact(clean), clean, "false positive on {clean:?}");
        assert!(r.findings(clean).is_empty(), "{clean}");
    }
}

#[test]
fn contextual_credentials_keep_their_context() {
    let r = redactor();
    let cases = [
        (
            "postgres://app:hunter2hunter2@db.internal:5432/x",
            "postgres://[CREDENTIALS]@db.internal:5432/x",
        ),
        (
            "Authorization: Bearer abc.def-ghi_jkl012",
            "Authorization: Bearer [SECRET:bearer]",
        ),
        ("x-api-key: 0123456789abcdef", "x-api-key: [SECRET:api-key]"),
        (
            "\"my_api_key\": \"zzzzyyyyxxxxwwww\"",
            "\"my_api_key\": \"[SECRET:api-key]\"",
        ),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [SECRET:aws-secret-access-key]",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(r.redact(input), expected, "{input}");
    }
}

#[test]
fn private_key_blocks_are_removed_whole_even_when_truncated() {
    // v1 swallowed everything after a header; v2 (issue 11) stops after the key body, so
    // the text after a truncated key reaches judges. Both versions stay pinned.
    for (version, after_cut) in [(1, ""), (2, "\n(pane scrolled)")] {
        let r = Redactor::new(&RedactionRules::load_shipped(version).unwrap());
        let block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----";
        assert_eq!(
            r.redact(&format!("before\n{block}\nafter")),
            "before\n[SECRET:private-key]\nafter",
            "v{version}"
        );
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n(pane scrolled)";
        assert_eq!(
            r.redact(&format!("x {cut}")),
            format!("x [SECRET:private-key]{after_cut}"),
            "v{version}"
        );
    }
}

#[test]
fn known_secret_values_are_replaced_by_name_whatever_their_shape() {
    let r = redactor()
        .with_secret("STUB_API_KEY", "plain-words-key-123")
        .unwrap()
        .with_secret("LITELLM_API_KEY", "plain-words-key-123-longer")
        .unwrap();
    assert_eq!(
        r.redact("a plain-words-key-123-longer b plain-words-key-123 c"),
        "a [SECRET:LITELLM_API_KEY] b [SECRET:STUB_API_KEY] c"
    );
    let rules: Vec<String> = r
        .findings("plain-words-key-123")
        .into_iter()
        .map(|f| f.rule)
        .collect();
    assert_eq!(rules, ["known-secret:STUB_API_KEY"]);
}

#[test]
fn unusable_secret_values_are_refused_without_echoing_them() {
    let err = redactor().with_secret("FLAG", "1").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("FLAG") && msg.contains("at least 8"), "{msg}");
    let err = redactor()
        .with_secret("bad name", "long-enough-value")
        .unwrap_err();
    assert!(!err.to_string().contains("long-enough-value"), "{err}");
    // "at least 8" means 8 is enough (counted in characters, not bytes): 7 is refused.
    let r = redactor().with_secret("EIGHT", "ééééé-78").unwrap();
    assert_eq!(r.redact("x ééééé-78 y"), "x [SECRET:EIGHT] y");
    let err = redactor().with_secret("SEVEN", "éééé-78").unwrap_err();
    assert!(err.to_string().contains("at least 8"), "{err}");
}

#[test]
fn redaction_is_idempotent_on_its_own_output() {
    let r = redactor();
    let text = format!(
        "{} /home/alice/x ~/y https://u:p4ssw0rd@h {} Bearer abcdefghijklmnop",
        fake("openai"),
        fake("jwt")
    );
    let once = r.redact(&text);
    assert_eq!(r.redact(&once), once);
    assert!(r.findings(&once).is_empty(), "{once}");
    // Drawn once by the stability property below: the first `[HOME]` eats the scheme of
    // the URL that kept the second home path, so a single pass was not stable.
    let glued = "/home/alicehttps://u:pw@h~//home/alice";
    let once = r.redact(glued);
    assert_eq!(r.redact(&once), once);
    assert!(r.findings(&once).is_empty(), "{once}");
}

mod properties {
    use proptest::prelude::*;

    use super::{fake, redactor};

    /// Fragments that exercise every rule plus the delimiters the rules key on.
    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(fake("openai")),
            Just(fake("anthropic")),
            Just(fake("aws")),
            Just(fake("github")),
            Just(fake("jwt")),
            Just(fake("slack")),
            Just("/home/alice".to_owned()),
            Just("/root".to_owned()),
            Just("~/".to_owned()),
            Just("https://u:pw@h".to_owned()),
            Just("Bearer ".to_owned()),
            Just("api_key=".to_owned()),
            Just("-----BEGIN PRIVATE KEY-----".to_owned()),
            "[ -~\n]{0,12}",
        ]
    }

    proptest! {
        // Failures are shrunk and reported, not persisted into the source tree; pinned
        // regressions live as ordinary cases in `home_paths_keep_their_tail_but_lose_the_user`.
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn redacted_text_is_clean_and_stable(parts in prop::collection::vec(fragment(), 0..12)) {
            let r = redactor();
            let once = r.redact(&parts.concat());
            prop_assert!(r.findings(&once).is_empty(), "findings left in {once:?}");
            prop_assert_eq!(r.redact(&once), once);
        }
    }
}
