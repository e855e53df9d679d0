//! The rubric loader: the shipped rubric loads with the expected criteria and veto
//! rules, and every malformed, unregistered or tampered rubric is refused by name.

use studyloop_pinned::{self as pinned, PinError};
use studyloop_rubrics::{Rubric, RubricError, Rule};

const RUBRIC: &[u8] = include_bytes!("../../rubric_v1.md");

fn registry_for(bytes: &[u8]) -> String {
    format!("{{\"1\": \"{}\"}}", pinned::digest(bytes))
}

fn load(text: &str) -> Result<Rubric, RubricError> {
    Rubric::from_bytes(
        "rubric_test.md",
        text.as_bytes(),
        "registry.json",
        registry_for(text.as_bytes()).as_bytes(),
    )
}

#[test]
fn shipped_rubric_loads_with_its_criteria_and_rules() {
    let rubric = Rubric::load_default().expect("shipped rubric matches its pin");
    assert_eq!(rubric.version(), 1);
    assert_eq!(rubric.sha256(), pinned::digest(RUBRIC));
    let ids: Vec<&str> = rubric.criteria().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "accuracy",
            "pedagogy",
            "session_lifecycle",
            "learner_record"
        ]
    );
    for c in rubric.criteria() {
        assert_eq!(c.scale, [1, 5], "{}", c.id);
        assert!(!c.evidence.is_empty(), "{}", c.id);
    }
    let pedagogy = rubric.criterion("pedagogy").unwrap();
    assert!(pedagogy.accepts_evidence("transcript.jsonl"));
    assert!(!pedagogy.accepts_evidence("manifest.json"));
    assert!(
        rubric
            .criterion("session_lifecycle")
            .unwrap()
            .accepts_evidence("lifecycle/resume.json")
    );
    let rules: Vec<&Rule> = rubric.reject_if().iter().map(|r| &r.rule).collect();
    assert!(rules.contains(&&Rule::CriterionScoreAtMost {
        criterion: "accuracy".into(),
        score: 1
    }));
    assert!(rules.contains(&&Rule::RequiredCellSkipped));
    assert!(rules.contains(&&Rule::BundleMissingInventoryFile));
    assert!(rules.contains(&&Rule::ScoredSeatsBelow { seats: 2 }));
    assert!(rubric.body().contains("# How this rubric is used"));
    assert!(!rubric.body().starts_with("---"));
}

#[test]
fn tampering_is_refused_naming_both_hashes() {
    let edited = String::from_utf8(RUBRIC.to_vec())
        .unwrap()
        .replace("Did the mentor teach", "Did the mentor preach");
    let err = Rubric::from_bytes(
        "rubric_v1.md",
        edited.as_bytes(),
        "registry.json",
        registry_for(RUBRIC).as_bytes(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RubricError::Pin(PinError::Tampered { .. })),
        "{msg}"
    );
    assert!(
        msg.contains("rubric_v1.md") && msg.contains("version bump"),
        "{msg}"
    );
    assert!(
        msg.contains(&pinned::digest(RUBRIC)) && msg.contains(&pinned::digest(edited.as_bytes())),
        "{msg}"
    );
}

#[test]
fn a_crlf_checkout_still_matches_its_pin() {
    let crlf = String::from_utf8(RUBRIC.to_vec())
        .unwrap()
        .replace('\n', "\r\n");
    let rubric = Rubric::from_bytes(
        "rubric_v1.md",
        crlf.as_bytes(),
        "registry.json",
        registry_for(RUBRIC).as_bytes(),
    )
    .unwrap();
    assert_eq!(rubric.criteria().len(), 4);
}

#[test]
fn an_unregistered_version_is_refused() {
    let bumped = String::from_utf8(RUBRIC.to_vec())
        .unwrap()
        .replace("\nversion: 1\n", "\nversion: 7\n");
    let err = Rubric::from_bytes(
        "rubric_v7.md",
        bumped.as_bytes(),
        "registry.json",
        registry_for(RUBRIC).as_bytes(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            RubricError::Pin(PinError::Unregistered { version: 7, .. })
        ),
        "{err}"
    );
}

const MINIMAL_CRITERION: &str = "  - {id: a, prompt: p, scale: [1, 5], anchors: {1: low, 5: high}, evidence: [transcript.jsonl]}\n";

fn doc(criteria: &str, reject_if: &str) -> String {
    format!("---\nversion: 1\ncriteria:\n{criteria}reject_if:\n{reject_if}---\nbody\n")
}

#[test]
fn malformed_rubrics_are_format_errors_naming_the_file_and_the_fix() {
    let cases = [
        ("version: 1\n".to_owned(), "begin with a `---`"),
        ("---\nversion: 1\ncriteria: []\n".to_owned(), "never closed"),
        (
            "---\ncriteria: []\n---\n".to_owned(),
            "no integer `version`",
        ),
        (
            "---\nversion: 1\ncriteria: []\nreject_if: []\n---\n".to_owned(),
            "`criteria` is empty",
        ),
        (
            doc(&MINIMAL_CRITERION.replace("[1, 5]", "[5, 1]"), "  []\n"),
            "min < max",
        ),
        (
            doc(&MINIMAL_CRITERION.replace("5: high", "6: high"), "  []\n"),
            "outside its scale",
        ),
        (
            doc(&MINIMAL_CRITERION.replace(", 5: high", ""), "  []\n"),
            "both ends",
        ),
        (
            doc(
                &MINIMAL_CRITERION.replace("[transcript.jsonl]", "[]"),
                "  []\n",
            ),
            "names no evidence",
        ),
        (
            doc(
                &MINIMAL_CRITERION.replace("transcript.jsonl", "../x"),
                "  []\n",
            ),
            "not a relative bundle path",
        ),
        (
            doc(
                &MINIMAL_CRITERION.replace("id: a,", "id: a, weight: 2,"),
                "  []\n",
            ),
            "weight",
        ),
        (
            doc(&format!("{MINIMAL_CRITERION}{MINIMAL_CRITERION}"), "  []\n"),
            "appears twice",
        ),
        (
            doc(
                MINIMAL_CRITERION,
                "  - {id: r, description: d, rule: {criterion_score_at_most: {criterion: zz, score: 1}}}\n",
            ),
            "known: a",
        ),
        (
            doc(
                MINIMAL_CRITERION,
                "  - {id: r, description: d, rule: {criterion_score_at_most: {criterion: a, score: 9}}}\n",
            ),
            "outside",
        ),
        (
            doc(
                MINIMAL_CRITERION,
                "  - {id: r, description: d, rule: {bundle_outcome_in: {outcomes: [exploded]}}}\n",
            ),
            "known: completed",
        ),
        (
            doc(
                MINIMAL_CRITERION,
                "  - {id: r, description: d, rule: vibes_bad}\n",
            ),
            "vibes_bad",
        ),
    ];
    for (text, needle) in cases {
        let err = load(&text).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, RubricError::Format { .. }), "{msg}");
        assert!(
            msg.contains("rubric_test.md") && msg.contains(needle),
            "expected `{needle}` in: {msg}"
        );
    }
}

#[test]
fn a_minimal_rubric_parses_each_rule_shape() {
    let rules = "  - {id: a, description: d, rule: {criterion_score_at_most: {criterion: a, score: 1}}}\n  - {id: b, description: d, rule: required_cell_skipped}\n  - {id: c, description: d, rule: bundle_missing_inventory_file}\n  - {id: e, description: d, rule: {bundle_outcome_in: {outcomes: [errored]}}}\n  - {id: f, description: d, rule: {scored_seats_below: {seats: 3}}}\n";
    let rubric = load(&doc(MINIMAL_CRITERION, rules)).unwrap();
    assert_eq!(rubric.reject_if().len(), 5);
    assert_eq!(rubric.body(), "body\n");
}
