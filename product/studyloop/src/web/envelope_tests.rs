//! Every answer of the console's `/api/*` routes is the one envelope
//! (`crate::envelope`, issue 30 item 1): the routes are walked from
//! `server::routes` with every method, with and without the console token, and
//! every refusal and every 2xx JSON answer must validate against
//! docs/schemas/envelope.schema.json, so a new route (or a middleware) that answers
//! its own JSON fails here at once. A second walk drives every documented route to a
//! success (real HOME, a plan, a drill, a stub ACP session) and checks each answer's
//! `command` against the table in docs/using-studyloop.md.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::labs_tests::{self, DRILL};
use super::server::routes;
use super::server_tests::{rt, server};
use super::start_tests::world;
use super::testkit;

/// The documented `command` of each JSON route: `"METHOD /pattern" -> name`, read from
/// the table under "The JSON envelope" in docs/using-studyloop.md.
fn documented() -> BTreeMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/using-studyloop.md");
    let doc = std::fs::read_to_string(path).expect("docs/using-studyloop.md");
    let section = doc
        .split("## The JSON envelope")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the section");
    let mut rows = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let [_, route, name, _] = cells[..]
            && route.starts_with('`')
            && route.contains(" /api/")
            && name.starts_with('`')
        {
            rows.insert(
                route.trim_matches('`').to_owned(),
                name.trim_matches('`').to_owned(),
            );
        }
    }
    rows
}

/// The success shape, checked: the schema, and `command` equal to the documented one.
fn check_success(
    (schemas, idx): &(boon::Schemas, boon::SchemaIndex),
    documented: &BTreeMap<String, String>,
    route: &str,
    r: &testkit::Response,
) -> Result<(), String> {
    let v = r.envelope();
    if schemas.validate(&v, *idx).is_err() || v.get("schema_version").is_none() {
        return Err(format!(
            "{route} -> {} not the success envelope: {}",
            r.status, r.body
        ));
    }
    match documented.get(route) {
        Some(name) if v["command"] == json!(name) => Ok(()),
        Some(name) => Err(format!(
            "{route} answered command {} (documented: {name})",
            v["command"]
        )),
        None => Err(format!(
            "{route} answered JSON but has no row in the docs table"
        )),
    }
}

fn concrete(pattern: &str) -> String {
    pattern
        .replace("{id}", "some-plan")
        .replace("{index}", "0")
        .replace("{file}", "app.js")
}

fn request(base: &str, method: &str, path: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: {base}\r\nContent-Type: application/json\r\n\
         Content-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
}

#[test]
fn every_api_refusal_and_success_is_the_envelope() {
    let checker = crate::envelope::validator();
    let (schemas, idx) = (&checker.0, checker.1);
    let documented = documented();
    rt().block_on(async {
        let s = server(None).await;
        let (mut checked, mut successes, mut broken) = (0, 0, Vec::new());
        for (pattern, _) in routes() {
            // The WebSocket answers its upgrade, not JSON routes; its refusals are
            // the token's (checked below through the same middleware).
            if !pattern.starts_with("/api/") || pattern == "/api/session/ws" {
                continue;
            }
            let path = concrete(pattern);
            for method in ["GET", "POST", "PATCH", "DELETE"] {
                let text = request(&s.base, method, &path);
                for r in [
                    testkit::raw(&s.base, &text).await,
                    testkit::raw_without_token(&s.base, &text).await,
                ] {
                    if (200..300).contains(&r.status) {
                        successes += 1;
                        let route = format!("{method} {pattern}");
                        if let Err(e) = check_success(&checker, &documented, &route, &r) {
                            broken.push(e);
                        }
                        continue;
                    }
                    // 405 is axum's own answer to a method the route lacks (no body).
                    if r.status < 400 || r.status == 405 {
                        continue;
                    }
                    checked += 1;
                    let v = r.json();
                    if v.get("error").and_then(|e| e.get("code")).is_none()
                        || schemas.validate(&v, idx).is_err()
                    {
                        broken.push(format!("{method} {path} -> {} {}", r.status, r.body));
                    }
                }
            }
        }
        eprintln!(
            "figure: {checked} refusals and {successes} successes of /api routes checked against the envelope schema"
        );
        assert!(broken.is_empty(), "not the envelope: {broken:#?}");
        assert!(
            checked > 40,
            "only {checked} refusals: did the route list shrink?"
        );
        assert!(successes >= 3, "only {successes} successes in the walk");
    });
}

/// Every documented route driven to a 2xx: the answer is the success envelope with its
/// documented `command`; the table names only routes that exist and only names the
/// schema lists; the non-JSON answers stay unwrapped.
#[test]
fn every_documented_route_succeeds_with_its_documented_command() {
    let checker = crate::envelope::validator();
    let documented = documented();
    let schema = crate::envelope::published();
    let listed: BTreeSet<&str> = schema["$defs"]["command"]["enum"]
        .as_array()
        .expect("the command enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let patterns: BTreeSet<&str> = routes().into_iter().map(|(p, _)| p).collect();
    for (route, name) in &documented {
        let pattern = route.split_once(' ').map(|(_, p)| p).unwrap_or_default();
        assert!(
            patterns.contains(pattern),
            "the docs name a route that does not exist: {route}"
        );
        assert!(
            listed.contains(name.as_str()),
            "`{name}` ({route}) is not in the schema's command enum"
        );
    }
    let w = world(&[]);
    labs_tests::install(&w);
    let plan = json!({"title": "SQL windows", "plan_id": "sql-windows", "status": "active",
        "request_id": "envelope-walk-1",
        "answers": {"why": "reports", "success": ["running totals"], "milestones": ["OVER clause", "Frames"]}});
    let mut seen = BTreeSet::new();
    let mut broken = Vec::new();
    w.rt.block_on(async {
        let mut call = async |method: &str, pattern: &str, path: &str, body: Option<Value>| {
            let r = testkit::request(&w.base, method, path, body.as_ref()).await;
            let route = format!("{method} {pattern}");
            if !(200..300).contains(&r.status) {
                broken.push(format!("{route} ({path}) -> {} {}", r.status, r.body));
            } else if let Err(e) = check_success(&checker, &documented, &route, &r) {
                broken.push(e);
            }
            seen.insert(route);
            // Read without `json()`, whose panic would hide the other routes' findings.
            r.envelope()["result"].clone()
        };
        call("GET", "/api/session/options", "/api/session/options", None).await;
        call("GET", "/api/session/state", "/api/session/state", None).await;
        call("GET", "/api/labs", "/api/labs", None).await;
        call("GET", "/api/plans/interview", "/api/plans/interview", None).await;
        // Each change sends back the revision the answer before it carried.
        let rev = |v: &Value| v["revision"].as_str().unwrap_or_default().to_owned();
        let made = call("POST", "/api/plans", "/api/plans", Some(plan)).await;
        call("GET", "/api/plans", "/api/plans", None).await;
        let one = "/api/plans/sql-windows";
        call("GET", "/api/plans/{id}", one, None).await;
        let patched = call(
            "PATCH",
            "/api/plans/{id}",
            one,
            Some(json!({"title": "SQL window functions", "if_revision": rev(&made)})),
        )
        .await;
        let toggle = "/api/plans/{id}/milestones/{index}/toggle";
        let ticked = call(
            "POST",
            toggle,
            &format!("{one}/milestones/0/toggle"),
            Some(json!({"if_revision": rev(&patched)})),
        )
        .await;
        let evaluate = "/api/plans/{id}/evaluate";
        call("GET", evaluate, &format!("{one}/evaluate?phase=mid"), None).await;
        call(
            "POST",
            evaluate,
            &format!("{one}/evaluate"),
            Some(json!({"phase": "mid", "record": true, "if_revision": rev(&ticked)})),
        )
        .await;
        call(
            "GET",
            "/api/plans/{id}/history",
            &format!("{one}/history"),
            None,
        )
        .await;
        call("GET", "/api/now", "/api/now", None).await;
        let started = call(
            "POST",
            "/api/session/start",
            "/api/session/start",
            Some(json!({"topic": "Envelopes", "agent": "codex", "transport": "acp"})),
        )
        .await;
        let id = started["study_session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        call(
            "POST",
            "/api/labs/drill/start",
            "/api/labs/drill/start",
            Some(json!({"drill": DRILL})),
        )
        .await;
        let block = crate::modules::block::render(&crate::modules::block::CheckResult {
            drill: DRILL,
            attempt: "a1",
            verdict: "passed",
            detail: "exit 0",
            output: "ready",
        });
        let check = json!({"study_session_id": id, "block": block});
        call(
            "POST",
            "/api/session/practice-check",
            "/api/session/practice-check",
            Some(check),
        )
        .await;
        call(
            "POST",
            "/api/labs/drill/cancel",
            "/api/labs/drill/cancel",
            Some(json!({})),
        )
        .await;
        call(
            "POST",
            "/api/session/end",
            "/api/session/end",
            Some(json!({})),
        )
        .await;
        // The document is not JSON and is not wrapped.
        let md = testkit::request(&w.base, "GET", &format!("{one}/markdown"), None).await;
        assert!(
            md.status == 200 && md.head.contains("text/markdown") && md.envelope().is_null(),
            "{} {}",
            md.status,
            md.body
        );
        // The revision after the recorded evaluation, read back.
        let shown = call("GET", "/api/plans/{id}", one, None).await;
        let gone = format!("{one}?if_revision={}", rev(&shown));
        call("DELETE", "/api/plans/{id}", &gone, None).await;
    });
    let missed: Vec<&String> = documented.keys().filter(|r| !seen.contains(*r)).collect();
    assert!(
        broken.is_empty(),
        "not the documented success envelope: {broken:#?}"
    );
    assert!(
        missed.is_empty(),
        "documented routes this walk never drove: {missed:?}"
    );
    assert!(
        documented.len() >= 19,
        "only {} documented routes: did the table shrink?",
        documented.len()
    );
}
