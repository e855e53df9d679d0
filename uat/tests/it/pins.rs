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
const SIGNOFF_V3: &[u8] = include_bytes!("../../signoff_v3.yaml");
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
    assert_eq!((d.version(), d.council()), (3, "release"));
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
            ("journey::architect_launch", true, false),
            ("journey::mcp_lifecycle", true, false),
            ("journey::now_with_active_plan", true, false),
            ("journey::study_arc", true, true),
            ("journey::faults", true, false),
            ("journey::drill", true, false),
        ]
    );
    // Every v3 cell writes its learner budget; the graded arc gets at least six turns.
    assert!(d.cell_specs().iter().all(|c| c.budget.is_some()));
    let arc = d.budget_for("journey::study_arc").unwrap();
    assert!(arc.max_turns >= 6, "{arc:?}");
    assert_eq!(
        arc.source,
        studyloop_acceptance::selection::BudgetSource::SignoffDefinition { version: 3 }
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
    // v3: a loosened budget, a dropped required cell, a cell made optional.
    for (from, to) in [
        (
            "budget: {turns: 8, output_tokens: 16000}",
            "budget: {turns: 50, output_tokens: 16000}",
        ),
        (
            "  - id: journey::faults\n    required: true",
            "  - id: journey::faults\n    required: false",
        ),
        (
            "graded_auth_mode: real-auth",
            "graded_auth_mode: stub-provider",
        ),
    ] {
        let err = SignoffDefinition::from_bytes(
            "signoff_v3.yaml",
            &edited(SIGNOFF_V3, from, to),
            "signoff_registry.json",
            SIGNOFF_REGISTRY,
        )
        .unwrap_err();
        assert_tampered(&err, "signoff_v3.yaml");
    }
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
    // Registered under the version the text declares (v1 unless it says otherwise).
    let version = text
        .lines()
        .find_map(|l| l.strip_prefix("version: "))
        .unwrap_or("1");
    let registry = registry_for(text.as_bytes()).replacen("\"1\"", &format!("\"{version}\""), 1);
    SignoffDefinition::from_bytes(
        "signoff_test.yaml",
        text.as_bytes(),
        "registry.json",
        registry.as_bytes(),
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

/// v3 budgets: each value outside the engine's range is refused on load, naming the
/// cell, the value, the range and the fix; from v3 a cell without a budget is refused;
/// a malformed budget (a missing or extra key, a negative or fractional number) too.
#[test]
fn a_v3_budget_out_of_range_or_missing_is_refused_naming_value_range_and_fix() {
    let base = "version: 3\ncouncil: hermetic\nrequired_cell_skipped: fail\ncells:\n  - {id: a, required: true, graded: false, budget: {turns: 6, output_tokens: 4000}}\nfloors: {}\n";
    let d = definition(base).unwrap();
    let b = d.budget_for("a").unwrap();
    assert_eq!((b.max_turns, b.max_output_tokens), (6, Some(4000)));
    assert_eq!(d.budget_for("not-a-cell"), None);
    let mut refused = 0;
    for (from, to, needles) in [
        (
            "turns: 6",
            "turns: 0",
            &["cell `a`", "budget turns 0", "1..=50", "fix:"][..],
        ),
        ("turns: 6", "turns: 51", &["budget turns 51", "1..=50"][..]),
        (
            "turns: 6",
            "turns: 18446744073709551615",
            &["budget turns 18446744073709551615"][..],
        ),
        (
            "output_tokens: 4000",
            "output_tokens: 0",
            &["budget output_tokens 0", "1..=1000000", "fix:"][..],
        ),
        (
            "output_tokens: 4000",
            "output_tokens: 1000001",
            &["output_tokens 1000001"][..],
        ),
        (
            ", budget: {turns: 6, output_tokens: 4000}",
            "",
            &["cell `a` has no `budget`", "from v3"][..],
        ),
        ("turns: 6, ", "", &["missing field `turns`"][..]),
        (
            "turns: 6",
            "turns: 6, minutes: 9",
            &["unknown field `minutes`"][..],
        ),
        ("turns: 6", "turns: -1", &["invalid u64"][..]),
        ("turns: 6", "turns: 2.5", &["invalid u64"][..]),
        (
            "turns: 6",
            "turns: 18446744073709551616",
            &["signoff_test.yaml"][..],
        ),
    ] {
        let text = base.replacen(from, to, 1);
        assert_ne!(text, base, "fixture drift: {from}");
        let msg = definition(&text).unwrap_err().to_string();
        for needle in needles {
            assert!(
                msg.contains("signoff_test.yaml") && msg.contains(needle),
                "expected `{needle}` in: {msg}"
            );
        }
        refused += 1;
    }
    assert_eq!(refused, 11);
    // v1/v2 cells carry no budget: the selection's applies.
    let v1 = base.replacen("version: 3", "version: 2", 1).replacen(
        ", budget: {turns: 6, output_tokens: 4000}",
        "",
        1,
    );
    assert_eq!(definition(&v1).unwrap().budget_for("a"), None);
}

/// A definition naming a cell no journey runs is refused by the catalogue check, naming
/// the file, the cell, the known set and the fix.
#[test]
fn a_definition_naming_an_unknown_cell_is_refused_by_name() {
    let text = "version: 3\ncouncil: hermetic\nrequired_cell_skipped: fail\ncells:\n  - {id: journey::smoke, required: true, graded: false, budget: {turns: 3, output_tokens: 10}}\n  - {id: journey::teleport, required: true, graded: false, budget: {turns: 3, output_tokens: 10}}\nfloors: {}\n";
    let d = definition(text).unwrap();
    d.check_known(&["journey::smoke", "journey::teleport"])
        .unwrap();
    let msg = d
        .check_known(&["journey::smoke", "journey::faults"])
        .unwrap_err()
        .to_string();
    for needle in [
        "signoff_test.yaml (sign-off v3)",
        "`journey::teleport`",
        "known: journey::smoke, journey::faults",
        "fix:",
    ] {
        assert!(msg.contains(needle), "expected `{needle}` in: {msg}");
    }
}
