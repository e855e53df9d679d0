//! The crate's pinned files: the shipped sign-off definition and council roster load and
//! fit the shipped rubric, and tampering with either (or with the rubric or redaction
//! rules) is refused by name.

use crate::common;

use common::registry_for;
use studyloop_acceptance::selection::AuthMode;
use studyloop_redaction::{PinError, RedactionRules};
use studyloop_rubrics::Rubric;
use studyloop_uat::council::{Backend, Roster};
use studyloop_uat::definition::SignoffDefinition;
use studyloop_uat::pinned_yaml::PinnedFileError;
use studyloop_uat::signoff::Pins;

const SIGNOFF: &[u8] = include_bytes!("../../signoff_v2.yaml");
const SIGNOFF_V1: &[u8] = include_bytes!("../../signoff_v1.yaml");
const SIGNOFF_REGISTRY: &[u8] = include_bytes!("../../signoff_registry.json");
const COUNCIL: &[u8] = include_bytes!("../../council_v1.yaml");
const COUNCIL_REGISTRY: &[u8] = include_bytes!("../../council_registry.json");

fn edited(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(text.contains(from), "fixture drift: `{from}` not found");
    text.replacen(from, to, 1).into_bytes()
}

fn assert_tampered(err: &PinnedFileError, file: &str) {
    let msg = err.to_string();
    assert!(
        matches!(err, PinnedFileError::Pin(PinError::Tampered { .. })),
        "{msg}"
    );
    assert!(msg.contains(file) && msg.contains("version bump"), "{msg}");
}

#[test]
fn shipped_pins_load_and_fit_together() {
    let pins = Pins::load_default().expect("every shipped pinned file matches its registry");
    let d = &pins.definition;
    assert_eq!((d.version(), d.council()), (2, "release"));
    assert_eq!(d.graded_auth_mode(), AuthMode::RealAuth);
    let cells: Vec<(&str, bool, bool)> = d
        .cell_specs()
        .iter()
        .map(|c| (c.id.as_str(), c.required, c.graded))
        .collect();
    assert_eq!(
        cells,
        [
            ("journey::smoke", true, false),
            ("journey::study_session", true, true)
        ]
    );
    assert_eq!(d.floors().len(), pins.rubric.criteria().len());
    let release = pins.roster.council("release").unwrap();
    assert!(
        release.seats.iter().all(|s| s.backend != Backend::Stub),
        "stub seats never sign off a release"
    );
    let hermetic = pins.roster.council("hermetic").unwrap();
    assert!(hermetic.seats.iter().all(|s| s.backend == Backend::Stub));
}

#[test]
fn tampering_with_any_pinned_file_fails_by_name() {
    let err = SignoffDefinition::from_bytes(
        "signoff_v2.yaml",
        &edited(SIGNOFF, "accuracy: 4", "accuracy: 1"),
        "signoff_registry.json",
        SIGNOFF_REGISTRY,
    )
    .unwrap_err();
    assert_tampered(&err, "signoff_v2.yaml");
    let err = SignoffDefinition::from_bytes(
        "signoff_v2.yaml",
        &edited(
            SIGNOFF,
            "graded_auth_mode: real-auth",
            "graded_auth_mode: stub-provider",
        ),
        "signoff_registry.json",
        SIGNOFF_REGISTRY,
    )
    .unwrap_err();
    assert_tampered(&err, "signoff_v2.yaml");
    let err = Roster::from_bytes(
        "council_v1.yaml",
        &edited(COUNCIL, "max_turns: 3", "max_turns: 300"),
        "council_registry.json",
        COUNCIL_REGISTRY,
    )
    .unwrap_err();
    assert_tampered(&err, "council_v1.yaml");
    let rubric = edited(
        include_bytes!("../../../rubrics/rubric_v1.md"),
        "score: 1}",
        "score: 0}",
    );
    let err = Rubric::from_bytes(
        "rubric_v1.md",
        &rubric,
        "registry.json",
        include_bytes!("../../../rubrics/registry.json"),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("rubric_v1.md") && err.to_string().contains("tampered"),
        "{err}"
    );
    let rules = edited(
        include_bytes!("../../../redaction/rules_v1.yaml"),
        "  - run_id\n",
        "  - run_id\n  - transcript\n",
    );
    let err = RedactionRules::from_bytes(
        "rules_v1.yaml",
        &rules,
        "registry.json",
        include_bytes!("../../../redaction/registry.json"),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("rules_v1.yaml") && err.to_string().contains("tampered"),
        "{err}"
    );
}

fn definition(text: &str) -> Result<SignoffDefinition, PinnedFileError> {
    SignoffDefinition::from_bytes(
        "signoff_test.yaml",
        text.as_bytes(),
        "registry.json",
        registry_for(text.as_bytes()).as_bytes(),
    )
}

#[test]
fn a_definition_cannot_relax_the_skip_rule_or_miss_a_floor() {
    let base = "version: 1\ncouncil: hermetic\nrequired_cell_skipped: fail\ncells:\n  - {id: a, required: true, graded: true}\nfloors: {accuracy: 3, pedagogy: 3, session_lifecycle: 3, learner_record: 3}\n";
    let rubric = Rubric::load_default().unwrap();
    definition(base).unwrap().check_against(&rubric).unwrap();
    let cases = [
        (
            base.replace("skipped: fail", "skipped: allow"),
            "unknown variant `allow`",
        ),
        (
            base.replace("  - {id: a, required: true, graded: true}\n", "  []\n")
                .replace("cells:\n", "cells:"),
            "`cells` is empty",
        ),
        (base.replace("{id: a,", "{id: ' a',"), "blank or padded"),
        (
            base.replace(
                "graded: true}",
                "graded: true}\n  - {id: a, required: false, graded: false}",
            ),
            "appears twice",
        ),
        (
            base.replace("required: true,", "required: true, weight: 2,"),
            "unknown field `weight`",
        ),
    ];
    for (text, needle) in cases {
        let msg = definition(&text).unwrap_err().to_string();
        assert!(
            msg.contains("signoff_test.yaml") && msg.contains(needle),
            "expected `{needle}` in: {msg}"
        );
    }
    for (text, needle) in [
        (
            base.replace(", learner_record: 3", ""),
            "no floor for rubric criterion `learner_record`",
        ),
        (
            base.replace("learner_record: 3", "learner_record: 3, vibes: 2"),
            "`vibes`, which rubric v1 does not define",
        ),
        (
            base.replace("accuracy: 3", "accuracy: 6"),
            "outside its scale",
        ),
    ] {
        let msg = definition(&text)
            .unwrap()
            .check_against(&rubric)
            .unwrap_err()
            .to_string();
        assert!(msg.contains(needle), "expected `{needle}` in: {msg}");
    }
}

#[test]
fn a_roster_refuses_seats_that_cannot_be_reached_as_declared() {
    let seat = |s: &str| {
        format!(
            "version: 1\ncouncils:\n  c:\n    budget: {{max_turns: 1, max_output_tokens: 10}}\n    max_reply_tokens: 10\n    request_timeout_secs: 1\n    seats:\n      - {s}\n"
        )
    };
    let roster = |text: String| {
        Roster::from_bytes(
            "council_test.yaml",
            text.as_bytes(),
            "registry.json",
            registry_for(text.as_bytes()).as_bytes(),
        )
    };
    roster(seat(
        "{id: ok, backend: direct, provider: openai, model: gpt-4o}",
    ))
    .unwrap();
    for (s, needle) in [
        (
            "{id: x, backend: direct, provider: bedrock, model: m}",
            "bedrock",
        ),
        (
            "{id: x, backend: direct, provider: openai, model: gpt-9}",
            "not curated",
        ),
        (
            "{id: x, backend: direct, model: gpt-4o}",
            "needs `provider`",
        ),
        ("{id: x, backend: stub, model: m}", "needs `wire`"),
        (
            "{id: x, backend: gateway, model: m, provider: openai}",
            "takes no `provider`",
        ),
        ("{id: X, backend: gateway, model: m}", "lowercase"),
        (
            "{id: x, backend: carrier-pigeon, model: m}",
            "unknown variant",
        ),
    ] {
        let msg = roster(seat(s)).unwrap_err().to_string();
        assert!(
            msg.contains("council_test.yaml") && msg.contains(needle),
            "expected `{needle}` in: {msg}"
        );
    }
}

#[test]
fn the_superseded_v1_definition_still_loads_with_the_same_auth_rule() {
    // v1 predates `graded_auth_mode`; the rule it lived by in code was real-auth, so a
    // bundle signed off against v1 is judged the same way.
    let d = SignoffDefinition::from_bytes(
        "signoff_v1.yaml",
        SIGNOFF_V1,
        "signoff_registry.json",
        SIGNOFF_REGISTRY,
    )
    .expect("v1 stays registered");
    assert_eq!(d.version(), 1);
    assert_eq!(d.graded_auth_mode(), AuthMode::RealAuth);
}
