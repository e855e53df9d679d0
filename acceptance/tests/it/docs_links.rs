//! Every link of the docs book and the README resolves: the file it names exists,
//! and its `#anchor` is a heading of that file under both GitHub's and mdBook's
//! slug rules. The `docs/….md#…` and `README.md#…` mentions in Rust source, the
//! justfile and the CI files (skip reasons, doc comments) are held to the same
//! rule, and every chapter is listed in `docs/SUMMARY.md` (mdBook builds nothing
//! else), and no prose is lost as raw HTML (`<harness>` outside code). A
//! failure names the file, the line and the fix.

use std::path::{Component, Path, PathBuf};

use crate::markdown::{anchors, book_files, line_of, links, raw_html, workspace_root};

/// What a link can be checked against: a Markdown file's text by path.
trait Tree {
    fn read(&self, rel: &Path) -> Option<String>;
    fn exists(&self, rel: &Path) -> bool;
}

struct Disk(PathBuf);

impl Tree for Disk {
    fn read(&self, rel: &Path) -> Option<String> {
        std::fs::read_to_string(self.0.join(rel)).ok()
    }
    fn exists(&self, rel: &Path) -> bool {
        self.0.join(rel).exists()
    }
}

/// `base/../x` made plain; `None` when it climbs out of the workspace.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The problem with one destination, written from `from` (a workspace path), if any.
fn check_dest(tree: &dyn Tree, from: &Path, dest: &str) -> Option<String> {
    if dest.contains("://") || dest.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (dest, None),
    };
    let target = if path.is_empty() {
        from.to_owned()
    } else {
        let joined = from.parent().unwrap_or(Path::new("")).join(path);
        match normalise(&joined) {
            Some(t) => t,
            None => return Some(format!("`{dest}` leaves the repository")),
        }
    };
    if !tree.exists(&target) {
        return Some(format!(
            "`{dest}`: {} does not exist; fix the path (chapters live in docs/)",
            target.display()
        ));
    }
    let anchor = anchor?;
    if target.extension().is_none_or(|x| x != "md") {
        return None;
    }
    let known = anchors(&tree.read(&target).unwrap_or_default());
    if known.contains(anchor) {
        return None;
    }
    Some(format!(
        "`{dest}`: {} has no heading with the anchor `#{anchor}`; link one of: {}",
        target.display(),
        known.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

/// Broken links of the given Markdown files, as `file:line: problem`.
fn broken_links(tree: &dyn Tree, files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        let text = tree.read(file).unwrap_or_default();
        for link in links(&text) {
            if let Some(problem) = check_dest(tree, file, &link.dest) {
                out.push(format!("{}:{}: {problem}", file.display(), link.line));
            }
        }
    }
    out
}

/// `docs/….md[#a]` and `README.md#a` mentions in a non-Markdown file, with lines.
fn mentions(text: &str) -> Vec<(usize, String)> {
    let re = regex::Regex::new(
        r"(?:README\.md#[A-Za-z0-9_-]+|docs/[A-Za-z0-9_./-]*\.md(?:#[A-Za-z0-9_-]+)?)",
    )
    .unwrap();
    re.find_iter(text)
        .filter(|m| {
            // A path ending in docs/… (uat/docs/x.md) is another tree's.
            text[..m.start()]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || "/._-".contains(c)))
        })
        .map(|m| (line_of(text, m.start()), m.as_str().to_owned()))
        .collect()
}

/// Files whose mentions are checked: Rust sources, the justfile, CI scripts and
/// workflows (build output, installed packages and hidden trees other than the CI
/// ones left out).
fn mention_files(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("justfile")];
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = dir.join(&name);
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                let skip = matches!(name.as_str(), "target" | "node_modules")
                    || (name.starts_with('.') && !matches!(name.as_str(), ".ci" | ".github"));
                if !skip {
                    dirs.push(rel);
                }
            } else if name.ends_with(".rs") || rel.starts_with(".ci") || rel.starts_with(".github")
            {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

fn broken_mentions(tree: &dyn Tree, files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    // This file plants broken mentions on purpose, for the test below.
    for file in files.iter().filter(|f| f.as_path() != Path::new(file!())) {
        let Some(text) = tree.read(file) else {
            continue;
        };
        for (line, mention) in mentions(&text) {
            // Mentions are workspace-relative, as if written in the root.
            if let Some(problem) = check_dest(tree, Path::new("."), &mention) {
                out.push(format!("{}:{line}: {problem}", file.display()));
            }
        }
    }
    out
}

/// Chapters (`docs/**/*.md`) that `docs/SUMMARY.md` does not link.
fn unlisted_chapters(tree: &dyn Tree, files: &[PathBuf]) -> Vec<String> {
    let summary = Path::new("docs/SUMMARY.md");
    let listed: Vec<PathBuf> = links(&tree.read(summary).unwrap_or_default())
        .into_iter()
        .filter_map(|l| normalise(&Path::new("docs").join(l.dest.split('#').next()?)))
        .collect();
    files
        .iter()
        .filter(|f| f.starts_with("docs") && f.as_path() != summary && !listed.contains(f))
        .map(|f| {
            format!(
                "{}: not in docs/SUMMARY.md, so the book never shows it; add a `- [Title]({})` line",
                f.display(),
                f.strip_prefix("docs").unwrap_or(f).display()
            )
        })
        .collect()
}

fn report(problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{} broken:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_book_link_and_anchor_resolves() {
    let root = workspace_root();
    let files = book_files(&root);
    assert!(files.len() > 10, "the book is missing: {files:?}");
    report(&broken_links(&Disk(root), &files));
}

#[test]
fn every_docs_mention_in_code_resolves() {
    let root = workspace_root();
    let files = mention_files(&root);
    assert!(files.len() > 100, "too few files scanned: {}", files.len());
    report(&broken_mentions(&Disk(root), &files));
}

#[test]
fn no_prose_is_swallowed_as_html() {
    let root = workspace_root();
    let disk = Disk(root.clone());
    let mut problems = Vec::new();
    for file in book_files(&root) {
        for (line, html) in raw_html(&disk.read(&file).unwrap_or_default()) {
            problems.push(format!(
                "{}:{line}: `{html}` is read as an HTML tag and shown as nothing; put it in \
                 backticks or write `\\<`",
                file.display()
            ));
        }
    }
    report(&problems);
}

#[test]
fn every_chapter_is_in_the_summary() {
    let root = workspace_root();
    let files = book_files(&root);
    report(&unlisted_chapters(&Disk(root), &files));
}

/// An in-memory tree, to prove each check fails on what it should.
struct Fake(Vec<(&'static str, &'static str)>);

impl Tree for Fake {
    fn read(&self, rel: &Path) -> Option<String> {
        self.0
            .iter()
            .find(|(p, _)| Path::new(p) == rel)
            .map(|(_, t)| (*t).to_owned())
    }
    fn exists(&self, rel: &Path) -> bool {
        self.0.iter().any(|(p, _)| Path::new(p) == rel)
    }
}

fn fake() -> Fake {
    Fake(vec![
        (
            "README.md",
            "# R\n\n[ok](docs/a.md#real-auth-just-certify) [gone](docs/b.md)\n\
             [bad anchor](docs/a.md#nope) [self](#r) [out](../x.md) <https://x.test/y>\n",
        ),
        ("docs/SUMMARY.md", "# Summary\n\n- [A](a.md)\n"),
        (
            "docs/a.md",
            "# A\n\n## Real-auth (`just certify`)\n\n[up](../README.md#r)\n",
        ),
        ("docs/c.md", "# C\n"),
        (
            "src/x.rs",
            "// see docs/a.md#nope and README.md#r and uat/docs/z.md\nconst R: &str = \"docs/zz.md\";\n",
        ),
    ])
}

#[test]
fn a_planted_broken_link_anchor_or_chapter_is_named() {
    let tree = fake();
    let files = [PathBuf::from("README.md"), PathBuf::from("docs/a.md")];
    let problems = broken_links(&tree, &files);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].starts_with("README.md:3: `docs/b.md`: docs/b.md does not exist"));
    assert!(problems[1].contains("`#nope`") && problems[1].contains("real-auth-just-certify"));
    assert!(problems[2].contains("`../x.md` leaves the repository"));

    let mentioned = broken_mentions(&tree, &[PathBuf::from("src/x.rs")]);
    assert_eq!(mentioned.len(), 2, "{mentioned:#?}");
    assert!(mentioned[0].starts_with("src/x.rs:1: `docs/a.md#nope`"));
    assert!(mentioned[1].starts_with("src/x.rs:2: `docs/zz.md`"));

    let all = ["README.md", "docs/SUMMARY.md", "docs/a.md", "docs/c.md"].map(PathBuf::from);
    let unlisted = unlisted_chapters(&tree, &all);
    assert_eq!(unlisted.len(), 1, "{unlisted:#?}");
    assert!(unlisted[0].starts_with("docs/c.md: not in docs/SUMMARY.md"));
}
