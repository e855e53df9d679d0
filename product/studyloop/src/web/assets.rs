//! The static single-page app, embedded in the binary at build time so the
//! product ships as one file and the page works offline (no CDN; the CSP is
//! `default-src 'self'`). Routes: `/` (the page), `/static/{file}`,
//! `/favicon.ico` (the icon, which browsers ask for on every page load: a 404
//! there is a console error per load) and `/session` (a redirect to
//! `/#study-session`).
//!
//! The Markdown renderer, sanitizer and highlighter are vendored npm files,
//! served byte-for-byte as published and pinned by SHA-256 below (and by the
//! registry's tarball integrity in `static/vendor/VENDOR.md`, which says how
//! to update them); a test fails if an embedded copy drifts from its pin.

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
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("static/favicon.svg"),
    ),
    (
        "markdown.js",
        "text/javascript; charset=utf-8",
        include_str!("static/markdown.js"),
    ),
    (
        "marked.umd.js",
        "text/javascript; charset=utf-8",
        include_str!("static/vendor/marked.umd.js"),
    ),
    (
        "purify.min.js",
        "text/javascript; charset=utf-8",
        include_str!("static/vendor/purify.min.js"),
    ),
    (
        "highlight.min.js",
        "text/javascript; charset=utf-8",
        include_str!("static/vendor/highlight.min.js"),
    ),
];

/// `(asset, npm package@version, SHA-256 of the file as published)` of each
/// vendored file; `static/vendor/VENDOR.md` has the tarball integrity.
pub const VENDORED: &[(&str, &str, &str)] = &[
    (
        "marked.umd.js",
        "marked@18.2.1 lib/marked.umd.js",
        "bb95d4c15f1289f78486eaacebf3bb18688475ed58a040ef762ed49337090542",
    ),
    (
        "purify.min.js",
        "dompurify@3.5.0 dist/purify.min.js",
        "f69a46022ab1f53e969c8ebbca98172c8995785a9b3be72ea4a12d25b1a1bf67",
    ),
    (
        "highlight.min.js",
        "@highlightjs/cdn-assets@11.12.0 highlight.min.js",
        "8ab71eb09c51f501e5e25157d9cff100e46cc29bcbfc744d0b746d451fca7f53",
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

/// `GET /favicon.ico`: the page links the SVG icon, but browsers (and tools)
/// still ask this address; Chromium accepts an SVG body here.
pub async fn favicon() -> Response {
    asset("favicon.svg")
}

/// `GET /session`: the console's old address.
pub async fn session_redirect() -> Redirect {
    Redirect::to("/#study-session")
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::{ASSETS, VENDORED};

    #[test]
    fn vendored_files_match_their_pins_and_are_served() {
        for (name, package, pin) in VENDORED {
            let (_, mime, body) = ASSETS
                .iter()
                .find(|(n, _, _)| n == name)
                .unwrap_or_else(|| panic!("{name} ({package}) is not served"));
            assert!(mime.starts_with("text/javascript"), "{name}: {mime}");
            let digest: String = Sha256::digest(body.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(
                &digest, pin,
                "{name} drifted from {package}: re-vendor it (VENDOR.md)"
            );
        }
    }

    #[test]
    fn the_page_loads_the_renderer_before_the_app_and_nothing_remote() {
        let (_, _, page) = ASSETS.iter().find(|(n, _, _)| *n == "index.html").unwrap();
        let order: Vec<usize> = [
            "/static/marked.umd.js",
            "/static/purify.min.js",
            "/static/highlight.min.js",
            "/static/markdown.js",
            "/static/app.js",
        ]
        .iter()
        .map(|src| page.find(src).unwrap_or_else(|| panic!("{src} not loaded")))
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
}
