//! Page scaffolding and the one way a recorded string reaches a page:
//! [`Render::t`] (redact when the report is the shareable variant, then
//! escape). Pages are plain strings built here; no template engine.

use std::fmt::Write as _;

use studyloop_acceptance::markup::escape;
use studyloop_redaction::Redactor;

/// How recorded text is turned into page text.
pub(crate) struct Render<'a> {
    /// `Some` for `--redacted`: every string passes the pinned rules first.
    pub(crate) redactor: Option<&'a Redactor>,
}

impl Render<'_> {
    /// `text`, redacted when asked, escaped always.
    pub(crate) fn t(&self, text: &str) -> String {
        match self.redactor {
            Some(r) => escape(&r.redact(text)),
            None => escape(text),
        }
    }

    /// [`Render::t`] with Markdown code spans: each `` `x` `` pair becomes
    /// `<code>x</code>` (sign-off reasons and skip reasons are written in
    /// Markdown); an unpaired backtick stays as it is.
    pub(crate) fn md(&self, text: &str) -> String {
        let text = match self.redactor {
            Some(r) => r.redact(text),
            None => text.to_owned(),
        };
        let parts: Vec<&str> = text.split('`').collect();
        let mut out = String::new();
        for (i, part) in parts.iter().enumerate() {
            let closed = i + 1 < parts.len();
            if i % 2 == 1 && closed {
                let _ = write!(out, "<code>{}</code>", escape(part));
            } else if i % 2 == 1 {
                let _ = write!(out, "`{}", escape(part));
            } else {
                out.push_str(&escape(part));
            }
        }
        out
    }

    /// A `<pre>` block of recorded text, with a note when it was cut.
    pub(crate) fn pre(&self, text: &str, cut: bool) -> String {
        let mut out = format!("<pre tabindex=\"0\">{}</pre>", self.t(text));
        if cut {
            out.push_str("<p class=\"note\">Cut: only the first 256 KiB are shown; the bundle holds the whole file.</p>");
        }
        out
    }

    /// Whether this is the redacted variant.
    pub(crate) fn redacted(&self) -> bool {
        self.redactor.is_some()
    }
}

/// The style of every page: readable without it, no external resource.
/// Tables marked `tokens` (the index's trials table and grid, the comparison's
/// tables) never split a token: their cells wrap only between words and the
/// table scrolls inside its `.wide` box instead of widening the page; other
/// tables (a cell page's long bundle paths) still break anywhere.
const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0 auto;max-width:76rem;padding:1rem;line-height:1.4;color:#111;background:#fff}\
a{color:#0645ad}a:focus,pre:focus,summary:focus{outline:3px solid #f90;outline-offset:2px}\
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#ff0;padding:.5rem}\
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #bbb;padding:.25rem .4rem;text-align:left;vertical-align:top}\
th{background:#eee}pre{background:#f6f6f6;border:1px solid #ccc;padding:.5rem;overflow:auto;max-height:40rem;white-space:pre-wrap;word-break:break-word}\
.passed,.PASS{background:#d9f5d9}.failed,.FAIL{background:#fbd5d5}.skipped{background:#eee}.flaky{background:#ffe9b3}\
td{overflow-wrap:anywhere}td code{word-break:break-all}.note{color:#444;font-style:italic}.bar{display:inline-block;height:.7rem;background:#69c}\
.learner{border-left:4px solid #69c;padding-left:.5rem}.mentor{border-left:4px solid #9c6;padding-left:.5rem}\
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.8rem}\
.tokens td{overflow-wrap:normal}.tokens td code{word-break:normal}.tokens td code,.tokens th code,.tokens td.n{white-space:nowrap}.wide{overflow-x:auto;position:relative}.icon{font-weight:bold}.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}\
table.grid{width:auto}table.grid td{padding:0;text-align:center;vertical-align:middle;min-width:1.8em}table.grid th{padding:.1em .3em}\
table.grid td.none{background:#fff}table.grid caption{text-align:left}table.grid thead th{vertical-align:bottom}.up{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}\
a.g{display:block;padding:.15em .3em;text-decoration:none;color:#111;font-weight:bold}\
a.g .tip{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}\
a.g:hover .tip,a.g:focus .tip{position:fixed;left:0;right:0;bottom:0;width:auto;height:auto;clip:auto;z-index:2;background:#111;color:#fff;padding:.5rem 1rem;font-weight:normal;text-align:left}\
#filters{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:end;margin:.5rem 0}#filters label{display:flex;flex-direction:column;font-size:.9rem}\
@media (max-width:48rem){table.grid{font-size:.7rem}table.grid a.g{padding:.15em .2em}#trials-table thead{position:absolute;left:-9999px}#trials-table,#trials-table tbody,#trials-table tr{display:block}\
#trials-table caption{display:block;text-align:left}#trials-table tr{border:1px solid #bbb;margin:.4rem 0}#trials-table td{display:block;border:0}#trials-table td::before{content:attr(data-label) \": \";font-weight:bold}}";

/// Which scripts a page may load (its CSP says so): none, the terminal
/// player's, or the index's filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scripts {
    /// No script at all.
    None,
    /// The vendored asciinema-player (WebAssembly included).
    Player,
    /// The index's `assets/filter.js`: progressive enhancement, the page is
    /// whole without it.
    Filter,
}

/// A whole page: `title`, a link back to the overview unless this is it,
/// the section index, and `body`; with `player`, the vendored terminal
/// player's tags (and a CSP that allows scripts from the report itself only).
pub(crate) fn page(
    title: &str,
    home: Option<&str>,
    sections: &[(&str, &str)],
    body: &str,
    player: bool,
) -> String {
    let scripts = if player {
        Scripts::Player
    } else {
        Scripts::None
    };
    page_with(title, home, sections, body, scripts)
}

/// [`page`] with the scripts named.
pub(crate) fn page_with(
    title: &str,
    home: Option<&str>,
    sections: &[(&str, &str)],
    body: &str,
    scripts: Scripts,
) -> String {
    let mut out = String::with_capacity(body.len() + 4096);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // No remote anything; no script at all, or (a page with recordings) only
    // the report's own player files: never an inline one. The player's terminal is
    // WebAssembly, which `script-src 'self'` alone refuses to compile:
    // `'wasm-unsafe-eval'` allows compiling WebAssembly and nothing else (no `eval`, no
    // inline script), so the recording plays.
    let policy = match scripts {
        Scripts::Player => {
            "; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; font-src 'self' data:"
        }
        // The filters are one file beside the page: no inline script, no eval.
        Scripts::Filter => "; script-src 'self'; style-src 'unsafe-inline'",
        Scripts::None => "; style-src 'unsafe-inline'",
    };
    let _ = writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' data:{policy}; base-uri 'none'; form-action 'none'\">"
    );
    out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str("<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header>\n");
    if let Some(home) = home {
        let _ = writeln!(out, "<p><a href=\"{}\">← Overview</a></p>", escape(home));
    }
    if !sections.is_empty() {
        out.push_str("<nav aria-label=\"Sections\"><ul>");
        for (id, label) in sections {
            let _ = write!(
                out,
                "<li><a href=\"#{}\">{}</a></li>",
                escape(id),
                escape(label)
            );
        }
        out.push_str("</ul></nav>\n");
    }
    out.push_str("</header>\n<main id=\"main\" tabindex=\"-1\">\n");
    out.push_str(body);
    out.push_str("\n</main>\n");
    match scripts {
        Scripts::Player => out.push_str(&super::player::tags()),
        Scripts::Filter => {
            let _ = writeln!(out, "<script src=\"{}\"></script>", super::filter::PATH);
        }
        Scripts::None => {}
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A file name safe in a URL path and on disk, one per name: `[a-z0-9_-]`
/// kept, `:` as `.`, every other byte as `~hh`; never empty.
pub(crate) fn slug(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => out.push(b as char),
            // `.` only ever stands for `:`, so two names never share a slug.
            b':' => out.push('.'),
            _ => {
                let _ = write!(out, "~{b:02x}");
            }
        }
    }
    if out.is_empty() {
        out.push('_');
    }
    // A file name must stay under NAME_MAX (255 bytes) with `.html` added: a
    // long name keeps its start and gets its digest, still one per name.
    if out.len() > 120 {
        let digest = studyloop_acceptance::evidence::hash_bytes(name.as_bytes());
        out.truncate(100);
        out.push('~');
        out.push_str(&digest[..16]);
    }
    out
}

/// Milliseconds as `1.23 s` (or `–` when unknown: never 0).
pub(crate) fn duration(ms: Option<u64>) -> String {
    match ms {
        Some(ms) => format!("{:.2} s", ms as f64 / 1000.0),
        None => "–".to_owned(),
    }
}
