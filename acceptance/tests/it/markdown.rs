//! The docs book as its reader's tools see it, read with a Markdown parser
//! (pulldown-cmark): the headings (and the anchors GitHub and mdBook make of
//! them), the links, and the source text of a table's cells. Shared by the link
//! test (`docs_links`) and the environment-chapter test (`env_chapter`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The workspace root (the acceptance crate sits directly in it).
pub(crate) fn workspace_root() -> PathBuf {
    studyloop_acceptance::bins::workspace_root()
}

fn parser(text: &str) -> Parser<'_> {
    Parser::new_ext(text, Options::ENABLE_TABLES)
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Every heading's text as rendered (code spans without their backticks).
pub(crate) fn headings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for event in parser(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => current = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => out.extend(current.take()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = current.as_mut() {
                    h.push_str(&t);
                }
            }
            _ => {}
        }
    }
    out
}

/// The anchors GitHub gives the headings: lowercase, every character but letters,
/// digits, `_`, `-` and spaces dropped, spaces to `-`; a repeat gets `-1`, `-2`, ….
pub(crate) fn github_anchors(headings: &[String]) -> BTreeSet<String> {
    unique(headings.iter().map(|h| {
        h.to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect()
    }))
}

/// The ids mdBook gives the headings (its `normalize_id`): ASCII-lowercased
/// alphanumerics, `_` and `-` kept, whitespace to `-`, the rest dropped; a repeat
/// gets `-1`, `-2`, ….
pub(crate) fn mdbook_anchors(headings: &[String]) -> BTreeSet<String> {
    unique(headings.iter().map(|h| {
        h.chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || matches!(c, '_' | '-') {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect()
    }))
}

fn unique(ids: impl Iterator<Item = String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for id in ids {
        let mut candidate = id.clone();
        let mut n = 0;
        while out.contains(&candidate) {
            n += 1;
            candidate = format!("{id}-{n}");
        }
        out.insert(candidate);
    }
    out
}

/// The anchors a link may name in a Markdown file: those GitHub and mdBook agree
/// on, so a link works in both.
pub(crate) fn anchors(text: &str) -> BTreeSet<String> {
    let hs = headings(text);
    let mdbook = mdbook_anchors(&hs);
    github_anchors(&hs)
        .into_iter()
        .filter(|a| mdbook.contains(a))
        .collect()
}

/// One link or image of a Markdown file.
pub(crate) struct Link {
    /// The destination as written.
    pub(crate) dest: String,
    /// 1-based line it starts on.
    pub(crate) line: usize,
}

/// Every link and image destination of a Markdown file.
pub(crate) fn links(text: &str) -> Vec<Link> {
    parser(text)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => Some(Link {
                dest: dest_url.to_string(),
                line: line_of(text, range.start),
            }),
            _ => None,
        })
        .collect()
}

/// Raw HTML a file holds outside code (comments aside), with lines: Markdown
/// treats `<harness>` in prose as a tag, so GitHub and mdBook show nothing of it.
pub(crate) fn raw_html(text: &str) -> Vec<(usize, String)> {
    parser(text)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::InlineHtml(h) | Event::Html(h) if !h.trim_start().starts_with("<!--") => {
                Some((line_of(text, range.start), h.trim().to_owned()))
            }
            _ => None,
        })
        .collect()
}

/// The rows of the first table after the heading `title` (and before the next
/// heading), header row excluded: each cell's source text, trimmed, with `\|`
/// unescaped. `None` when there is no such heading or it holds no table.
pub(crate) fn table_under(text: &str, title: &str) -> Option<Vec<Vec<String>>> {
    let mut in_heading: Option<String> = None;
    let mut under = false;
    let mut rows: Option<Vec<Vec<String>>> = None;
    let mut in_head = false;
    for (event, range) in parser(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                if rows.is_some() {
                    break;
                }
                in_heading = Some(String::new());
            }
            Event::Text(t) | Event::Code(t) if in_heading.is_some() => {
                in_heading.get_or_insert_default().push_str(&t);
            }
            Event::End(TagEnd::Heading(_)) => {
                under = in_heading.take().is_some_and(|h| h == title);
            }
            Event::Start(Tag::Table(_)) if under && rows.is_none() => rows = Some(Vec::new()),
            Event::End(TagEnd::Table) if rows.is_some() => break,
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) if !in_head => {
                if let Some(r) = rows.as_mut() {
                    r.push(Vec::new());
                }
            }
            Event::Start(Tag::TableCell) if !in_head => {
                if let Some(row) = rows.as_mut().and_then(|r| r.last_mut()) {
                    row.push(text[range].trim().replace("\\|", "|"));
                }
            }
            _ => {}
        }
    }
    rows
}

/// Every Markdown file of the book and the README, relative to `root`.
pub(crate) fn book_files(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("README.md")];
    let mut dirs = vec![PathBuf::from("docs")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let rel = dir.join(entry.file_name());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(rel);
            } else if rel.extension().is_some_and(|x| x == "md") {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn anchors_follow_github_and_mdbook() {
    let text = "# Real-auth certification (`just certify`)\n\n## Search (hybrid)\n\n\
                ## Runner glue — used by tests\n\n## Search (hybrid)\n\n## Ümlaut Ünit\n";
    let a = anchors(text);
    assert!(a.contains("real-auth-certification-just-certify"), "{a:?}");
    assert!(
        a.contains("search-hybrid") && a.contains("search-hybrid-1"),
        "{a:?}"
    );
    assert!(a.contains("runner-glue--used-by-tests"), "{a:?}");
    // GitHub lowercases Ü, mdBook keeps it: a link to either works in one only.
    assert!(!a.iter().any(|x| x.contains("mlaut")), "{a:?}");
}

#[test]
fn a_table_is_read_from_its_source_cells() {
    let text = "## Other\n\n| a | b |\n|---|---|\n| x | y |\n\n## Wanted\n\ntext\n\n\
                | Name | Meaning |\n| --- | --- |\n| `A_B` | one \\| two, *so* |\n| `C` | — |\n";
    let rows = table_under(text, "Wanted").unwrap();
    assert_eq!(
        rows,
        [["`A_B`", "one | two, *so*"], ["`C`", "—"]].map(|r| r.map(str::to_owned).to_vec())
    );
    assert!(table_under(text, "Missing").is_none());
}

#[test]
fn a_placeholder_outside_code_is_raw_html() {
    let text =
        "Run `just x <harness>`.\n\nnot logged in: <harness>: <what it said>\n\n<!-- a note -->\n";
    let found: Vec<String> = raw_html(text)
        .into_iter()
        .map(|(l, h)| format!("{l}:{h}"))
        .collect();
    assert_eq!(found, ["3:<harness>", "3:<what it said>"]);
}
