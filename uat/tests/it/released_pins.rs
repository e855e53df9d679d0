//! Released pinned files can never change (issue 11 §5): every released version of every
//! pinned file, with the sha256 it was released with. A registry edit or an in-place file
//! edit that changes one of these digests fails here by file and version, and a version
//! registered but missing from the table fails until it is added (its release).
//!
//! Adding a version: add `rows` for it to [`RELEASED`] with the digest its registry
//! records. Never change a row.

use crate::common;

use std::path::Path;

use common::registry_for;
use studyloop_redaction::pinned::{self, PinnedFile};
use studyloop_redaction::{PinError, RedactionRules};
use studyloop_rubrics::Rubric;
use studyloop_uat::council::Roster;
use studyloop_uat::definition::SignoffDefinition;
use studyloop_uat::pinned_yaml::PinnedFileError;

/// (registry, file, version, sha256), paths relative to the workspace root.
const RELEASED: &[(&str, &str, u32, &str)] = &[
    (
        "redaction/registry.json",
        "redaction/rules_v1.yaml",
        1,
        "4a89cc11002f7a9cc104af75420d13c6cc439495cfe515a982ef964e5d44f208",
    ),
    (
        "redaction/registry.json",
        "redaction/rules_v2.yaml",
        2,
        "6d41b428906fb819c4dd2b60a001e264a0630ece6c0806ac8472e8150a36994a",
    ),
    (
        "redaction/registry.json",
        "redaction/rules_v3.yaml",
        3,
        "70a7026688beae5d61cff676a12c9d7b469c626c76b59f074d91861836e21683",
    ),
    (
        "redaction/registry.json",
        "redaction/rules_v4.yaml",
        4,
        "b23e82e68c98d4e61556473b1fec6ab7e79170c20d88d350e8aaaa4b3966788e",
    ),
    (
        "rubrics/registry.json",
        "rubrics/rubric_v1.md",
        1,
        "f2f7721671ce27d0a9a81d94fbc91504b44402771da0b36b871a7bdfbeba79eb",
    ),
    (
        "uat/council_registry.json",
        "uat/council_v1.yaml",
        1,
        "88e2852ad838629fbbcc953a96d203d411df642c1190796807d2492eb6a8a1ad",
    ),
    (
        "uat/council_registry.json",
        "uat/council_v2.yaml",
        2,
        "87d4d0e972cf495f458be9a952bc393a3e2592c0ca6a0663d90ac2a9dcf1c530",
    ),
    (
        "uat/signoff_registry.json",
        "uat/signoff_v1.yaml",
        1,
        "ece19e64e3d23a8b4de93ef3a1b63d28c69cd3074ddb0d1ab3693428f61979fd",
    ),
    (
        "uat/signoff_registry.json",
        "uat/signoff_v2.yaml",
        2,
        "b45523375898ed8cfd6918281bb80792b97dee9d82705a04a52e050682b2c687",
    ),
    (
        "uat/signoff_registry.json",
        "uat/signoff_v3.yaml",
        3,
        "3961ff8cba6703aee2a38f2e828d8ea6e3af088355e3cdb55b12023504d6bee9",
    ),
];

fn read(relative: &str) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read(root.join(relative)).unwrap_or_else(|e| panic!("read {relative}: {e}"))
}

#[test]
fn every_released_version_keeps_its_digest_in_its_file_and_its_registry() {
    let mut broken = Vec::new();
    for &(registry, file, version, released) in RELEASED {
        let bytes = read(file);
        let actual = pinned::digest(&bytes);
        if actual != released {
            broken.push(format!(
                "{file} (v{version}) now hashes to {actual}, released as {released}"
            ));
        }
        let verified = PinnedFile {
            file,
            version,
            bytes: &bytes,
            registry,
            registry_bytes: &read(registry),
        }
        .verify();
        if verified.as_deref() != Ok(released) {
            broken.push(format!(
                "{registry} no longer pins {file} v{version} to its released {released}: {verified:?}"
            ));
        }
    }
    assert!(
        broken.is_empty(),
        "a released pinned file changed; released versions are immutable, add a new version \
         instead:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_registered_version_is_in_the_released_table() {
    let registries: std::collections::BTreeSet<&str> =
        RELEASED.iter().map(|&(registry, ..)| registry).collect();
    for registry in registries {
        let entries: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&read(registry)).unwrap();
        for (version, digest) in entries {
            let version: u32 = version.parse().unwrap();
            assert!(
                RELEASED.iter().any(|&(r, _, v, d)| r == registry
                    && v == version
                    && Some(d) == digest.as_str()),
                "{registry} registers version {version} ({digest}), which RELEASED in {} does not \
                 list: add its row when you release it",
                file!()
            );
        }
    }
}

#[test]
fn the_shipped_loaders_use_the_released_digests() {
    let rules = RedactionRules::load_default().unwrap();
    let rubric = Rubric::load_default().unwrap();
    let definition = SignoffDefinition::load_default().unwrap();
    let roster = Roster::load_default().unwrap();
    for (what, version, sha) in [
        ("redaction", rules.version(), rules.sha256()),
        ("rubric", rubric.version(), rubric.sha256()),
        ("signoff", definition.version(), definition.sha256()),
        ("council", roster.version(), roster.sha256()),
    ] {
        assert!(
            RELEASED
                .iter()
                .any(|&(_, _, v, d)| v == version && d == sha),
            "the shipped {what} v{version} ({sha}) is not a released version"
        );
    }
}

#[test]
fn a_registry_naming_a_released_version_twice_is_refused_by_version_and_file() {
    // With last-wins, the second entry would replace the released digest in place.
    let bytes = read("uat/signoff_v2.yaml");
    let registry = format!(
        "{{\"2\": \"{}\", \"2\": \"{}\"}}",
        pinned::digest(&bytes),
        pinned::digest(b"something else")
    );
    let err = SignoffDefinition::from_bytes(
        "signoff_v2.yaml",
        &bytes,
        "signoff_registry.json",
        registry.as_bytes(),
    )
    .unwrap_err();
    assert!(
        matches!(err, PinnedFileError::Pin(PinError::DuplicateVersion { ref key, .. }) if key == "2"),
        "{err}"
    );
    assert!(err.to_string().contains("signoff_registry.json"), "{err}");
}

#[test]
fn a_key_written_twice_in_a_pinned_yaml_file_is_refused_by_key_and_file() {
    // The rubric: a score anchor written as `1:` and `'1':` (a typed map keeps the last).
    let rubric = String::from_utf8(read("rubrics/rubric_v1.md")).unwrap();
    let anchor = "      1: Confidently wrong";
    assert!(rubric.contains(anchor), "fixture drift");
    let twice = rubric.replacen(
        anchor,
        "      '1': Anything goes.\n      1: Confidently wrong",
        1,
    );
    let err = Rubric::from_bytes(
        "rubric_test.md",
        twice.as_bytes(),
        "registry.json",
        registry_for(twice.as_bytes()).as_bytes(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("rubric_test.md") && msg.contains("duplicate key `1`"),
        "{msg}"
    );
    // The sign-off definition: a floor written twice, the second one lower.
    let definition = String::from_utf8(read("uat/signoff_v2.yaml"))
        .unwrap()
        .replacen("version: 2\n", "version: 1\n", 1)
        .replacen("  accuracy: 4\n", "  accuracy: 4\n  \"accuracy\": 1\n", 1);
    let err = SignoffDefinition::from_bytes(
        "signoff_test.yaml",
        definition.as_bytes(),
        "registry.json",
        registry_for(definition.as_bytes()).as_bytes(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("signoff_test.yaml") && msg.contains("accuracy") && msg.contains("duplicate"),
        "{msg}"
    );
}
