//! Every answer of the console's `/api/*` routes is the one envelope
//! (`crate::envelope`, issue 30 item 1): the routes are walked from
//! `server::routes` with every method, with and without the console token, and
//! every refusal must validate against docs/schemas/envelope.schema.json, so a
//! new route (or a middleware) that answers its own JSON fails here at once.

use super::server::routes;
use super::server_tests::{rt, server};
use super::testkit;

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
fn every_api_refusal_is_the_envelope_failure() {
    let (schemas, idx) = crate::envelope::validator();
    rt().block_on(async {
        let s = server(None).await;
        let (mut checked, mut broken) = (0, Vec::new());
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
        eprintln!("figure: {checked} refusals of /api routes checked against the envelope schema");
        assert!(broken.is_empty(), "not the envelope: {broken:#?}");
        assert!(
            checked > 40,
            "only {checked} refusals: did the route list shrink?"
        );
    });
}
