//! The plan and now routes over real HTTP on a loopback port, through the
//! guard, against a scratch HOME (real config, real files, real SQLite).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::security::Password;
use super::server::{AppState, router, serve};
use super::server_tests::rt;
use super::slot::Slot;
use super::testkit::{self, Response};
use crate::context::Ctx;
use crate::env::Env;

pub(super) async fn server_at(home: &Path, plans: Option<&Path>) -> String {
    let mut pairs = vec![("HOME".to_owned(), home.display().to_string())];
    if let Some(p) = plans {
        pairs.push(("STUDYLOOP_PLANS_DIR".into(), p.display().to_string()));
    }
    let ctx = Ctx {
        env: Env::from_pairs(pairs),
        cwd: PathBuf::from("/"),
        exe: PathBuf::from("/bin/false"),
    };
    let slot = Slot::new(Arc::new(|_: &super::slot::LiveInfo, _: &str| Ok(())));
    let state = Arc::new(AppState::new(ctx, slot, Vec::new()));
    let app = router(state.clone(), Password(None));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("127.0.0.1:{}", listener.local_addr().expect("addr").port());
    testkit::register(&base, state.token.value());
    tokio::spawn(serve(listener, app, state, std::future::pending()));
    base
}

async fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> Response {
    testkit::request(base, method, path, body.as_ref()).await
}

#[test]
fn plan_routes_serve_the_reference_codes_and_bodies() {
    let home = tempfile::tempdir().unwrap();
    crate::config::init(&home.path().join(".config/studyloop/config.yaml"), false).unwrap();
    let plans = home.path().join("plans");
    rt().block_on(async {
        let b = server_at(home.path(), Some(&plans)).await;
        let answers = json!({"why": "reports", "success": ["running totals"], "milestones": ["OVER clause", "Frames"]});
        let create = json!({"title": "SQL windows", "plan_id": "sql-windows", "answers": answers, "request_id": "req-sql"});
        let r = call(&b, "POST", "/api/plans", Some(create.clone())).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(r.json()["readiness"]["ready"], json!(true));
        let rev = r.json()["revision"].as_str().unwrap().to_owned();
        // A retry of the same create answers with the plan it made and creates nothing.
        let r = call(&b, "POST", "/api/plans", Some(create)).await;
        assert_eq!((r.status, r.json()["revision"].clone()), (201, json!(rev)), "{}", r.body);
        // Without a request id nothing is created.
        let r = call(&b, "POST", "/api/plans", Some(json!({"title": "No id", "answers": {}}))).await;
        assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!("invalid_input")), "{}", r.body);
        assert!(r.json()["error"]["message"].as_str().unwrap().contains("`request_id` is required"), "{}", r.body);
        let r = call(&b, "POST", "/api/plans", Some(json!({"title": "SQL windows", "plan_id": "sql-windows", "answers": {}, "request_id": "req-2"}))).await;
        assert_eq!((r.status, r.json()["error"]["code"].clone()), (409, json!("conflict")), "{}", r.body);
        let r = call(&b, "POST", "/api/plans", Some(json!({"title": "Bare", "plan_id": "bare", "answers": {}, "request_id": "req-bare"}))).await;
        assert_eq!(r.status, 201);
        let bare = r.json()["revision"].as_str().unwrap().to_owned();
        // A change without its revision, or with a stale one, is refused and writes nothing.
        let r = call(&b, "PATCH", "/api/plans/sql-windows", Some(json!({"notes": "x"}))).await;
        assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!("invalid_input")), "{}", r.body);
        let r = call(&b, "PATCH", "/api/plans/sql-windows", Some(json!({"notes": "x", "if_revision": "r0000000000000000"}))).await;
        assert_eq!((r.status, r.json()["error"]["code"].clone(), r.json()["error"]["details"]["current_revision"].clone()), (409, json!("conflict"), json!(rev)), "{}", r.body);
        assert_eq!(r.json()["error"]["details"]["plan_code"], json!("stale_revision"));
        let r = call(&b, "PATCH", "/api/plans/bare", Some(json!({"status": "active", "if_revision": bare}))).await;
        assert_eq!(r.status, 422, "{}", r.body);
        let v = r.json();
        assert_eq!(v["error"]["code"], json!("not_ready"));
        let d = &v["error"]["details"];
        assert_eq!(d["ready"], json!(false));
        assert!(v["error"]["message"].as_str().unwrap().starts_with("not_ready:"));
        assert_eq!(d["blockers"].as_array().unwrap().len(), 3);
        assert!(d["nudges"].is_array());
        let r = call(&b, "PATCH", "/api/plans/sql-windows", Some(json!({"status": "active", "if_revision": rev}))).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let rev = r.json()["revision"].as_str().unwrap().to_owned();
        let r = call(&b, "POST", "/api/plans/sql-windows/milestones/0/toggle", Some(json!({"if_revision": rev}))).await;
        assert_eq!((r.status, r.json()["milestone_done"].clone()), (200, json!(1)), "{}", r.body);
        let rev = r.json()["revision"].as_str().unwrap().to_owned();
        let r = call(&b, "POST", "/api/plans/sql-windows/milestones/7/toggle", Some(json!({"if_revision": rev}))).await;
        assert_eq!((r.status, r.json()["error"]["details"]["plan_code"].clone()), (400, json!("invalid_milestone")));
        let r = call(&b, "GET", "/api/plans/sql-windows/markdown", None).await;
        assert!(r.status == 200 && r.body.contains("- [x] **OVER clause**") && r.head.contains("text/markdown"), "{}", r.body);
        let r = call(&b, "POST", "/api/plans/sql-windows/evaluate", Some(json!({"phase": "mid", "record": true}))).await;
        assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!("invalid_input")), "{}", r.body);
        let r = call(&b, "POST", "/api/plans/sql-windows/evaluate", Some(json!({"phase": "mid", "record": true, "if_revision": rev}))).await;
        assert_eq!((r.json()["db_write"].clone(), r.json()["document_write"].clone()), (json!("saved"), json!("saved")), "{}", r.body);
        let r = call(&b, "GET", "/api/plans/sql-windows/evaluate?phase=end", None).await;
        assert_eq!(r.json()["db_write"], json!("not_requested"));
        let r = call(&b, "GET", "/api/plans/sql-windows/history?limit=5", None).await;
        assert_eq!(r.json()["count"], json!(1), "{}", r.body);
        assert_eq!(call(&b, "GET", "/api/plans/sql-windows/history?limit=500", None).await.status, 400);
        let r = call(&b, "GET", "/api/plans?status=active", None).await;
        let v = r.json();
        assert_eq!((v["count"].clone(), v["plans"][0]["plan_id"].clone()), (json!(1), json!("sql-windows")));
        assert_eq!(v["statuses"].as_array().unwrap().len(), 5);
        assert_eq!(call(&b, "GET", "/api/plans?status=done", None).await.status, 400);
        let r = call(&b, "GET", "/api/plans/sql-windows", None).await;
        assert!(r.json()["markdown"].as_str().unwrap().contains("## Milestones"));
        let r = call(&b, "GET", "/api/plans/interview", None).await;
        assert!(r.json()["questions"].as_array().unwrap().len() >= 3);
        let r = call(&b, "GET", "/api/now", None).await;
        let v = r.json();
        assert_eq!((v["starter"].clone(), v["primary"]["source"].clone()), (json!(false), json!("study_plan:sql-windows:1")));
        assert_eq!(v["primary"]["plan_refs"][0], json!({"plan_id": "sql-windows", "milestone_index": 1}));
        assert_eq!(call(&b, "GET", "/api/now?energy=sleepy", None).await.status, 400);
        for bad in ["..%2Fetc", "UPPER", "a.md"] {
            let r = call(&b, "GET", &format!("/api/plans/{bad}"), None).await;
            assert_eq!((r.status, r.json()["error"]["details"]["plan_code"].clone()), (400, json!("invalid_id")), "{bad}: {}", r.body);
        }
        assert_eq!(call(&b, "GET", "/api/plans/nope", None).await.status, 404);
        let r = call(&b, "POST", "/api/plans", Some(json!({"markdown": "not a plan", "request_id": "req-md"}))).await;
        assert_eq!((r.status, r.json()["error"]["details"]["plan_code"].clone()), (500, json!("plan_error")), "{}", r.body);
        let bare = call(&b, "GET", "/api/plans/bare", None).await.json()["revision"].as_str().unwrap().to_owned();
        assert_eq!(call(&b, "DELETE", "/api/plans/bare", None).await.status, 400);
        assert_eq!(call(&b, "DELETE", "/api/plans/bare?if_revision=r0000000000000000", None).await.status, 409);
        assert_eq!(call(&b, "DELETE", &format!("/api/plans/bare?if_revision={bare}"), None).await.status, 200);
        assert_eq!(call(&b, "DELETE", &format!("/api/plans/bare?if_revision={bare}"), None).await.status, 404);
        // The guard fronts these routes too: a cross-site form post writes nothing.
        let text = format!(
            "POST /api/plans HTTP/1.1\r\nHost: {b}\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
        let r = testkit::raw(&b, &text).await;
        assert!(r.status == 403 || r.status == 415, "{} {}", r.status, r.body);
        let n = std::fs::read_dir(&plans).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "md")).count();
        assert_eq!(n, 1);
    });
}

#[test]
fn without_a_scope_the_routes_return_the_shared_payload() {
    let home = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let b = server_at(home.path(), None).await;
        for path in ["/api/plans", "/api/now"] {
            let r = call(&b, "GET", path, None).await;
            assert_eq!(
                (r.status, r.json()["error"]["code"].clone()),
                (503, json!("scope_unconfigured")),
                "{}",
                r.body
            );
            assert!(
                r.json()["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("No context scope configured")
            );
        }
    });
}
