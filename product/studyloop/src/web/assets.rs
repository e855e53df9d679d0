//! The static single-page app, embedded in the binary at build time so the
//! product ships as one file and the page works offline (no CDN; the CSP is
//! `default-src 'self'`). Routes: `/` (the page), `/static/{file}`, and
//! `/session` (a redirect to `/#study-session`).

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

/// `(name, content type, bytes)` of every embedded asset.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("static/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("static/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("static/app.css"),
    ),
];

fn asset(name: &str) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, mime, body)) => ([(header::CONTENT_TYPE, *mime)], *body).into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// `GET /`.
pub async fn index() -> Response {
    asset("index.html")
}

/// `GET /static/{file}`.
pub async fn file(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    asset(&name)
}

/// `GET /session`: the console's old address.
pub async fn session_redirect() -> Redirect {
    Redirect::to("/#study-session")
}
