//! Issue 11 §4, measured: every vendor kind planted in every context (plain, JSON-escaped,
//! URL, split lines, key-only) must not survive the current rules, and the prose corpus
//! (200+ ordinary sentences, technical ones included) must come out unchanged. Version 1's
//! figures are computed too, so the test proves the corpus finds what version 1 missed.

use crate::common::corpus;

use corpus::{CONTEXTS, LITERAL_NAME, Rng, SEED, Secret};
use studyloop_redaction::{RedactionRules, Redactor};

fn redactor(rules: &RedactionRules, secrets: &[Secret]) -> Redactor {
    Redactor::new(rules)
        .with_secret(LITERAL_NAME, corpus::literal(secrets))
        .expect("the literal secret is long enough")
}

#[test]
fn no_planted_secret_survives_the_current_rules_in_any_context() {
    let rules = RedactionRules::load_default().unwrap();
    // Several seeds, so a pass does not hang on one lucky draw.
    for seed in [SEED, 1, 2, 3, 0xdead_beef] {
        let secrets = corpus::secrets(&mut Rng::new(seed));
        let (survived, cases, names) = corpus::survival(&redactor(&rules, &secrets), &secrets);
        println!(
            "seed {seed:#x}: v{} survival {survived} of {cases} planted cases",
            rules.version()
        );
        // Every context but `encoded` (the literal secret only) plants each kind.
        assert!(cases >= secrets.len() * (CONTEXTS.len() - 1), "{cases}");
        assert_eq!(survived, 0, "survivors with seed {seed:#x}: {names:#?}");
    }
}

/// Issue 34 (rules v4): a redacted case is clean and stays as it is on a second look,
/// for every kind in every text context (v3's `pgpass-line` matched its own placeholder).
#[test]
fn every_redacted_case_is_stable() {
    let rules = RedactionRules::load_default().unwrap();
    let secrets = corpus::secrets(&mut Rng::new(SEED));
    let (unstable, cases, names) = corpus::unstable(&redactor(&rules, &secrets), &secrets);
    println!(
        "v{}: {unstable} of {cases} redacted cases unstable",
        rules.version()
    );
    assert!(cases >= secrets.len() * (CONTEXTS.len() - 2), "{cases}");
    assert_eq!(unstable, 0, "unstable: {names:#?}");
}

#[test]
fn the_prose_corpus_comes_out_unchanged() {
    let rules = RedactionRules::load_default().unwrap();
    let secrets = corpus::secrets(&mut Rng::new(SEED));
    let (changed, total, which) = corpus::false_positives(&redactor(&rules, &secrets));
    println!(
        "v{}: {changed} of {total} sentences changed",
        rules.version()
    );
    assert!(
        total >= 200,
        "the prose corpus needs 200+ sentences, has {total}"
    );
    assert_eq!(changed, 0, "false positives: {which:#?}");
}

/// Issue 34: at most 1% of a realistic code-and-prose corpus (Rust and Python code,
/// shell, logs, git hashes, UUIDs, sha256 digests, base64 images, URLs) may change.
#[test]
fn at_most_one_percent_of_the_code_corpus_changes() {
    let rules = RedactionRules::load_default().unwrap();
    let secrets = corpus::secrets(&mut Rng::new(SEED));
    let (changed, total, which) = corpus::code_false_positives(&redactor(&rules, &secrets));
    println!(
        "v{}: {changed} of {total} code-and-prose lines changed",
        rules.version()
    );
    assert!(
        total >= 300,
        "the code corpus needs 300+ lines, has {total}"
    );
    assert!(
        changed * 100 <= total,
        "{changed} of {total} lines changed: {which:#?}"
    );
}

#[test]
fn the_corpus_finds_what_version_1_missed() {
    // The before figures. If version 1 passed both, the corpus would prove nothing. (The
    // literal caller secret is code, not rules: `literal.rs` and `regressions.rs` pin it.)
    let v1 = RedactionRules::load_shipped(1).unwrap();
    let secrets = corpus::secrets(&mut Rng::new(SEED));
    let r = redactor(&v1, &secrets);
    let (survived, cases, names) = corpus::survival(&r, &secrets);
    let (changed, total, _) = corpus::false_positives(&r);
    println!("v1: survival {survived} of {cases}; prose changed {changed} of {total}");
    for kind in [
        "npm-token",
        "azure-storage-account-key",
        "gcp-private-key-id",
        "jwt-opaque-payload",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(kind)),
            "{kind} never survived v1: {names:#?}"
        );
    }
    assert!(changed > 0);
}
