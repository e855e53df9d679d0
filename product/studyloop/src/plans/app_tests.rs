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
    })
}

#[test]
fn lifecycle_and_both_sinks() {
    let (_d, app) = app();
    let p = create(&app, "sql-windows", "draft").unwrap();
    assert_eq!((p.status, readiness(&p).ready), (PlanStatus::Draft, true));
    app.set_status("sql-windows", "active").unwrap();
    let ev = app.evaluate("sql-windows", "start", "s-1", true).unwrap();
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
    let p = app.set_milestone("sql-windows", 0, true).unwrap();
    assert_eq!(p.milestone_done(), 1);
    // Idempotent: a set, never a toggle.
    assert_eq!(
        app.set_milestone("sql-windows", 0, true)
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
    let preview = app.evaluate("sql-windows", "mid", "", false).unwrap();
    assert_eq!(preview["db_write"], json!("not_requested"));
    assert_eq!(
        app.history("sql-windows", 200).unwrap().len(),
        1,
        "a preview writes nothing"
    );
    // Learning records are idempotent by title.
    app.record_learning("sql-windows", "Frames", "ROWS vs RANGE", "active")
        .unwrap();
    app.record_learning("sql-windows", "Frames", "ROWS vs RANGE, again", "resolved")
        .unwrap();
    let p = app.get("sql-windows").unwrap();
    assert_eq!(p.records.len(), 1);
    assert_eq!(p.records[0].status, "resolved");
    // Delete needs confirmation; the checkpoint log outlives the plan.
    assert!(
        app.delete("sql-windows", false)
            .unwrap_err()
            .to_string()
            .starts_with("invalid:")
    );
    app.delete("sql-windows", true).unwrap();
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
        })
        .unwrap();
    let before = std::fs::read_to_string(app.doc_path(&bare.id)).unwrap();
    let cases: Vec<(&str, Result<Plan, PlanError>)> = vec![
        ("not_found:", app.set_status("nope", "paused")),
        ("invalid_id:", app.set_status("../bare", "paused")),
        ("invalid_id:", app.get("Bare")),
        ("conflict:", create(&app, "bare", "draft")),
        ("invalid:", app.set_status("bare", "finished")),
        ("not_ready:", app.set_status("bare", "active")),
        ("invalid_milestone:", app.set_milestone("bare", 0, true)),
        ("invalid_milestone:", app.set_milestone("bare", -1, true)),
        (
            "invalid:",
            app.update("bare", &PlanPatch(json!({"energy_floor": 11}))),
        ),
        (
            "invalid:",
            app.update("bare", &PlanPatch(json!({"review_cadence_days": 0}))),
        ),
        (
            "invalid:",
            app.update("bare", &PlanPatch(json!({"target_date": "2026-02-30"}))),
        ),
        (
            "invalid:",
            app.update("bare", &PlanPatch(json!({"colour": "red"}))),
        ),
        (
            "invalid:",
            app.update("bare", &PlanPatch(json!({"why": "x".repeat(2001)}))),
        ),
        (
            "not_ready:",
            app.update("bare", &PlanPatch(json!({"why": "w", "status": "active"}))),
        ),
        (
            "invalid:",
            app.update("bare", &PlanPatch(json!({"milestones": vec!["m"; 101]}))),
        ),
    ];
    for (prefix, r) in cases {
        let msg = r.unwrap_err().to_string();
        assert!(msg.starts_with(prefix), "want {prefix}: {msg}");
    }
    let ne = app.set_status("bare", "active").unwrap_err();
    let PlanError::NotReady { blockers, .. } = &ne else {
        panic!("{ne}")
    };
    assert_eq!(blockers.len(), 3, "{blockers:?}");
    assert!(ne.to_string().contains(&blockers[0]));
    assert!(
        app.evaluate("bare", "later", "", true)
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
        .set_milestone("sql-windows", 0, true)
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
    assert!(app.delete("link", true).is_err());
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
                    app.record_learning("shared", &format!("w{t}-{i}"), "b", "active")
                        .unwrap();
                    if i % 3 == 0 {
                        app.set_milestone("shared", i64::from(t % 2), t % 4 < 2)
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
        }) {
            Ok(_) | Err(PlanError::Invalid(_)) => {}
            Err(e) => failures.push(format!("create {id}: {e}")),
        }
        if app.get(&id).is_err() {
            continue;
        }
        let _ = app.record_learning(&id, &format!("r{}", text(8)), &text(15), "active");
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
