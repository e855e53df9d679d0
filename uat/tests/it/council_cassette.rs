//! Council seats through a cassette: a grading recorded against stub judge seats
//! replays for a later bundle of the same conversation (a new run id, date and
//! commit: what a replayed journey writes) with identical scores and no connection,
//! misses loudly for a different conversation, and a replayed bundle never signs off.

use crate::common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{TRANSCRIPT, bundle, good_reply, judges};
use studyloop_actors::llm::cassette::{Cassette, CassetteMode, CassetteSetting};
use studyloop_redaction::{RedactionRules, Redactor};
use studyloop_rubrics::Rubric;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::council::{CellContext, Graded, Grader, Roster, SeatStatus, StubTarget};

const CELL: &str = "journey::study_session";

fn grade(b: &Bundle, base_url: String, cassette: &Cassette) -> Graded {
    let rules = RedactionRules::load_default().unwrap();
    let redactor = Redactor::new(&rules);
    let rubric = Rubric::load_default().unwrap();
    let roster = Roster::load_default().unwrap();
    let grader = Grader {
        rubric: &rubric,
        rules: &rules,
        redactor: &redactor,
        roster: &roster,
        council: "hermetic",
        env: &BTreeMap::<String, String>::new(),
        stub: Some(StubTarget {
            base_url,
            api_key: None,
        }),
        cassette: Some(cassette),
        // Stub seats only: they bill nothing, so nothing needs approving.
        approvals: studyloop_uat::council::SeatApprovals {
            approvals: &studyloop_acceptance::approval::Approvals::default(),
            local_gateway: false,
        },
    };
    let cell = CellContext {
        required: true,
        skipped: false,
    };
    grader.grade(b, cell).unwrap()
}

fn open(mode: CassetteMode, file: &std::path::Path) -> Cassette {
    let setting = CassetteSetting {
        mode,
        file: Some(file.to_owned()),
    };
    Cassette::open(&setting, None).unwrap()
}

/// A listener that counts connections and answers none.
fn trap() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, count)
}

fn scores(g: &Graded) -> Vec<(String, String)> {
    g.arbitration
        .seats
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                format!("{:?} {:?}", s.status, s.output_tokens),
            )
        })
        .collect()
}

/// Recorded once, replayed for a new bundle of the same conversation: the same
/// seats, statuses, scores and token counts, with zero connections to the seats'
/// endpoint. Before cassettes the replay's seats all failed on the dead endpoint.
#[test]
fn a_grading_replays_for_a_rerun_of_the_same_conversation_without_calling_a_seat() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("cassette.jsonl");
    let stub = judges(
        tmp.path(),
        &[
            ("stub-judge-a", good_reply(4)),
            ("stub-judge-b", good_reply(3)),
            ("stub-judge-c", good_reply(5)),
        ],
    );
    let first = Bundle::open(&bundle(&tmp.path().join("a"), CELL, TRANSCRIPT)).unwrap();
    let recorded = grade(&first, stub.base_url(), &open(CassetteMode::Record, &file));
    assert_eq!(
        recorded.arbitration.scored_seats(),
        3,
        "{:?}",
        scores(&recorded)
    );
    drop(stub);

    let (url, connections) = trap();
    let replayer = open(CassetteMode::Replay, &file);
    // A second bundle: another run id and date, the same conversation.
    let again = Bundle::open(&bundle(&tmp.path().join("b"), CELL, TRANSCRIPT)).unwrap();
    assert_ne!(again.manifest().run_id, first.manifest().run_id);
    let replayed = grade(&again, url.clone(), &replayer);
    assert_eq!(scores(&replayed), scores(&recorded));
    assert_eq!(
        replayed.arbitration.criteria, recorded.arbitration.criteria,
        "the arbitrated grades"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0, "a seat was called");

    // Another conversation is another question: every seat misses, loudly, and
    // still nothing is sent.
    let other = TRANSCRIPT.replace("closure", "lifetime");
    let differs = Bundle::open(&bundle(&tmp.path().join("c"), CELL, &other)).unwrap();
    let missed = grade(&differs, url, &replayer);
    for seat in &missed.arbitration.seats {
        let SeatStatus::Unscored { reason } = &seat.status else {
            panic!("{} should miss: {:?}", seat.id, seat.status);
        };
        assert!(
            reason.contains("cassette miss") && reason.contains("STUDYLOOP_ACC_CASSETTE=record"),
            "{reason}"
        );
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0, "a seat was called");
}
