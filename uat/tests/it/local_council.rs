//! The `local` council of roster v2 (auth mode `local-model`): gateway seats that ask
//! for JSON-schema output, evidence caps a small model's context holds, and the figures
//! every grading records (latency per call, JSON validity, spread). Here its seats are
//! reached through the same gateway code path against the stub provider; the real local
//! model answers them under `just testuat "" gateway` with STUDYLOOP_ACC_AUTH_MODE=local-model.

use crate::common;

use std::collections::BTreeMap;

use common::{TRANSCRIPT, bundle_in_mode, good_reply, judges, registry_for};
use studyloop_acceptance::selection::AuthMode;
use studyloop_redaction::{RedactionRules, Redactor};
use studyloop_rubrics::Rubric;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::{
    self, Backend, CellContext, EvidenceLimits, Grader, Roster, SeatStatus, StructuredOutput,
};
use studyloop_uat::pinned_yaml::PinnedFileError;

const CELL: &str = "journey::study_session";

#[test]
fn the_shipped_roster_is_v2_and_its_local_council_is_capped_gateway_seats() {
    let roster = Roster::load_default().unwrap();
    assert_eq!(roster.version(), 2);
    let local = roster.council("local").unwrap();
    assert!(local.seats.iter().all(|s| s.backend == Backend::Gateway));
    assert_eq!(
        local
            .seats
            .iter()
            .filter(|s| s.structured_output == Some(StructuredOutput::JsonObjectSchema))
            .count(),
        2,
        "two seats constrained, one free: the JSON-validity figure compares them"
    );
    let caps = local.evidence.expect("the local council caps its evidence");
    assert!(caps.max_total_chars <= 8_000, "{caps:?}");
    // v1's councils are unchanged in v2.
    for name in ["release", "hermetic"] {
        assert_eq!(roster.council(name).unwrap().evidence, None, "{name}");
    }
}

fn roster_err(yaml: &str) -> String {
    let registry = registry_for(yaml.as_bytes());
    match Roster::from_bytes(
        "council_test.yaml",
        yaml.as_bytes(),
        "registry.json",
        registry.as_bytes(),
    ) {
        Err(PinnedFileError::Format { detail, .. }) => detail,
        other => panic!("expected a format error, got {other:?}"),
    }
}

#[test]
fn structured_output_on_a_stub_seat_and_zero_evidence_caps_are_refused() {
    let stub = "version: 1\ncouncils:\n  c:\n    budget: {max_turns: 1, max_output_tokens: 10}\n    max_reply_tokens: 10\n    request_timeout_secs: 1\n    seats:\n      - {id: s, backend: stub, model: m, wire: openai_compat, structured_output: json_schema}\n";
    let err = roster_err(stub);
    assert!(
        err.contains("stub seat `s`") && err.contains("structured_output"),
        "{err}"
    );
    let zero = "version: 1\ncouncils:\n  c:\n    budget: {max_turns: 1, max_output_tokens: 10}\n    max_reply_tokens: 10\n    request_timeout_secs: 1\n    evidence: {max_file_chars: 0, max_total_chars: 10}\n    seats:\n      - {id: g, backend: gateway, model: m}\n";
    let err = roster_err(zero);
    assert!(err.contains("`evidence` caps"), "{err}");
    let unknown = "version: 1\ncouncils:\n  c:\n    budget: {max_turns: 1, max_output_tokens: 10}\n    max_reply_tokens: 10\n    request_timeout_secs: 1\n    seats:\n      - {id: g, backend: gateway, model: m, structured_output: grammar}\n";
    let err = roster_err(unknown);
    assert!(err.contains("grammar"), "{err}");
}

#[test]
fn a_councils_evidence_caps_bound_what_each_seat_is_sent() {
    let rules = RedactionRules::load_default().unwrap();
    let redactor = Redactor::new(&rules);
    let rubric = Rubric::load_default().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let long = format!(
        "{{\"learner\":\"{}\",\"mentor_reply\":\"ok\"}}\n",
        "why? ".repeat(4_000)
    );
    let dir = bundle_in_mode(tmp.path(), CELL, &long, Some(AuthMode::LocalModel));
    let b = Bundle::open(&dir).unwrap();
    let summary = redactor
        .summary(&studyloop_uat::bundle_summary::bundle_summary(&b))
        .unwrap();
    let wide = council::build_prompt(&rubric, &summary, &b, &redactor);
    let caps = EvidenceLimits {
        max_file_chars: 500,
        max_total_chars: 700,
    };
    let narrow = council::build_prompt_within(&rubric, &summary, &b, &redactor, caps);
    assert!(wide.user.contains(&"why? ".repeat(1_000)));
    assert!(narrow.user.contains("[cut: the file continues]"));
    let evidence: serde_json::Value = serde_json::from_str(&narrow.user).unwrap();
    let sent: usize = evidence["evidence"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_str().unwrap().chars().count())
        .sum();
    assert!(sent <= 700, "{sent} evidence characters sent");
    assert!(
        !evidence["evidence_omitted_for_length"]
            .as_array()
            .unwrap()
            .is_empty(),
        "what did not fit is named"
    );
}

#[test]
fn the_local_council_grades_through_the_gateway_path_and_records_latency_and_figures() {
    let rules = RedactionRules::load_default().unwrap();
    let redactor = Redactor::new(&rules);
    let rubric = Rubric::load_default().unwrap();
    let roster = Roster::load_default().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = bundle_in_mode(tmp.path(), CELL, TRANSCRIPT, Some(AuthMode::LocalModel));
    let b = Bundle::open(&dir).unwrap();
    // The stub provider stands in for LiteLLM: the seats reach it by their aliases.
    let stub = judges(
        tmp.path(),
        &[
            ("local-judge-a", good_reply(4)),
            ("local-judge-b", good_reply(3)),
            ("local-judge-c", "Sure! Here is my grading: 4/5.".to_owned()),
        ],
    );
    let env: BTreeMap<String, String> = [
        ("LITELLM_BASE_URL".to_owned(), stub.base_url()),
        ("LITELLM_API_KEY".to_owned(), "sk-local-test".to_owned()),
    ]
    .into();
    let grader = Grader {
        rubric: &rubric,
        rules: &rules,
        redactor: &redactor,
        roster: &roster,
        council: "local",
        env: &env,
        stub: None,
        cassette: None,
        // The journey's local-model mode: the gateway is the local model, no approval.
        approvals: studyloop_uat::council::SeatApprovals {
            approvals: &studyloop_acceptance::approval::Approvals::default(),
            local_gateway: true,
        },
    };
    let graded = grader
        .grade(
            &b,
            CellContext {
                required: true,
                skipped: false,
            },
        )
        .unwrap();
    drop(stub);
    let a = &graded.arbitration;
    assert_eq!(a.council, "local");
    assert_eq!(a.scored_seats(), 2);
    assert!(
        a.seats.iter().all(|s| s.elapsed_ms.is_some()),
        "every asked seat records its call latency: {:?}",
        a.seats
    );
    assert!(matches!(
        &a.seats[2].status,
        SeatStatus::Unscored { reason } if reason.contains("not the required JSON object")
    ));
    let line = council::figures_line(a);
    for want in [
        "council `local`: 2 of 3 seat(s) scored",
        "JSON valid 2 of 3 replies",
        "spread accuracy 1",
        "local-c unscored (the reply is not the required JSON object",
    ] {
        assert!(line.contains(want), "missing {want:?} in {line}");
    }
    // The latency survives the strict re-read the sign-off does.
    let json = serde_json::to_string(a).unwrap();
    let back: council::Arbitration = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back.seats.iter().map(|s| s.elapsed_ms).collect::<Vec<_>>(),
        a.seats.iter().map(|s| s.elapsed_ms).collect::<Vec<_>>()
    );
}

#[test]
fn each_structured_output_dialect_carries_the_schema_the_way_its_server_takes_it() {
    let schema = serde_json::json!({"type": "object", "required": ["scores"]});
    assert_eq!(
        StructuredOutput::JsonObjectSchema.response_format(schema.clone()),
        serde_json::json!({"type": "json_object", "schema": schema})
    );
    let openai = StructuredOutput::JsonSchema.response_format(schema.clone());
    assert_eq!(openai["type"], "json_schema");
    assert_eq!(openai["json_schema"]["schema"], schema);
    assert_eq!(openai["json_schema"]["strict"], true);
}

#[test]
fn the_reply_schema_names_each_score_and_citation_it_accepts() {
    let rubric = Rubric::load_default().unwrap();
    let citable: std::collections::BTreeSet<String> =
        ["transcript.jsonl".to_owned(), "manifest.json".to_owned()].into();
    let schema = council::reply_json_schema(&rubric, &citable);
    let accuracy = &schema["properties"]["scores"]["properties"]["accuracy"];
    assert_eq!(
        accuracy["properties"]["score"]["enum"],
        serde_json::json!([1, 2, 3, 4, 5])
    );
    assert_eq!(
        accuracy["properties"]["citations"]["items"]["enum"],
        serde_json::json!(["manifest.json", "transcript.jsonl"])
    );
    assert_eq!(
        schema["properties"]["scores"]["required"]
            .as_array()
            .unwrap()
            .len(),
        rubric.criteria().len()
    );
}
