//! The application layer over real files and a real SQLite DB: the
//! readiness gate, each refusal (and that it writes nothing), both sinks of
//! `evaluate record=true`, reindex, hostile documents, and concurrent writers.

use std::sync::Arc;

use serde_json::json;

use super::*;

fn app() -> (tempfile::TempDir, PlanApp) {
    let dir = tempfile::tempdir().unwrap();
    let app = PlanApp::new(dir.path().join("plans"), dir.path().join("db/sessions.db"));
    (dir, app)
}

fn ready_answers() -> serde_json::Value {
    json!({"why": "reports at work", "success": ["write a running total"],
           "milestones": ["OVER clause", {"title": "Frames", "concepts": ["ROWS", "RANGE"]}]})
}

fn create(app: &PlanApp, id: &str, status: &str) -> Result<Plan, PlanError> {
    app.create(&CreateRequest {
        title: "SQL windows".into(),
        answers: ready_answers(),
        plan_id: Some(id.into()),
        status: Some(status.into()),
        request_id: None,
    })
}

#[test]
fn lifecycle_and_both_sinks() {
    let (_d, app) = app();
    let p = create(&app, "sql-windows", "draft").unwrap();
    assert_eq!((p.status, readiness(&p).ready), (PlanStatus::Draft, true));
    app.set_status("sql-windows", IfRevision::Unchecked, "active")
        .unwrap();
    let ev = app
        .evaluate("sql-windows", "start", "s-1", true, IfRevision::Unchecked)
        .unwrap();
    assert_eq!(
        (ev["db_write"].as_str(), ev["document_write"].as_str()),
        (Some("saved"), Some("saved"))
    );
    assert_eq!(ev["recording_complete"], json!(true));
    assert!(
        ev["markdown"]
            .as_str()
            .unwrap()
            .contains("| start | s-1 | 0/2 |")
    );
    let p = app
        .set_milestone("sql-windows", IfRevision::Unchecked, 0, true)
        .unwrap();
    assert_eq!(p.milestone_done(), 1);
    // Idempotent: a set, never a toggle.
    assert_eq!(
        app.set_milestone("sql-windows", IfRevision::Unchecked, 0, true)
            .unwrap()
            .milestone_done(),
        1
    );
    let d = app.detail("sql-windows", true, Some(20)).unwrap();
    assert_eq!(d["checkpoints"].as_array().unwrap().len(), 1);
    assert!(
        d["markdown"]
            .as_str()
            .unwrap()
            .contains("- [x] **OVER clause**")
    );
    let preview = app
        .evaluate("sql-windows", "mid", "", false, IfRevision::Unchecked)
        .unwrap();
    assert_eq!(preview["db_write"], json!("not_requested"));
    assert_eq!(
        app.history("sql-windows", 200).unwrap().len(),
        1,
        "a preview writes nothing"
    );
    // Learning records are idempotent by title.
    app.record_learning(
        "sql-windows",
        IfRevision::Unchecked,
        "Frames",
        "ROWS vs RANGE",
        "active",
    )
    .unwrap();
    app.record_learning(
        "sql-windows",
        IfRevision::Unchecked,
        "Frames",
        "ROWS vs RANGE, again",
        "resolved",
    )
    .unwrap();
    let p = app.get("sql-windows").unwrap();
    assert_eq!(p.records.len(), 1);
    assert_eq!(p.records[0].status, "resolved");
    // Delete needs confirmation; the checkpoint log outlives the plan.
    assert!(
        app.delete("sql-windows", IfRevision::Unchecked, false)
            .unwrap_err()
            .to_string()
            .starts_with("invalid:")
    );
    app.delete("sql-windows", IfRevision::Unchecked, true)
        .unwrap();
    assert!(matches!(
        app.get("sql-windows"),
        Err(PlanError::NotFound { .. })
    ));
    assert_eq!(app.history("sql-windows", 20).unwrap().len(), 1);
}

#[test]
fn every_refusal_has_its_prefix_and_writes_nothing() {
    let (_d, app) = app();
    let bare = app
        .create(&CreateRequest {
            title: "Bare".into(),
            answers: json!({}),
            plan_id: Some("bare".into()),
            status: None,
            request_id: None,
        })
        .unwrap();
    let before = std::fs::read_to_string(app.doc_path(&bare.id)).unwrap();
    let cases: Vec<(&str, Result<Plan, PlanError>)> = vec![
        (
            "not_found:",
            app.set_status("nope", IfRevision::Unchecked, "paused"),
        ),
        (
            "invalid_id:",
            app.set_status("../bare", IfRevision::Unchecked, "paused"),
        ),
        ("invalid_id:", app.get("Bare")),
        ("conflict:", create(&app, "bare", "draft")),
        (
            "invalid:",
            app.set_status("bare", IfRevision::Unchecked, "finished"),
        ),
        (
            "not_ready:",
            app.set_status("bare", IfRevision::Unchecked, "active"),
        ),
        (
            "invalid_milestone:",
            app.set_milestone("bare", IfRevision::Unchecked, 0, true),
        ),
        (
            "invalid_milestone:",
            app.set_milestone("bare", IfRevision::Unchecked, -1, true),
        ),
        (
            "invalid:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"energy_floor": 11})),
            ),
        ),
        (
            "invalid:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"review_cadence_days": 0})),
            ),
        ),
        (
            "invalid:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"target_date": "2026-02-30"})),
            ),
        ),
        (
            "invalid:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"colour": "red"})),
            ),
        ),
        (
            "invalid:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"why": "x".repeat(2001)})),
            ),
        ),
        (
            "not_ready:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"why": "w", "status": "active"})),
            ),
        ),
        (
            "invalid:",
            app.update(
                "bare",
                IfRevision::Unchecked,
                &PlanPatch(json!({"milestones": vec!["m"; 101]})),
            ),
        ),
    ];
    for (prefix, r) in cases {
        let msg = r.unwrap_err().to_string();
        assert!(msg.starts_with(prefix), "want {prefix}: {msg}");
    }
    let ne = app
        .set_status("bare", IfRevision::Unchecked, "active")
        .unwrap_err();
    let PlanError::NotReady { blockers, .. } = &ne else {
        panic!("{ne}")
    };
    assert_eq!(blockers.len(), 3, "{blockers:?}");
    assert!(ne.to_string().contains(&blockers[0]));
    assert!(
        app.evaluate("bare", "later", "", true, IfRevision::Unchecked)
            .unwrap_err()
            .to_string()
            .starts_with("invalid:")
    );
    assert_eq!(
        std::fs::read_to_string(app.doc_path(&bare.id)).unwrap(),
        before,
        "refusals wrote nothing"
    );
    // The ready draft can be activated with all fields in one update.
    let p = app
        .update(
            "bare",
            IfRevision::Unchecked,
            &PlanPatch(
                json!({"why": "w", "success": ["s"], "milestones": ["m"], "status": "active"}),
            ),
        )
        .unwrap();
    assert_eq!(p.status, PlanStatus::Active);
}

#[test]
fn malformed_documents_are_reported_by_line_and_never_overwritten() {
    let (_d, app) = app();
    create(&app, "sql-windows", "draft").unwrap();
    let path = app.doc_path(&PlanId::parse("sql-windows").unwrap());
    let broken = std::fs::read_to_string(&path)
        .unwrap()
        .replace("- [ ] **Frames**", "- [ ] Frames");
    std::fs::write(&path, &broken).unwrap();
    let err = app
        .set_milestone("sql-windows", IfRevision::Unchecked, 0, true)
        .unwrap_err()
        .to_string();
    let line = broken
        .lines()
        .position(|l| l.starts_with("- [ ] Frames"))
        .unwrap()
        + 1;
    assert!(
        err.starts_with("plan_error:") && err.contains(&format!("sql-windows.md:{line}:")),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    let (plans, problems) = app.list(None).unwrap();
    assert!(plans.is_empty() && problems.len() == 1, "{problems:?}");
}

#[test]
fn hostile_files_do_not_hang_or_escape() {
    let (d, app) = app();
    std::fs::create_dir_all(app.dir()).unwrap();
    // A FIFO in place of a document: refused at once, no hang.
    let fifo = app.dir().join("fifo.md");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let t = std::time::Instant::now();
    assert!(
        app.get("fifo")
            .unwrap_err()
            .to_string()
            .starts_with("plan_error:")
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(2));
    // A symlink to a file elsewhere is not followed.
    let outside = d.path().join("secret.md");
    std::fs::write(&outside, "---\nid: link\ntitle: x\n---\n").unwrap();
    std::os::unix::fs::symlink(&outside, app.dir().join("link.md")).unwrap();
    assert!(app.get("link").is_err());
    assert!(app.delete("link", IfRevision::Unchecked, true).is_err());
    assert!(outside.exists());
    // A huge document is refused, not read whole.
    std::fs::write(
        app.dir().join("huge.md"),
        vec![b'a'; super::doc::limits::DOC_BYTES + 10],
    )
    .unwrap();
    assert!(
        app.get("huge")
            .unwrap_err()
            .to_string()
            .contains("larger than")
    );
}

#[test]
fn reindex_rebuilds_from_documents() {
    let (_d, app) = app();
    for i in 0..5 {
        create(&app, &format!("p{i}"), "draft").unwrap();
    }
    std::fs::remove_file(app.doc_path(&PlanId::parse("p0").unwrap())).unwrap();
    let (n, problems) = app.reindex().unwrap();
    assert_eq!((n, problems.len()), (4, 0));
    let store = crate::store::Store::open(&app.db).unwrap();
    assert_eq!(
        store.indexed_plan_ids().unwrap(),
        vec!["p1", "p2", "p3", "p4"]
    );
}

/// Writers racing on one plan (as the CLI, web and MCP doors would) lose no
/// update: each adds its own learning record; all must survive.
#[test]
fn concurrent_writers_lose_no_update() {
    let (_d, app) = app();
    create(&app, "shared", "draft").unwrap();
    let app = Arc::new(app);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let app = app.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    app.record_learning(
                        "shared",
                        IfRevision::Unchecked,
                        &format!("w{t}-{i}"),
                        "b",
                        "active",
                    )
                    .unwrap();
                    if i % 3 == 0 {
                        app.set_milestone(
                            "shared",
                            IfRevision::Unchecked,
                            i64::from(t % 2),
                            t % 4 < 2,
                        )
                        .unwrap();
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(app.get("shared").unwrap().records.len(), 80);
}

/// Hostile text in every free-text field (markup, table pipes, headings,
/// newlines, controls, stars) must always leave a document that parses back
/// to what was saved: no user input can make a plan unreadable.
#[test]
fn hostile_text_always_round_trips() {
    let (_d, app) = app();
    let alphabet: Vec<char> = "ab *|#-[]x()\n\r\t:—,;\"\\`\u{7}\u{1b}é---"
        .chars()
        .collect();
    let mut seed: u64 = 0x5eed;
    let mut text = |len: usize| -> String {
        (0..len)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                alphabet[usize::try_from(seed >> 33).unwrap() % alphabet.len()]
            })
            .collect()
    };
    let mut failures = Vec::new();
    for i in 0..150 {
        let id = format!("h{i}");
        let answers = json!({"why": text(12), "success": [text(8)], "constraints": text(10), "out_of_scope": text(6),
            "notes": text(20), "topics": [text(5)], "resources": [text(7)],
            "milestones": [{"title": format!("m{}", text(9)), "concepts": [text(6), text(4)]}, format!("n{}", text(5))]});
        let title = format!("t{}", text(10));
        match app.create(&CreateRequest {
            title,
            answers,
            plan_id: Some(id.clone()),
            status: None,
            request_id: None,
        }) {
            Ok(_) | Err(PlanError::Invalid(_)) => {}
            Err(e) => failures.push(format!("create {id}: {e}")),
        }
        if app.get(&id).is_err() {
            continue;
        }
        let _ = app.record_learning(
            &id,
            IfRevision::Unchecked,
            &format!("r{}", text(8)),
            &text(15),
            "active",
        );
        let saved = app.get(&id);
        match saved {
            Ok(p) => {
                let again =
                    super::parse::parse(std::path::Path::new("x.md"), &p.render(), None).unwrap();
                if again != p {
                    failures.push(format!("{id}: re-render differs"));
                }
            }
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 150 unreadable: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
}

/// Issue 30 item 2: every change that names a revision the plan is no longer at is
/// refused with the current one, and writes nothing: not the document, not the
/// checkpoint log. The same change with the current revision applies.
#[test]
fn a_stale_revision_is_refused_with_the_current_one_and_writes_nothing() {
    let (_d, app) = app();
    let first = create(&app, "sql-windows", "draft").unwrap().revision();
    assert_eq!(app.get("sql-windows").unwrap().revision(), first);
    assert!(
        first.len() == 17 && first.starts_with('r'),
        "revision `{first}`"
    );
    let now = app
        .set_status("sql-windows", IfRevision::Given(&first), "paused")
        .unwrap()
        .revision();
    assert_ne!(now, first, "a write gives a new revision");
    assert_eq!(app.get("sql-windows").unwrap().revision(), now);
    let path = app.doc_path(&PlanId::parse("sql-windows").unwrap());
    let before = std::fs::read(&path).unwrap();
    let stale = IfRevision::Given(&first);
    let patch = PlanPatch(json!({"notes": "overwritten"}));
    let results: Vec<(&str, Result<(), PlanError>)> = vec![
        ("update", app.update("sql-windows", stale, &patch).map(drop)),
        (
            "status",
            app.set_status("sql-windows", stale, "draft").map(drop),
        ),
        (
            "milestone",
            app.set_milestone("sql-windows", stale, 0, true).map(drop),
        ),
        (
            "toggle",
            app.toggle_milestone("sql-windows", stale, 1).map(drop),
        ),
        (
            "record",
            app.record_learning("sql-windows", stale, "Frames", "b", "active")
                .map(drop),
        ),
        (
            "evaluate",
            app.evaluate("sql-windows", "mid", "", true, stale)
                .map(drop),
        ),
        ("delete", app.delete("sql-windows", stale, true).map(drop)),
    ];
    for (what, r) in results {
        match r {
            Err(PlanError::StaleRevision { id, given, current }) => {
                assert_eq!(
                    (id.as_str(), given.as_str(), current.as_str()),
                    ("sql-windows", first.as_str(), now.as_str()),
                    "{what}"
                );
            }
            other => panic!("{what}: a stale revision was not refused: {other:?}"),
        }
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "a refused change wrote the document"
    );
    assert_eq!(
        app.history("sql-windows", 200).unwrap().len(),
        0,
        "a refused evaluation logged a checkpoint"
    );
    // A made-up revision is refused the same way; the current one applies.
    assert!(matches!(
        app.set_status(
            "sql-windows",
            IfRevision::Given("r0000000000000000"),
            "draft"
        ),
        Err(PlanError::StaleRevision { .. })
    ));
    let after = app
        .set_milestone("sql-windows", IfRevision::Given(&now), 0, true)
        .unwrap();
    assert_eq!(after.milestone_done(), 1);
    // A hand edit the parser reads as a change moves the revision too, so a change
    // computed before it is refused rather than written over it.
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("OVER clause", "OVER clause, by hand");
    std::fs::write(&path, edited).unwrap();
    let by_hand = app.get("sql-windows").unwrap().revision();
    assert_ne!(by_hand, after.revision());
    assert!(matches!(
        app.set_status("sql-windows", IfRevision::Given(&after.revision()), "draft"),
        Err(PlanError::StaleRevision { .. })
    ));
}

fn create_once(app: &PlanApp, request_id: &str, title: &str) -> Result<Plan, PlanError> {
    app.create(&CreateRequest {
        title: title.into(),
        answers: ready_answers(),
        plan_id: None,
        status: None,
        request_id: Some(request_id.into()),
    })
}

fn documents(app: &PlanApp) -> usize {
    std::fs::read_dir(app.dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".md")
        })
        .count()
}

/// Issue 30 item 2: a retried create returns the plan the first one made and creates
/// nothing; the same id with another body, or after the plan was deleted, is a
/// conflict; a malformed id is refused before anything is written.
#[test]
fn a_retried_create_returns_the_first_plan_and_creates_nothing() {
    let (_d, app) = app();
    let first = create_once(&app, "0b9d-req-1", "SQL windows").unwrap();
    let again = create_once(&app, "0b9d-req-1", "SQL windows").unwrap();
    assert_eq!((again.id.as_str(), documents(&app)), ("sql-windows", 1));
    assert_eq!(again.revision(), first.revision());
    // Without the ledger, the retry is a second create: refused as an existing id
    // here, a second plan where the id is derived anew (a markdown create).
    assert!(matches!(
        create_once(&app, "0b9d-req-2", "SQL windows"),
        Err(PlanError::Conflict { .. })
    ));
    match create_once(&app, "0b9d-req-1", "Another title") {
        Err(PlanError::RequestReused {
            request_id,
            command,
        }) => assert_eq!(
            (request_id.as_str(), command.as_str()),
            ("0b9d-req-1", "plan.new")
        ),
        other => panic!("a reused request id was not refused: {other:?}"),
    }
    assert_eq!(documents(&app), 1);
    let md = first.render().replace("sql-windows", "md-plan");
    let a = app.create_from_markdown(&md, Some("md-1")).unwrap();
    let b = app.create_from_markdown(&md, Some("md-1")).unwrap();
    assert_eq!(
        (a.id.as_str(), b.id.as_str(), documents(&app)),
        ("md-plan", "md-plan", 2)
    );
    app.delete("sql-windows", IfRevision::Unchecked, true)
        .unwrap();
    match create_once(&app, "0b9d-req-1", "SQL windows") {
        Err(PlanError::RequestDone { request_id, id }) => {
            assert_eq!(
                (request_id.as_str(), id.as_str()),
                ("0b9d-req-1", "sql-windows")
            );
        }
        other => panic!("a retry after the delete re-created the plan: {other:?}"),
    }
    assert_eq!(documents(&app), 1, "the late retry created nothing");
    for bad in [
        "",
        "Upper",
        "-lead",
        "a b",
        "a/b",
        &"x".repeat(REQUEST_ID_MAX + 1),
    ] {
        match create_once(&app, bad, "Bad ids") {
            Err(PlanError::Invalid(m)) => assert!(m.contains("request_id"), "{bad}: {m}"),
            other => panic!("request id `{bad}` was not refused: {other:?}"),
        }
    }
    assert!(create_once(&app, &"x".repeat(REQUEST_ID_MAX), "Longest id").is_ok());
    assert_eq!(documents(&app), 2);
}

/// Retries racing each other (a client that timed out and sent again while the first
/// was still running) create one plan, and each is answered with it.
#[test]
fn racing_retries_of_one_request_create_one_plan() {
    let (_d, app) = app();
    let app = Arc::new(app);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let app = app.clone();
            std::thread::spawn(move || {
                create_once(&app, "race-1", "Racing plan").map(|p| p.id.to_string())
            })
        })
        .collect();
    for h in threads {
        assert_eq!(h.join().unwrap().unwrap(), "racing-plan");
    }
    assert_eq!(documents(&app), 1);
}
