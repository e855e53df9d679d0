//! The rules loader: the shipped file loads, and every way a rules file can be wrong is
//! refused by name (format, unregistered version, tampered bytes).

use std::path::Path;

use studyloop_redaction::{
    CURRENT_VERSION, DEFAULT_RULES_FILE, PinError, RedactionError, RedactionRules, pinned,
};

const RULES: &[u8] = include_bytes!("../../rules_v1.yaml");
const RULES_V4: &[u8] = include_bytes!("../../rules_v4.yaml");

fn registry_for(bytes: &[u8], version: u32) -> String {
    format!("{{\"{version}\": \"{}\"}}", pinned::digest(bytes))
}

fn load(bytes: &[u8], registry: &str) -> Result<RedactionRules, RedactionError> {
    RedactionRules::from_bytes(
        "rules_test.yaml",
        bytes,
        "registry.json",
        registry.as_bytes(),
    )
}

#[test]
fn shipped_rules_load_and_cover_every_required_shape() {
    let rules = RedactionRules::load_default().expect("shipped rules match their pin");
    assert_eq!((rules.version(), CURRENT_VERSION), (4, 4));
    assert_eq!(DEFAULT_RULES_FILE, "rules_v4.yaml");
    assert_eq!(rules.sha256(), pinned::digest(RULES_V4));
    let ids: Vec<&str> = rules.patterns().iter().map(|p| p.id()).collect();
    for required in [
        "home-path",
        "root-home",
        "tilde-home",
        "openai-key",
        "anthropic-key",
        "aws-access-key-id",
        "github-token",
        "github-fine-grained-token",
        "google-api-key",
        "slack-token",
        "stripe-key",
        "jwt",
        "url-credentials",
        "private-key-block",
        "private-key-truncated",
        "npm-token",
        "azure-storage-key",
        "gcp-private-key-id",
        "secret-assignment",
        "vendor-token",
        "twilio-api-key",
        "webhook-url",
        "discord-bot-token",
        "telegram-bot-token",
        "base64-wrapped-key",
        "docker-auth",
        "netrc-password",
        "pgpass-line",
    ] {
        assert!(
            ids.contains(&required),
            "missing pattern {required}: {ids:?}"
        );
    }
    // What `studyloop check` prints beside a pattern's id: the file's one line on it.
    let block = &rules.patterns()[ids.iter().position(|i| *i == "private-key-block").unwrap()];
    assert!(
        block
            .description()
            .starts_with("PEM private key block up to its END line;"),
        "{}",
        block.description()
    );
    for p in rules.patterns() {
        assert!(
            p.description().len() > 8,
            "{}: {:?}",
            p.id(),
            p.description()
        );
    }
    for field in ["run_id", "private_bundle_digest", "per_criterion_scores"] {
        assert!(rules.allowed_fields().contains(field), "{field}");
    }
    for raw in ["transcript", "screenshots", "absolute_bundle_path"] {
        assert!(
            !rules.allowed_fields().contains(raw),
            "{raw} must not be shareable"
        );
    }
}

#[test]
fn the_superseded_v1_stays_registered_and_loadable() {
    let v1 = RedactionRules::load_shipped(1).expect("v1 stays registered");
    assert_eq!(v1.version(), 1);
    assert_eq!(v1.sha256(), pinned::digest(RULES));
    let v1_ids: Vec<&str> = v1.patterns().iter().map(|p| p.id()).collect();
    assert!(
        !v1_ids.contains(&"npm-token"),
        "v1 is the text it was released as"
    );
    let err = RedactionRules::load_shipped(9).unwrap_err();
    assert!(
        matches!(err, RedactionError::UnknownVersion { version: 9, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("shipped: 1, 2"), "{err}");
}

#[test]
fn load_from_disk_matches_the_embedded_copy() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = RedactionRules::load(&dir.join(DEFAULT_RULES_FILE), &dir.join("registry.json"))
        .expect("load from disk");
    assert_eq!(
        rules.sha256(),
        RedactionRules::load_default().unwrap().sha256()
    );
}

#[test]
fn crlf_checkout_hashes_like_the_committed_file() {
    let crlf = String::from_utf8(RULES.to_vec())
        .unwrap()
        .replace('\n', "\r\n");
    let registry = registry_for(RULES, 1);
    assert!(load(crlf.as_bytes(), &registry).is_ok());
}

#[test]
fn an_in_place_edit_is_tampered_naming_both_hashes() {
    let mut edited = RULES.to_vec();
    edited.extend_from_slice(b"# harmless-looking comment\n");
    let err = load(&edited, &registry_for(RULES, 1)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RedactionError::Pin(PinError::Tampered { .. })),
        "{msg}"
    );
    assert!(msg.contains("rules_test.yaml"), "{msg}");
    assert!(msg.contains(&pinned::digest(RULES)), "{msg}");
    assert!(msg.contains(&pinned::digest(&edited)), "{msg}");
    assert!(msg.contains("version bump"), "{msg}");
}

#[test]
fn an_edit_that_breaks_the_schema_is_still_reported_as_tampered() {
    // The pin is checked before the strict parse, so the report names the real problem.
    let text = String::from_utf8(RULES.to_vec()).unwrap() + "surprise_field: 1\n";
    let err = load(text.as_bytes(), &registry_for(RULES, 1)).unwrap_err();
    assert!(
        matches!(err, RedactionError::Pin(PinError::Tampered { .. })),
        "{err}"
    );
}

#[test]
fn an_unregistered_version_names_the_registered_ones() {
    let text = String::from_utf8(RULES.to_vec())
        .unwrap()
        .replace("\nversion: 1\n", "\nversion: 2\n");
    let err = load(text.as_bytes(), &registry_for(RULES, 1)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            RedactionError::Pin(PinError::Unregistered { version: 2, .. })
        ),
        "{msg}"
    );
    assert!(msg.contains("registered: 1"), "{msg}");
}

#[test]
fn malformed_files_are_format_errors_naming_the_file() {
    let cases: [(&str, &str); 13] = [
        ("allowed_fields: [a]\npatterns: []\n", "version"),
        ("version: 1\nallowed_fields: [a]\n", "patterns"),
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: x, description: d, regex: '(', placeholder: '[X]'}\n",
            "does not compile",
        ),
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: x, description: d, regex: 'a', placeholder: '[X]', extra: 1}\n",
            "extra",
        ),
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: x, description: d, regex: 'X', placeholder: '[X]'}\n",
            "itself matched",
        ),
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: x, description: d, regex: '(?P<other>a)', placeholder: '[X]'}\n",
            "only named group",
        ),
        // Issue 33 item 5 (surviving mutants): each rule on ids and allowed fields.
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: Bad_Id, description: d, regex: 'a', placeholder: '[X]'}\n",
            "pattern id `Bad_Id` must be non-empty lowercase",
        ),
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: '', description: d, regex: 'a', placeholder: '[X]'}\n",
            "pattern id `` must be non-empty",
        ),
        (
            "version: 1\nallowed_fields: [' a']\npatterns: []\n",
            "allowed field ` a` is blank or padded",
        ),
        (
            "version: 1\nallowed_fields: ['a ']\npatterns: []\n",
            "allowed field `a ` is blank or padded",
        ),
        (
            "version: 1\nallowed_fields: [a, a]\npatterns: []\n",
            "allowed field `a` appears twice",
        ),
        (
            "version: 1\nallowed_fields: []\npatterns: []\n",
            "`allowed_fields` is empty",
        ),
        (
            "version: 1\nallowed_fields: [a]\npatterns:\n  - {id: x, description: d, regex: 'a', placeholder: ''}\n",
            "pattern `x` has an empty placeholder",
        ),
    ];
    for (text, needle) in cases {
        let err = load(text.as_bytes(), &registry_for(text.as_bytes(), 1)).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("rules_test.yaml") && msg.contains(needle),
            "expected `{needle}` in: {msg}"
        );
    }
}

#[test]
fn a_fifo_in_place_of_the_rules_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("rules.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let registry = Path::new(env!("CARGO_MANIFEST_DIR")).join("registry.json");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(RedactionRules::load(&fifo, &registry).map(|_| ())));
    let err = rx
        .recv_timeout(std::time::Duration::from_secs(1))
        .expect("RedactionRules::load blocked on a FIFO")
        .unwrap_err();
    assert!(err.to_string().contains("a FIFO"), "{err}");
}

#[test]
fn unreadable_paths_are_named() {
    let err = RedactionRules::load(Path::new("no/such/rules.yaml"), Path::new("no/such.json"))
        .unwrap_err();
    assert!(err.to_string().contains("no/such/rules.yaml"), "{err}");
}
