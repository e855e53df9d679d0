//! Issue 34 §1, each item pinned through the public API: what version 2 let through
//! (the before figures, so the corpus proves something) and what version 3 catches.

use crate::common::corpus;

use corpus::{LITERAL_NAME, Rng, SEED};
use studyloop_redaction::{RedactionRules, Redactor};

fn redactor(version: u32) -> Redactor {
    Redactor::new(&RedactionRules::load_shipped(version).unwrap())
}

#[test]
fn the_corpus_finds_what_version_2_missed() {
    // Rules only: the literal encodings and the summary's joined parts are code
    // (`literal.rs`, `joined.rs`), pinned by their own tests.
    let secrets = corpus::secrets(&mut Rng::new(SEED));
    let v2 = redactor(2)
        .with_secret(LITERAL_NAME, corpus::literal(&secrets))
        .unwrap();
    let (survived, cases, names) = corpus::survival(&v2, &secrets);
    let (changed, total, _) = corpus::code_false_positives(&v2);
    println!("v2: survival {survived} of {cases}; code corpus changed {changed} of {total}");
    for kind in [
        "twilio-api-key-sid",
        "sendgrid-key",
        "databricks-token",
        "digitalocean-pat",
        "discord-bot-token",
        "telegram-bot-token",
        "gitlab-pat",
        "google-oauth-client-secret",
        "slack-webhook-url",
        "age-secret-key",
        "shopify-access-token",
        "mailgun-key",
        "pgpass-line",
        "docker-config-auth",
        "openai-key-base64",
        "pgp-private-key-openpgpjs",
        "netrc-line",
        "redis-url-empty-user",
        "jwt-spaced-header",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(kind)),
            "{kind} never survived v2: {names:#?}"
        );
    }
    assert!(
        changed * 100 > total,
        "v2 changed only {changed} of {total}"
    );
}

#[test]
fn a_home_path_in_a_url_query_or_after_a_backtick_is_redacted() {
    let v3 = redactor(3);
    for (text, user) in [
        (
            "Open http://127.0.0.1:8000/open?path=/home/alice/notes.md now",
            "alice",
        ),
        (
            "GET https://files.example.com/dl?f=/Users/bob/report.pdf",
            "bob",
        ),
        ("Run `~/bin/setup.sh` first", "~/"),
    ] {
        let out = v3.redact(text);
        assert!(!out.contains(user), "{user} survived: {out}");
        assert!(redactor(2).redact(text).contains(user), "v2 caught {text}");
    }
    // Web routes stay: the URL's path, its fragment, a redirect parameter, a request line.
    for route in [
        "https://example.com/home/feed",
        "http://localhost:3000/#/home/overview",
        "https://example.com/login?next=/home/settings",
        "GET /home/feed 200 OK",
    ] {
        assert_eq!(v3.redact(route), route);
    }
}
