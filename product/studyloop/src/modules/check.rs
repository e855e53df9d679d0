//! `module check`: walks the module once and applies MC001–MC017 (defined in
//! docs/modules.md), collecting every finding rather than stopping at the
//! first. Bad input that is not a module at all (a missing path, a file, a
//! tree past the walk's bounds) is a [`ModuleError`], never a panic.

use std::path::Path;

use super::deck::{self, Deck};
use super::error::ModuleError;
use super::finding::{Finding, Findings, key_line, line_of};
use super::manifest::{self, Manifest};
use super::tree::{Kind, MAX_FILE_BYTES, Tree};

/// Files no module may hold: Python packaging, Node packaging and entry points
/// (core never imports or executes module code as a library).
pub(crate) const FORBIDDEN_NAMES: [&str; 5] = [
    "pyproject.toml",
    "package.json",
    "setup.py",
    "setup.cfg",
    "entry_points.txt",
];
/// Forbidden extensions (MC012).
pub(crate) const FORBIDDEN_EXTENSIONS: [&str; 3] = ["py", "pyc", "pyw"];
/// README headings MC011 requires.
pub(crate) const README_HEADINGS: [&str; 4] =
    ["Prerequisites", "What runs", "Data collected", "Limits"];
/// The mentor brief (MC017) and its bound: it reaches coaching verbatim, like
/// a `practice_check` block, so it has the same 8 KiB bound.
pub(crate) const BRIEF: &str = "mentor/brief.md";
/// See [`BRIEF`].
pub(crate) const MAX_BRIEF_BYTES: usize = 8 * 1024;
/// The redaction patterns that name paths, not secrets: not MC009 findings.
const NOT_SECRETS: [&str; 4] = ["home-path", "root-home", "tilde-home", "windows-home"];

/// The outcome of a check.
#[derive(Debug)]
pub(crate) struct Report {
    /// Every finding, sorted by rule, file and line.
    pub(crate) findings: Vec<Finding>,
    /// The manifest, when it parsed.
    pub(crate) manifest: Option<Manifest>,
    /// The decks that parsed.
    pub(crate) decks: Vec<Deck>,
    /// The walked tree.
    pub(crate) tree: Tree,
}

/// Checks the module at `path` against all seventeen rules.
pub(crate) fn check(path: &Path) -> Result<Report, ModuleError> {
    let tree = Tree::walk(path)?;
    let mut out = Findings::default();
    entries(&tree, &mut out);
    let texts = texts(&tree, &mut out);
    let text = |rel: &str| {
        texts
            .iter()
            .find(|(r, _)| r == rel)
            .map(|(_, t)| t.as_str())
    };
    let manifest = match text(manifest::FILE) {
        Some(t) => manifest::check(t, &mut out),
        None => {
            out.add(1, manifest::FILE, 1, "module.yaml is missing; every module has a manifest (run `studyloop module new NAME` for a conforming start)");
            None
        }
    };
    for (file, what) in [
        ("LICENSE", "the license text"),
        ("CHANGELOG.md", "the change history"),
    ] {
        if text(file).is_none_or(|t| t.trim().is_empty()) {
            out.add(
                3,
                file,
                1,
                format!("{file} is missing or empty; add {what}"),
            );
        }
    }
    readme(text("README.md"), &mut out);
    match text(BRIEF) {
        None => out.add(17, BRIEF, 1, "mentor/brief.md is missing; it is the module's only channel into coaching (a short note for the mentor)"),
        Some(t) if t.trim().is_empty() => out.add(17, BRIEF, 1, "mentor/brief.md is empty; write a short note for the mentor"),
        Some(t) if t.len() > MAX_BRIEF_BYTES => out.add(17, BRIEF, 1, format!("mentor/brief.md holds {} bytes, more than {MAX_BRIEF_BYTES}; it reaches coaching verbatim, keep it short", t.len())),
        Some(_) => {}
    }
    let decks = decks(&texts, &mut out);
    scripts(&tree, &decks, &mut out);
    if let Some(m) = &manifest {
        capabilities(m, text(manifest::FILE).unwrap_or(""), &decks, &mut out);
    }
    for (rel, t) in texts.iter().filter(|(r, _)| r.starts_with("scripts/")) {
        for (i, l) in t.lines().enumerate() {
            if let Some(w) = super::argv::context_word(l) {
                out.add(8, rel, i + 1, format!("`{w}` in a phase script: a drill never picks its own cluster context; core sets KUBECONFIG to exactly one"));
            }
        }
    }
    secrets(&texts, &mut out)?;
    let mut findings = out.0;
    findings.sort();
    findings.dedup();
    Ok(Report {
        findings,
        manifest,
        decks,
        tree,
    })
}

/// MC013 (regular files and directories only, bounded, one link) and MC012
/// (no packaging or Python).
fn entries(tree: &Tree, out: &mut Findings) {
    for e in &tree.entries {
        match e.kind {
            Kind::Other(what) => out.add(13, &e.rel, 1, format!("is {what}; a module holds only regular files and directories (replace it with a regular file or remove it)")),
            Kind::File { size, .. } if size > MAX_FILE_BYTES => out.add(13, &e.rel, 1, format!("holds {size} bytes, more than {MAX_FILE_BYTES}; a module is small data, remove or shrink it")),
            Kind::File { nlink, .. } if nlink > 1 => out.add(13, &e.rel, 1, format!("has {nlink} hard links; a hard link can alias a file outside the module, copy it instead")),
            _ => {}
        }
        let name = e.rel.rsplit('/').next().unwrap_or(&e.rel);
        let ext = name.rsplit_once('.').map(|(_, x)| x);
        if FORBIDDEN_NAMES.contains(&name) || ext.is_some_and(|x| FORBIDDEN_EXTENSIONS.contains(&x))
        {
            out.add(12, &e.rel, 1, format!("`{name}` makes the module code: no {} or *.py anywhere; a module is data plus scripts under scripts/", FORBIDDEN_NAMES.join(", ")));
        }
    }
}

/// Every readable file's text (lossy UTF-8); a file that cannot be read as a
/// regular file now (swapped in a race, no permission) is an MC013 finding.
fn texts(tree: &Tree, out: &mut Findings) -> Vec<(String, String)> {
    tree.files()
        .filter_map(|e| match tree.read(&e.rel) {
            Ok(bytes) => Some((e.rel.clone(), String::from_utf8_lossy(&bytes).into_owned())),
            Err(err) => {
                out.add(
                    13,
                    &e.rel,
                    1,
                    format!("cannot be read as a regular file: {err}"),
                );
                None
            }
        })
        .collect()
}

fn readme(text: Option<&str>, out: &mut Findings) {
    let Some(text) = text else {
        out.add(
            11,
            "README.md",
            1,
            format!(
                "README.md is missing; it needs the headings {}",
                README_HEADINGS.join(", ")
            ),
        );
        return;
    };
    let mut fenced = false;
    let mut found = Vec::new();
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
        } else if !fenced && t.starts_with('#') {
            let h = t.trim_start_matches('#');
            if h.starts_with(' ') || h.is_empty() {
                found.push(h.trim().trim_end_matches('#').trim().to_lowercase());
            }
        }
    }
    for h in README_HEADINGS {
        if !found.contains(&h.to_lowercase()) {
            out.add(
                11,
                "README.md",
                1,
                format!("README.md has no `{h}` heading; add `## {h}`"),
            );
        }
    }
}

/// MC004 (at least one deck that parses) and the module-wide half of MC014.
fn decks(texts: &[(String, String)], out: &mut Findings) -> Vec<Deck> {
    let mut decks: Vec<Deck> = Vec::new();
    let files: Vec<_> = texts
        .iter()
        .filter(|(r, _)| {
            r.strip_prefix("decks/")
                .is_some_and(|n| !n.contains('/') && n.ends_with(".json"))
        })
        .collect();
    if files.is_empty() {
        out.add(
            4,
            deck::DIR,
            1,
            "no deck: add at least one decks/NAME.json (a PracticeDeck with an id and tasks)",
        );
    }
    for (rel, text) in files {
        if let Some(d) = deck::check(rel, text, out) {
            if !d.id.is_empty() && decks.iter().any(|x| x.id == d.id) {
                out.add(
                    14,
                    rel,
                    line_of(text, &format!("\"{}\"", d.id), 1),
                    format!(
                        "deck id `{}` is used by another deck; deck ids are unique within a module",
                        d.id
                    ),
                );
            }
            decks.push(d);
        }
    }
    decks
}

/// MC007: every phase's executable is a regular, owner-executable file under
/// `scripts/`, named by a plain relative path.
fn scripts(tree: &Tree, decks: &[Deck], out: &mut Findings) {
    for d in decks {
        for t in &d.tasks {
            for p in t.phases.iter().filter(|p| p.valid) {
                let exe = &p.argv[0];
                let parts: Vec<&str> = exe.split('/').collect();
                let plain = parts.len() >= 2
                    && parts[0] == "scripts"
                    && parts
                        .iter()
                        .all(|c| !c.is_empty() && *c != "." && *c != "..");
                let problem = if !plain {
                    Some(format!(
                        "`{exe}` is not a path under scripts/ (e.g. scripts/{}.sh); a phase runs one of the module's own scripts",
                        p.name
                    ))
                } else {
                    match tree.get(exe).map(|e| &e.kind) {
                        None => Some(format!("`{exe}` does not exist")),
                        Some(Kind::File { exec: true, .. }) => None,
                        Some(Kind::File { .. }) => {
                            Some(format!("`{exe}` is not executable; run chmod +x {exe}"))
                        }
                        Some(_) => Some(format!("`{exe}` is not a regular file")),
                    }
                };
                if let Some(m) = problem {
                    out.add(
                        7,
                        &d.file,
                        p.line,
                        format!("the {} command of task `{}`: {m}", p.name, t.id),
                    );
                }
            }
        }
    }
}

/// MC006 (every used capability is declared) and MC016 (every declared one is used).
fn capabilities(m: &Manifest, manifest_text: &str, decks: &[Deck], out: &mut Findings) {
    let mut used: Vec<&str> = Vec::new();
    for d in decks {
        for t in &d.tasks {
            let mut uses: Vec<(&str, usize)> = t.phases.iter().map(|p| (p.name, p.line)).collect();
            if t.verified {
                uses.push(("terminal", t.phases.first().map_or(1, |p| p.line)));
            }
            for (cap, line) in uses {
                if !m.capabilities.iter().any(|c| c == cap) {
                    out.add(6, &d.file, line, format!("task `{}` uses `{cap}` but module.yaml does not declare it; add it to capabilities", t.id));
                }
                used.push(cap);
            }
        }
    }
    for c in &m.capabilities {
        if !used.contains(&c.as_str()) {
            out.add(
                16,
                manifest::FILE,
                key_line(manifest_text, "capabilities", 1),
                format!(
                    "capability `{c}` is declared but no task uses it; remove it from capabilities"
                ),
            );
        }
    }
}

/// MC009: no line of any file matches a secret pattern of the shipped
/// redaction rules (path patterns excepted). The secret is never echoed.
fn secrets(texts: &[(String, String)], out: &mut Findings) -> Result<(), ModuleError> {
    let rules = studyloop_redaction::RedactionRules::load_default()?;
    let patterns: Vec<_> = rules
        .patterns()
        .iter()
        .filter(|p| !NOT_SECRETS.contains(&p.id()))
        .collect();
    for (rel, text) in texts {
        for (i, line) in text.lines().enumerate() {
            if let Some(p) = patterns.iter().find(|p| p.finds(line)) {
                out.add(
                    9,
                    rel,
                    i + 1,
                    format!(
                        "looks like a secret ({}: {}); remove it, a module is shared as data",
                        p.id(),
                        p.description()
                    ),
                );
            }
        }
    }
    Ok(())
}
