//! Issue 33 §2, signing: `studyloop-uat keygen`, `sign RUN_DIR --key` and `verify
//! --signed RUN_DIR --pubkey`, run as the real binary over a genuine sign-off input
//! (the crafted corpus's [`World`]) and then broken one way at a time: a seat reply
//! rewritten by hand, one manifest byte, the verdict, the signed record, another key.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use studyloop_uat::bundle::Bundle;
use studyloop_uat::signing::{PRIVATE_KEY_FILE, PUBLIC_KEY_FILE, SIGNATURE_FILE};

use crate::common::good_reply;
use crate::common::uat;
use crate::common::world::{SMOKE, World, chmod, fifo};

fn run(w: &World, args: &[&OsStr]) -> (Option<i32>, String) {
    let output: Output = uat(args, w.tmp.path());
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

/// A new key pair in `<tmp>/<name>`; returns (private, public).
fn keygen(w: &World, name: &str) -> (PathBuf, PathBuf) {
    let dir = w.path(name);
    let (code, text) = run(w, &["keygen".as_ref(), "--out".as_ref(), dir.as_os_str()]);
    assert_eq!(code, Some(0), "{text}");
    (dir.join(PRIVATE_KEY_FILE), dir.join(PUBLIC_KEY_FILE))
}

fn sign(w: &World, key: &Path) -> (Option<i32>, String) {
    run(
        w,
        &[
            "sign".as_ref(),
            w.run.dir().as_os_str(),
            "--key".as_ref(),
            key.as_os_str(),
        ],
    )
}

fn verify(w: &World, pubkey: &Path) -> (Option<i32>, String) {
    run(
        w,
        &[
            "verify".as_ref(),
            "--signed".as_ref(),
            w.run.dir().as_os_str(),
            "--pubkey".as_ref(),
            pubkey.as_os_str(),
        ],
    )
}

/// A genuine run, signed by a fresh key; returns the world and (private, public).
fn signed() -> (World, PathBuf, PathBuf) {
    let w = World::new();
    let (private, public) = keygen(&w, "keys");
    let (code, text) = sign(&w, &private);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("SIGNED"), "{text}");
    (w, private, public)
}

fn not_valid(w: &World, public: &Path, expect: &[&str]) -> String {
    let (code, text) = verify(w, public);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("NOT VALID"), "{text}");
    for e in expect {
        assert!(text.contains(e), "`{e}` not named:\n{text}");
    }
    text
}

fn seat_file(w: &World) -> PathBuf {
    Bundle::open(&w.study)
        .unwrap()
        .arbitration_dir()
        .join("seats/anthropic-sonnet.txt")
}

fn edit_signature(w: &World, edit: impl FnOnce(&mut Value)) {
    let path = w.run.dir().join(SIGNATURE_FILE);
    let mut value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(&path, value.to_string()).unwrap();
}

#[test]
fn a_signed_run_verifies_and_the_signature_file_holds_the_record() {
    let (w, _, public) = signed();
    let (code, text) = verify(&w, &public);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("SIGNED"), "{text}");
    let sig: Value =
        serde_json::from_slice(&std::fs::read(w.run.dir().join(SIGNATURE_FILE)).unwrap()).unwrap();
    assert_eq!(sig["algorithm"], "ed25519");
    assert_eq!(sig["record"]["summary"]["verdict"], "PASS");
    let arbitration = sig["record"]["arbitrations"]["journey::study_arc"]
        .as_object()
        .unwrap();
    assert!(
        arbitration.contains_key("seats/anthropic-sonnet.txt"),
        "{sig:#}"
    );
    assert!(arbitration.contains_key("arbitration.json"), "{sig:#}");
}

#[test]
fn a_seat_reply_rewritten_by_hand_fails_a_signed_release() {
    let (w, _, public) = signed();
    let path = seat_file(&w);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n(added by hand)\n");
    std::fs::write(&path, text).unwrap();
    not_valid(&w, &public, &["seats/anthropic-sonnet.txt"]);
}

#[test]
fn a_seat_reply_rewritten_with_a_consistent_arbitration_still_fails() {
    // The sign-off alone passes this run: the replies parse to the same scores and the
    // arbitration was recomputed from them. Only the signed hashes can tell.
    let (w, _, public) = signed();
    let replies = [format!("{}\n", good_reply(4)), good_reply(4), good_reply(5)];
    w.grade_with(&replies, |_| {});
    let text = not_valid(&w, &public, &["seats/anthropic-sonnet.txt"]);
    assert!(!text.contains("now FAILs"), "{text}");
}

#[test]
fn one_manifest_byte_edited_fails_a_signed_release() {
    let (w, _, public) = signed();
    let path = w.smoke.join("manifest.json");
    let mut bytes = std::fs::read(&path).unwrap();
    // A space before the final newline: the same JSON, other bytes.
    bytes.insert(bytes.len() - 1, b' ');
    std::fs::write(&path, bytes).unwrap();
    not_valid(&w, &public, &["private_bundle_digest"]);
}

#[test]
fn a_flipped_verdict_fails_a_signed_release() {
    let (w, _, public) = signed();
    w.edit_results(SMOKE, |v| v["outcome"] = json!("failed"));
    not_valid(
        &w,
        &public,
        &["summary.verdict: signed \"PASS\", now \"FAIL\""],
    );
}

#[test]
fn the_record_edited_inside_the_signature_file_fails() {
    let (w, _, public) = signed();
    edit_signature(&w, |v| v["record"]["summary"]["reasons"] = json!(["none"]));
    not_valid(&w, &public, &["does not verify"]);
}

#[test]
fn a_signature_by_another_key_fails() {
    let (w, _, _) = signed();
    let (other_private, other_public) = keygen(&w, "other-keys");
    // Verified with a key that did not sign: named as another key's signature.
    not_valid(&w, &other_public, &["signed by another key"]);
    // Signed by the other key, its fingerprint then forged to the first key's: the
    // fingerprint no longer gives it away, the signature itself fails.
    let (code, text) = sign(&w, &other_private);
    assert_eq!(code, Some(0), "{text}");
    let first_public = w.path("keys").join(PUBLIC_KEY_FILE);
    let first = studyloop_uat::signing::read_public(&first_public)
        .unwrap()
        .fingerprint();
    edit_signature(&w, |v| {
        assert_ne!(v["key_fingerprint"], json!(first));
        v["key_fingerprint"] = json!(first);
    });
    not_valid(&w, &first_public, &["does not verify"]);
}

#[test]
fn an_unsigned_run_fails_by_name() {
    let w = World::new();
    let (_, public) = keygen(&w, "keys");
    not_valid(&w, &public, &["not signed", SIGNATURE_FILE]);
}

#[test]
fn a_failed_signoff_is_not_signed() {
    let w = World::new();
    let (private, _) = keygen(&w, "keys");
    w.edit_results(SMOKE, |v| v["outcome"] = json!("failed"));
    let (code, text) = sign(&w, &private);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("NOT SIGNED"), "{text}");
    assert!(!w.run.dir().join(SIGNATURE_FILE).exists());
}

#[test]
fn keygen_writes_a_private_key_0600_in_a_0700_directory_and_never_overwrites() {
    let w = World::new();
    let dir = w.path("keys");
    let (code, text) = run(&w, &["keygen".as_ref(), "--out".as_ref(), dir.as_os_str()]);
    assert_eq!(code, Some(0), "{text}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let private = dir.join(PRIVATE_KEY_FILE);
    let public = dir.join(PUBLIC_KEY_FILE);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&private), 0o600);
    assert_eq!(mode(&public), 0o644);
    let pubtext = std::fs::read_to_string(&public).unwrap();
    assert_eq!(pubtext.trim().len(), 64, "{pubtext}");
    assert!(pubtext.trim().bytes().all(|b| b.is_ascii_hexdigit()));
    // The private key is printed in no encoding.
    let secret = std::fs::read(&private).unwrap();
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let b64 = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&secret)
    };
    let seed: String = hex.chars().skip(hex.len() - 64).collect();
    for shown in [hex.as_str(), b64.as_str(), seed.as_str()] {
        assert!(!text.contains(shown), "private key printed:\n{text}");
    }
    // A second keygen into the same directory refuses and leaves the key as it was.
    let (code, text) = run(&w, &["keygen".as_ref(), "--out".as_ref(), dir.as_os_str()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("already exists"), "{text}");
    assert_eq!(std::fs::read(&private).unwrap(), secret);
    // An existing directory others can open is refused.
    let open = w.path("open-keys");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o755);
    let (code, text) = run(&w, &["keygen".as_ref(), "--out".as_ref(), open.as_os_str()]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("chmod 700"), "{text}");
    assert!(!open.join(PRIVATE_KEY_FILE).exists());
}

#[test]
fn bad_key_files_are_refused_naming_the_file_and_the_fix() {
    let w = World::new();
    let (private, public) = keygen(&w, "keys");
    let garbled = w.path("garbled.pk8");
    std::fs::write(&garbled, b"not a key at all").unwrap();
    chmod(&garbled, 0o600);
    let huge = w.path("huge.pk8");
    std::fs::write(&huge, vec![b'0'; 5000]).unwrap();
    chmod(&huge, 0o600);
    let link = w.path("link.pk8");
    std::os::unix::fs::symlink(&private, &link).unwrap();
    let pipe = w.path("pipe.pk8");
    fifo(&pipe);
    let open = w.path("open.pk8");
    std::fs::copy(&private, &open).unwrap();
    chmod(&open, 0o644);
    let missing = w.path("missing.pk8");
    let cases: [(&Path, &str); 7] = [
        (&public, "is a public key, but --key needs the private key"),
        (&garbled, "is not an ed25519 private key"),
        (&huge, "more than 4096 bytes"),
        (&link, "a symlink"),
        (&pipe, "a FIFO"),
        (&open, "chmod 600"),
        (&missing, "cannot read the private key"),
    ];
    for (key, expect) in cases {
        let (code, text) = sign(&w, key);
        assert_eq!(code, Some(2), "{}: {text}", key.display());
        assert!(
            text.contains(expect),
            "{}: `{expect}` not in:\n{text}",
            key.display()
        );
        assert!(text.contains(&key.display().to_string()), "{text}");
    }
    assert!(!w.run.dir().join(SIGNATURE_FILE).exists());
    // The private key where the public one is expected.
    let (code, text) = verify(&w, &private);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("is a private key, but --pubkey"), "{text}");
    let (code, text) = verify(&w, &garbled);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("64 hex characters"), "{text}");
    // A FIFO or a symlink as the signature file: refused by name, never a hang.
    let sig = w.run.dir().join(SIGNATURE_FILE);
    fifo(&sig);
    let (code, text) = verify(&w, &public);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("a FIFO") && text.contains(SIGNATURE_FILE),
        "{text}"
    );
    std::fs::remove_file(&sig).unwrap();
    std::os::unix::fs::symlink(&public, &sig).unwrap();
    let (code, text) = verify(&w, &public);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("a symlink") && text.contains(SIGNATURE_FILE),
        "{text}"
    );
}
