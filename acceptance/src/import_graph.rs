//! Import circles between a crate's top-level modules (test-only).
//!
//! A circle (`a.rs` uses `b.rs`, which uses `a.rs`) means two files share a
//! concept that belongs in neither: usually a file split by line count, not by
//! idea. The fix is to move the shared constant or type into a leaf module both
//! use. This check walks every crate of the workspace (each directory with a
//! `Cargo.toml` and a `src/`), reads the `crate::…` and `super::…` paths of
//! each source file with comments and string literals blanked out, reduces
//! them to edges between top-level modules (`src/<m>.rs` or `src/<m>/…`), and
//! fails on every strongly connected set of more than one module, naming a
//! file and line for each edge so the circle can be opened.
//!
//! What it is not: a Rust parser. `use` through a re-export of another crate,
//! macros that expand to paths and inline `mod` blocks other than a trailing
//! `#[cfg(test)]` one are not seen; the check is a floor, not a proof.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One source file of a crate: its path under `src/` and its text.
pub(crate) struct Source {
    /// Path relative to the crate's `src/`, `/`-separated.
    pub(crate) rel: String,
    /// The file's text.
    pub(crate) text: String,
}

/// One edge between top-level modules, with where it was seen.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Edge {
    pub(crate) from: String,
    pub(crate) to: String,
    /// `path:line` of the first use seen.
    pub(crate) at: String,
}

/// Blanks comments, string and char literals (keeping newlines), so the
/// path scan sees code only.
pub(crate) fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0usize;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (next == Some(b'"') || next == Some(b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            // Raw string: r"…" or r#…#"…"#…#.
            let mut j = i + 1;
            while j < b.len() && b[j] == b'#' {
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let mut k = j + 1;
            while k < b.len() {
                if b[k] == b'"'
                    && b[k + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    k += 1 + hashes;
                    break;
                }
                k += 1;
            }
            for &x in &b[i..k.min(b.len())] {
                blank(&mut out, x);
            }
            i = k;
        } else if c == b'"' {
            blank(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if next == Some(b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                // One UTF-8 scalar then a quote makes a char literal.
                let rest = &text[(i + 1).min(text.len())..];
                rest.chars()
                    .next()
                    .filter(|ch| rest[ch.len_utf8()..].starts_with('\''))
                    .map(|ch| i + 1 + ch.len_utf8())
            };
            match end {
                Some(e) => {
                    out.extend(std::iter::repeat_n(b' ', e + 1 - i));
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(crate) fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The module path of a file under `src/`: `a/b.rs` → `[a, b]`,
/// `a/mod.rs` → `[a]`; `None` for the crate root and `bin/`.
fn module_path(rel: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
    let last = parts.pop()?;
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let stem = last.strip_suffix(".rs")?;
    if stem != "mod" {
        parts.push(stem.to_owned());
    }
    if parts.is_empty() || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")) {
        return None;
    }
    Some(parts)
}

/// The identifier segments of the path starting at byte `at` (after a `::`),
/// including the ones inside one level of `{…}` groups: `a::{b, c::d}` → the
/// first segment of each alternative, `[a]` (the group's items are inside `a`).
fn first_segment(code: &str, at: usize) -> Vec<String> {
    let rest = &code[at..];
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let end = group.find('}').unwrap_or(group.len());
        return group[..end]
            .split(',')
            .filter_map(|item| {
                let id: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                (!id.is_empty() && id != "self").then_some(id)
            })
            .collect();
    }
    let id: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if id.is_empty() { Vec::new() } else { vec![id] }
}

/// The byte offset of the first inline `#[cfg(test)] mod name {` block.
fn inline_test_module(code: &str) -> Option<usize> {
    code.match_indices("#[cfg(test)]")
        .map(|(at, _)| at)
        .find(|&at| {
            let rest = code[at + "#[cfg(test)]".len()..].trim_start();
            rest.strip_prefix("mod ")
                .map(|r| {
                    r.trim_start()
                        .trim_start_matches(|c: char| is_ident(c as u8))
                })
                .is_some_and(|r| r.trim_start().starts_with('{'))
        })
}

/// Module paths declared `#[cfg(test)] mod name;` (out-of-line test modules,
/// such as `transcript/tests.rs`): compiled for tests only, so their imports
/// are no edges of the library.
fn test_only_modules(sources: &[Source]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for source in sources {
        let parent = match source.rel.as_str() {
            "lib.rs" | "main.rs" => Vec::new(),
            rel => match module_path(rel) {
                Some(p) => p,
                None => continue,
            },
        };
        let code = code_only(&source.text);
        for (at, _) in code.match_indices("#[cfg(test)]") {
            let rest = code[at + "#[cfg(test)]".len()..].trim_start();
            let Some(rest) = rest.strip_prefix("mod ") else {
                continue;
            };
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            if !name.is_empty() && after.starts_with(';') {
                let mut path = parent.clone();
                path.push(name);
                out.push(path);
            }
        }
    }
    out
}

/// Edges between the top-level modules of one crate's sources.
pub(crate) fn edges(sources: &[Source]) -> Vec<Edge> {
    let tops: BTreeSet<String> = sources
        .iter()
        .filter_map(|s| module_path(&s.rel))
        .map(|p| p[0].clone())
        .collect();
    let test_only = test_only_modules(sources);
    let mut found: BTreeMap<(String, String), String> = BTreeMap::new();
    for source in sources {
        let Some(path) = module_path(&source.rel) else {
            continue;
        };
        if test_only.iter().any(|t| path.starts_with(t)) {
            continue;
        }
        let mut code = code_only(&source.text);
        // The trailing inline unit-test module is compiled for tests only.
        if let Some(cut) = inline_test_module(&code) {
            code.truncate(cut);
        }
        let from = &path[0];
        for (line_no, line) in code.lines().enumerate() {
            let mut targets = Vec::new();
            for (pos, _) in line.match_indices("crate::") {
                if pos > 0
                    && (is_ident(line.as_bytes()[pos - 1]) || line.as_bytes()[pos - 1] == b'$')
                {
                    continue;
                }
                targets.extend(first_segment(line, pos + "crate::".len()));
            }
            for (pos, _) in line.match_indices("super::") {
                if pos > 0 && is_ident(line.as_bytes()[pos - 1]) {
                    continue;
                }
                // Count the chain of `super::` and resolve against the module path.
                let mut ups = 1;
                let mut after = pos + "super::".len();
                while line[after..].starts_with("super::") {
                    ups += 1;
                    after += "super::".len();
                }
                if pos >= "super::".len() && line[..pos].ends_with("super::") {
                    continue; // counted with the first `super::` of the chain
                }
                if ups < path.len() {
                    targets.push(path[0].clone());
                } else if ups == path.len() {
                    targets.extend(first_segment(line, after));
                }
            }
            for to in targets {
                if &to != from && tops.contains(&to) {
                    found
                        .entry((from.clone(), to))
                        .or_insert_with(|| format!("{}:{}", source.rel, line_no + 1));
                }
            }
        }
    }
    found
        .into_iter()
        .map(|((from, to), at)| Edge { from, to, at })
        .collect()
}

/// Strongly connected sets of more than one module (Tarjan), each sorted.
pub(crate) fn circles(edges: &[Edge]) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in edges {
        graph.entry(&e.from).or_default().push(&e.to);
        graph.entry(&e.to).or_default();
    }
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, graph: &BTreeMap<&'a str, Vec<&'a str>>, st: &mut State<'a>) {
        let i = st.index.len();
        st.index.insert(v, i);
        st.low.insert(v, i);
        st.stack.push(v);
        for &w in &graph[v] {
            if !st.index.contains_key(w) {
                visit(w, graph, st);
                let lw = st.low[w];
                let lv = st.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if st.stack.contains(&w) {
                let iw = st.index[w];
                let lv = st.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if st.low[v] == st.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.stack.pop() {
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                st.out.push(comp);
            }
        }
    }
    let mut st = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for &v in graph.keys() {
        if !st.index.contains_key(v) {
            visit(v, &graph, &mut st);
        }
    }
    st.out.sort();
    st.out
}

/// Every `.rs` file under `src`, as [`Source`]s.
pub(crate) fn read_sources(src: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    let mut todo = vec![src.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let mut entries: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p
                    .strip_prefix(src)
                    .expect("under src")
                    .to_string_lossy()
                    .replace('\\', "/");
                let text =
                    fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
                out.push(Source { rel, text });
            }
        }
    }
    out
}

/// Every workspace crate directory (holding `Cargo.toml` and `src/`).
pub(crate) fn crates(workspace: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![workspace.to_path_buf()];
    while let Some(dir) = todo.pop() {
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            out.push(dir.clone());
        }
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if p.is_dir()
                && !name.starts_with('.')
                && !matches!(
                    name.as_ref(),
                    "target" | "node_modules" | "src" | "tests" | "benches"
                )
            {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(rel: &str, text: &str) -> Source {
        Source {
            rel: rel.to_owned(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn no_import_circle_between_top_level_modules() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut report = Vec::new();
        for dir in crates(&workspace) {
            let name = dir
                .strip_prefix(&workspace)
                .expect("under workspace")
                .to_string_lossy()
                .into_owned();
            let edges = edges(&read_sources(&dir.join("src")));
            for circle in circles(&edges) {
                let detail: Vec<String> = edges
                    .iter()
                    .filter(|e| circle.contains(&e.from) && circle.contains(&e.to))
                    .map(|e| format!("    {} -> {} ({})", e.from, e.to, e.at))
                    .collect();
                report.push(format!(
                    "{name}: {}\n{}",
                    circle.join(" <-> "),
                    detail.join("\n")
                ));
            }
        }
        assert!(
            report.is_empty(),
            "import circles between top-level modules (move the shared constant or type into a leaf module both use):\n{}",
            report.join("\n")
        );
    }

    #[test]
    fn a_two_module_circle_is_found_with_its_lines() {
        let edges = edges(&[
            src("lib.rs", "mod a; mod b; mod c;"),
            src("a.rs", "use crate::b::X;\n"),
            src("b/mod.rs", "mod inner;\n"),
            src("b/inner.rs", "fn f() { super::super::a::g(); }\n"),
            src("c.rs", "use crate::a;\n"),
        ]);
        assert_eq!(circles(&edges), vec![vec!["a".to_owned(), "b".to_owned()]]);
        let ba = edges.iter().find(|e| e.from == "b").expect("edge b -> a");
        assert_eq!((ba.to.as_str(), ba.at.as_str()), ("a", "b/inner.rs:1"));
    }

    #[test]
    fn out_of_line_test_modules_are_no_edges_and_code_after_them_is() {
        let edges = edges(&[
            src("lib.rs", "mod a; mod b; #[cfg(test)]\nmod checks;"),
            src("a.rs", "#[cfg(test)]\nmod tests;\nuse crate::b::X;\n"),
            src("a/tests.rs", "use crate::b::Y;\n"),
            src("b.rs", "#[cfg(test)]\nmod tests;\n"),
            src("b/tests.rs", "use crate::a::Z;\n"),
            src("checks.rs", "use crate::a::Z;\n"),
        ]);
        let pairs: Vec<(&str, &str, &str)> = edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str(), e.at.as_str()))
            .collect();
        assert_eq!(pairs, vec![("a", "b", "a.rs:3")]);
        assert!(circles(&edges).is_empty());
    }

    #[test]
    fn comments_strings_groups_and_tests_are_read_as_code_only() {
        let edges = edges(&[
            src(
                "a.rs",
                "//! see crate::b\n/* crate::b */ const S: &str = \"crate::b\";\nconst R: &str = r#\"crate::b\"#;\nconst C: char = '\"'; fn f<'a>(x: &'a str) {}\n#[cfg(test)]\nmod tests { use crate::b; }\n",
            ),
            src("b.rs", "use crate::{c, a::Thing};\n"),
            src("c.rs", "macro_rules! m { () => { $crate::b::x() } }\n"),
        ]);
        let pairs: Vec<(&str, &str)> = edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str()))
            .collect();
        assert_eq!(pairs, vec![("b", "a"), ("b", "c")]);
        assert!(circles(&edges).is_empty());
    }
}
