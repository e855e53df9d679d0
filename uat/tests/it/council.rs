//! Council grading with the stub provider playing the judge seats (a real child process,
//! real HTTP, both wire protocols): agreeing, disagreeing, malformed and uncited seats,
//! absent seats, the judge budget, and what is written beside the bundle.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use common::{CRITERIA, TRANSCRIPT, bundle, good_reply, judges, registry_for, reply};
use studyloop_acceptance::approval::Approvals;
use studyloop_redaction::{RedactionRules, Redactor};
use studyloop_rubrics::Rubric;
use studyloop_stubs::Protocol;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::{
    self, CellContext, Graded, Grader, Roster, SeatApprovals, SeatStatus, StubTarget,
};

const CELL: &str = "journey::study_session";

struct World {
    rubric: Rubric,
    rules: RedactionRules,
    redactor: Redactor,
    /// The test roster's billed seats, approved (a test of the gate sets its own).
    approvals: Approvals,
}

impl World {
    fn new() -> Self {
        let rules = RedactionRules::load_default().unwrap();
        Self {
            rubric: Rubric::load_default().unwrap(),
            redactor: Redactor::new(&rules),
            rules,
            approvals: Approvals::parse(Some("judge:mixed/gw,judge:mixed/vendor")).unwrap(),
        }
    }

    fn grade(
        &self,
        roster: &Roster,
        council: &str,
        stub: Option<StubTarget>,
        env: &BTreeMap<String, String>,
        b: &Bundle,
    ) -> Graded {
        let grader = Grader {
            rubric: &self.rubric,
            rules: &self.rules,
            redactor: &self.redactor,
            roster,
            council,
            env,
            stub,
            cassette: None,
            approvals: SeatApprovals {
                approvals: &self.approvals,
                local_gateway: false,
            },
        };
        grader
            .grade(
                b,
                CellContext {
                    required: true,
                    skipped: false,
                },
            )
            .unwrap()
    }

    /// The shipped hermetic council (three stub seats, models stub-judge-a/b/c).
    fn hermetic(&self, replies: [String; 3]) -> (tempfile::TempDir, Bundle, Graded) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = bundle(tmp.path(), CELL, TRANSCRIPT);
        let [a, b, c] = replies;
        let stub = judges(
            tmp.path(),
            &[
                ("stub-judge-a", a),
                ("stub-judge-b", b),
                ("stub-judge-c", c),
            ],
        );
        let target = StubTarget {
            base_url: stub.base_url(),
            api_key: None,
        };
        let b = Bundle::open(&dir).unwrap();
        let graded = self.grade(
            &Roster::load_default().unwrap(),
            "hermetic",
            Some(target),
            &BTreeMap::new(),
            &b,
        );
        drop(stub);
        (tmp, b, graded)
    }
}

fn status(graded: &Graded, seat: &str) -> SeatStatus {
    graded
        .arbitration
        .seats
        .iter()
        .find(|s| s.id == seat)
        .unwrap()
        .status
        .clone()
}

fn unscored_reason(graded: &Graded, seat: &str) -> String {
    match status(graded, seat) {
        SeatStatus::Unscored { reason } => reason,
        other => panic!("{seat} should be unscored, was {other:?}"),
    }
}

#[test]
fn agreeing_seats_give_a_clean_grading_over_both_protocols() {
    let world = World::new();
    let tmp = tempfile::tempdir().unwrap();
    let dir = bundle(tmp.path(), CELL, TRANSCRIPT);
    let stub = judges(
        tmp.path(),
        &[
            ("stub-judge-a", good_reply(4)),
            ("stub-judge-b", good_reply(4)),
            ("stub-judge-c", good_reply(4)),
        ],
    );
    let target = StubTarget {
        base_url: stub.base_url(),
        api_key: None,
    };
    let b = Bundle::open(&dir).unwrap();
    let graded = world.grade(
        &Roster::load_default().unwrap(),
        "hermetic",
        Some(target),
        &BTreeMap::new(),
        &b,
    );
    let a = &graded.arbitration;
    assert!(!a.rejected(), "{:?}", a.rejections);
    assert_eq!(a.scored_seats(), 3);
    for c in CRITERIA {
        let r = &a.criteria[c];
        assert_eq!(
            (r.median, r.spread, r.disagreeing.len()),
            (Some(4.0), Some(0), 0),
            "{c}"
        );
    }
    assert_eq!(a.manifest_digest, b.digest());
    assert_eq!((a.council.as_str(), a.judge_turns), ("hermetic", 3));
    assert!(
        a.judge_output_tokens > 0,
        "the stub reports word-count usage"
    );

    // One request per seat, each for its own model, over both wire protocols.
    let records = stub.records().unwrap();
    let mut models: Vec<&str> = records.iter().filter_map(|r| r.model.as_deref()).collect();
    models.sort_unstable();
    assert_eq!(models, ["stub-judge-a", "stub-judge-b", "stub-judge-c"]);
    assert!(
        records.iter().any(|r| r.protocol == Protocol::Messages),
        "{records:?}"
    );
    assert!(
        records
            .iter()
            .any(|r| r.protocol == Protocol::ChatCompletions),
        "{records:?}"
    );

    let out = council::write(&b, &graded).unwrap();
    assert_eq!(out, b.arbitration_dir());
    assert_eq!(
        out.parent(),
        b.dir().parent(),
        "beside the bundle, never inside it"
    );
    assert!(
        b.problems().is_empty() && Bundle::open(&dir).unwrap().problems().is_empty(),
        "the bundle is untouched"
    );
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&out), 0o700);
    for f in [
        "ARBITRATION.md",
        "arbitration.json",
        "seats/stub-a.txt",
        "seats/stub-b.txt",
        "seats/stub-c.txt",
    ] {
        assert_eq!(mode(&out.join(f)), 0o600, "{f}");
    }
    let md = std::fs::read_to_string(out.join("ARBITRATION.md")).unwrap();
    assert!(
        md.contains("**GRADED**, 3 of 3 seat(s) scored") && md.contains("None fired."),
        "{md}"
    );
    let back: council::Arbitration =
        serde_json::from_slice(&std::fs::read(out.join("arbitration.json")).unwrap()).unwrap();
    assert_eq!(&back, a);
}

#[test]
fn disagreeing_seats_are_flagged_and_a_veto_applies_before_any_average() {
    let world = World::new();
    let split = reply(&[
        ("accuracy", 5, &["transcript.jsonl"]),
        ("pedagogy", 1, &["transcript.jsonl"]),
        ("session_lifecycle", 5, &["lifecycle/start.json"]),
        ("learner_record", 5, &["db/topics.json"]),
    ]);
    let (_tmp, _b, graded) = world.hermetic([good_reply(5), good_reply(4), split]);
    let a = &graded.arbitration;
    let pedagogy = &a.criteria["pedagogy"];
    assert_eq!((pedagogy.median, pedagogy.spread), (Some(4.0), Some(4)));
    assert_eq!(pedagogy.disagreeing, ["stub-c"]);
    assert!(a.criteria["accuracy"].disagreeing.is_empty());
    assert!(
        !a.rejected(),
        "a low pedagogy score is a disagreement, not a veto"
    );

    // One seat at the accuracy floor rejects, though the median accuracy is 4.
    let wrong = reply(&[
        ("accuracy", 1, &["transcript.jsonl"]),
        ("pedagogy", 4, &["transcript.jsonl"]),
        ("session_lifecycle", 4, &["lifecycle/start.json"]),
        ("learner_record", 4, &["db/topics.json"]),
    ]);
    let (_tmp, _b, graded) = world.hermetic([good_reply(4), good_reply(4), wrong]);
    let a = &graded.arbitration;
    assert_eq!(a.criteria["accuracy"].median, Some(4.0));
    assert_eq!(
        a.rejections
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>(),
        ["confidently-wrong"]
    );
    assert!(council::render(a).contains("**REJECTED**"));
}

#[test]
fn malformed_replies_make_a_seat_unscored_never_a_minimum() {
    let world = World::new();
    let fenced = format!("Here is my grading:\n```json\n{}\n```\n", good_reply(3));
    let mut out_of_scale = good_reply(3);
    out_of_scale = out_of_scale.replacen("\"score\":3", "\"score\":9", 1);
    let (_tmp, _b, graded) = world.hermetic([
        "The mentor was great, 5/5!".to_owned(),
        fenced,
        out_of_scale,
    ]);
    let a = &graded.arbitration;
    assert!(unscored_reason(&graded, "stub-a").contains("not the required JSON object"));
    assert!(
        matches!(status(&graded, "stub-b"), SeatStatus::Scored { .. }),
        "fenced JSON is accepted"
    );
    assert!(unscored_reason(&graded, "stub-c").contains("outside its scale"));
    assert_eq!(a.scored_seats(), 1);
    for c in CRITERIA {
        assert_eq!(
            a.criteria[c].median,
            Some(3.0),
            "only the scored seat counts: {c}"
        );
    }
    assert_eq!(
        a.rejections
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>(),
        ["too-few-seats"]
    );
    let md = council::render(a);
    assert!(
        md.contains("| stub-a | stub | stub-judge-a | unscored |"),
        "{md}"
    );
}

#[test]
fn uncited_or_wrongly_cited_scores_make_a_seat_unscored_with_every_problem() {
    let world = World::new();
    let uncited = reply(&[
        ("accuracy", 4, &[]),
        ("pedagogy", 4, &["notes/made-up.md"]),
        ("session_lifecycle", 4, &["lifecycle/start.json"]),
        ("learner_record", 4, &["transcript.jsonl"]),
    ]);
    let missing = reply(&[("accuracy", 4, &["transcript.jsonl"])]);
    let (_tmp, _b, graded) = world.hermetic([good_reply(4), uncited, missing]);
    let reason = unscored_reason(&graded, "stub-b");
    for needle in [
        "`accuracy` cites nothing",
        "`pedagogy` cites files not in the bundle inventory: notes/made-up.md",
        "`learner_record` cites none of its evidence (db/**)",
    ] {
        assert!(reason.contains(needle), "`{needle}` missing from: {reason}");
    }
    let reason = unscored_reason(&graded, "stub-c");
    assert!(
        reason.contains("`pedagogy` was not scored")
            && reason.contains("`learner_record` was not scored"),
        "{reason}"
    );
    assert_eq!(graded.arbitration.scored_seats(), 1);
}

#[test]
fn seats_without_credentials_are_absent_by_name_and_the_budget_caps_requests() {
    let world = World::new();
    let roster_text = "version: 1\ncouncils:\n  mixed:\n    budget: {max_turns: 2, max_output_tokens: 100000}\n    max_reply_tokens: 2000\n    request_timeout_secs: 30\n    seats:\n      - {id: gw, backend: gateway, model: judge-alias}\n      - {id: vendor, backend: direct, provider: anthropic, model: claude-sonnet-4-6}\n      - {id: s1, backend: stub, model: stub-judge-a, wire: openai_compat}\n      - {id: s2, backend: stub, model: stub-judge-b, wire: anthropic_compat}\n      - {id: s3, backend: stub, model: stub-judge-c, wire: openai_compat}\n";
    let roster = Roster::from_bytes(
        "council_test.yaml",
        roster_text.as_bytes(),
        "registry.json",
        registry_for(roster_text.as_bytes()).as_bytes(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = bundle(tmp.path(), CELL, TRANSCRIPT);
    let stub = judges(
        tmp.path(),
        &[
            ("stub-judge-a", good_reply(4)),
            ("stub-judge-b", good_reply(4)),
            ("stub-judge-c", good_reply(4)),
        ],
    );
    let b = Bundle::open(&dir).unwrap();

    // No stub URL and no keys: every seat is absent, by name, and nothing is sent.
    let graded = world.grade(&roster, "mixed", None, &BTreeMap::new(), &b);
    let reasons: Vec<String> = graded
        .arbitration
        .seats
        .iter()
        .map(|s| match &s.status {
            SeatStatus::Absent { reason } => reason.clone(),
            other => panic!("{} should be absent: {other:?}", s.id),
        })
        .collect();
    assert!(
        reasons[0].contains("LITELLM_API_KEY is unset"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("ANTHROPIC_API_KEY is unset"),
        "{reasons:?}"
    );
    assert!(reasons[2].contains("--stub-url"), "{reasons:?}");
    assert_eq!(graded.arbitration.judge_turns, 0);

    // The gateway seat reaches the stub through LITELLM_BASE_URL; the budget allows two
    // requests, so the third seat asked is never sent.
    let env: BTreeMap<String, String> = [
        ("LITELLM_API_KEY".to_owned(), "gateway-test-key".to_owned()),
        ("LITELLM_BASE_URL".to_owned(), stub.base_url()),
    ]
    .into();
    let target = StubTarget {
        base_url: stub.base_url(),
        api_key: None,
    };
    let graded = world.grade(&roster, "mixed", Some(target), &env, &b);
    let gw = status(&graded, "gw");
    assert!(
        matches!(gw, SeatStatus::Unscored { .. }),
        "the stub has no reply for `judge-alias`: {gw:?}"
    );
    assert!(matches!(status(&graded, "s1"), SeatStatus::Scored { .. }));
    assert!(unscored_reason(&graded, "s2").contains("judge budget is spent"));
    assert!(unscored_reason(&graded, "s3").contains("judge budget is spent"));
    assert_eq!(graded.arbitration.judge_turns, 2);
    assert_eq!(
        stub.records().unwrap().len(),
        2,
        "nothing is sent past the budget"
    );
}

/// Issue 29: the council asks the one policy before each seat. A seat that bills
/// (gateway, direct) and is not approved is absent with the named skip reason (the
/// capability, its reasons, the entry that approves it), and the counting stub that
/// plays the gateway receives 0 requests, however the approval falls short: none,
/// another seat's, a prefix, one reason short. Stub seats bill nothing and still
/// score. Approved, the same gateway seat is asked (1 request).
#[test]
fn an_unapproved_judge_seat_is_absent_by_name_and_never_asked() {
    let roster_text = "version: 1\ncouncils:\n  mixed:\n    budget: {max_turns: 5, max_output_tokens: 100000}\n    max_reply_tokens: 2000\n    request_timeout_secs: 30\n    seats:\n      - {id: gw, backend: gateway, model: stub-judge-a}\n      - {id: vendor, backend: direct, provider: anthropic, model: claude-sonnet-4-6}\n      - {id: s1, backend: stub, model: stub-judge-b, wire: openai_compat}\n";
    let roster = Roster::from_bytes(
        "council_test.yaml",
        roster_text.as_bytes(),
        "registry.json",
        registry_for(roster_text.as_bytes()).as_bytes(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = bundle(tmp.path(), CELL, TRANSCRIPT);
    let b = Bundle::open(&dir).unwrap();
    let mut world = World::new();
    let approvals = [
        "",
        "judge:mixed/vendor",
        "judge:mixed/g",
        "judge:mixed/gw[chargeable]",
        "harness:codex,judge:other/gw",
    ];
    for (i, approve) in approvals.into_iter().enumerate() {
        // A fresh stub (and request log) per case.
        let here = tmp.path().join(format!("case-{i}"));
        std::fs::create_dir(&here).unwrap();
        let stub = judges(
            &here,
            &[
                ("stub-judge-a", good_reply(4)),
                ("stub-judge-b", good_reply(4)),
            ],
        );
        // The gateway seat would reach the stub (key and URL set): only the policy
        // stands between it and a request.
        let env: BTreeMap<String, String> = [
            ("LITELLM_API_KEY".to_owned(), "gateway-test-key".to_owned()),
            ("LITELLM_BASE_URL".to_owned(), stub.base_url()),
        ]
        .into();
        world.approvals = Approvals::parse(Some(approve)).unwrap();
        let target = StubTarget {
            base_url: stub.base_url(),
            api_key: None,
        };
        let graded = world.grade(&roster, "mixed", Some(target), &env, &b);
        for (seat, other) in [("gw", "vendor"), ("vendor", "gw")] {
            let SeatStatus::Absent { reason } = status(&graded, seat) else {
                if approve == "judge:mixed/vendor" && seat == "vendor" {
                    continue;
                }
                panic!("{approve:?}: {seat} should be absent")
            };
            if approve == "judge:mixed/vendor" && seat == "vendor" {
                // Approved, so asked for its key next (unset): absent for the key.
                assert!(reason.contains("ANTHROPIC_API_KEY is unset"), "{reason}");
                continue;
            }
            assert!(
                reason.contains(&format!("capability `judge:mixed/{seat}` is not approved"))
                    && reason.contains("chargeable (bills a vendor)")
                    && reason.contains(&format!("add the entry `judge:mixed/{seat}`"))
                    && !reason.contains(&format!("judge:mixed/{other}")),
                "{approve:?}: {reason}"
            );
        }
        assert!(matches!(status(&graded, "s1"), SeatStatus::Scored { .. }));
        let asked: Vec<String> = stub
            .records()
            .unwrap()
            .iter()
            .map(|r| r.model.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            asked,
            ["stub-judge-b"],
            "{approve:?}: only the stub seat is asked"
        );
    }
    let here = tmp.path().join("approved");
    std::fs::create_dir(&here).unwrap();
    let stub = judges(
        &here,
        &[
            ("stub-judge-a", good_reply(4)),
            ("stub-judge-b", good_reply(4)),
        ],
    );
    let env: BTreeMap<String, String> = [
        ("LITELLM_API_KEY".to_owned(), "gateway-test-key".to_owned()),
        ("LITELLM_BASE_URL".to_owned(), stub.base_url()),
    ]
    .into();
    world.approvals = Approvals::parse(Some("judge:mixed/gw")).unwrap();
    let graded = world.grade(&roster, "mixed", None, &env, &b);
    assert!(matches!(status(&graded, "gw"), SeatStatus::Scored { .. }));
    assert_eq!(
        stub.records().unwrap().len(),
        1,
        "the approved seat is asked"
    );
}

#[test]
fn seats_see_redacted_evidence_only_and_what_they_say_is_redacted_too() {
    let world = World::new();
    let secret = format!("sk-proj-{}", "Zq9".repeat(20));
    let transcript = format!(
        "{{\"learner\":\"my key is {secret} and I work in /home/alice/uni\",\"mentor_reply\":\"Never share keys.\"}}\n"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = bundle(tmp.path(), CELL, &transcript);
    let b = Bundle::open(&dir).unwrap();
    let redactor = world
        .redactor
        .clone()
        .with_secret("CANARY", "canary-plain-value-123")
        .unwrap();
    let summary = redactor
        .summary(&studyloop_uat::bundle_summary::bundle_summary(&b))
        .unwrap();
    let prompt = council::build_prompt(&world.rubric, &summary, &b, &redactor);
    let all = format!("{}{}", prompt.system, prompt.user);
    assert!(
        !all.contains(&secret) && !all.contains("/home/alice"),
        "{all}"
    );
    assert!(all.contains("[SECRET:openai-key]") && all.contains("[HOME]/uni"));
    assert!(
        all.contains("transcript.jsonl") && all.contains("db/topics.json"),
        "the inventory is listed"
    );
    assert!(
        all.contains("## How a seat grades"),
        "the rubric body is the instructions"
    );

    let leaky = good_reply(4).replace("judged from the cited turns", "as seen in /home/alice/uni");
    let (_tmp, _b, graded) = world.hermetic([leaky, good_reply(4), good_reply(4)]);
    let SeatStatus::Scored { scores } = status(&graded, "stub-a") else {
        panic!("stub-a should score")
    };
    assert!(
        scores["accuracy"].rationale.contains("[HOME]/uni"),
        "{:?}",
        scores["accuracy"]
    );
    assert!(
        graded
            .replies
            .iter()
            .all(|(_, text)| !text.contains("/home/alice"))
    );
}
