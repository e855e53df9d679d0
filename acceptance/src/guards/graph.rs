//! The import graph of one crate, file by file, and its circles.
//!
//! An edge `a.rs -> b.rs` means the library code of `a.rs` names an item whose
//! module lives in `b.rs` (through any chain of re-exports). Naming a module alone
//! (`use crate::lane;`) is no edge: the items used through it are. A circle is a
//! strongly connected set of more than one file (Tarjan); the same graph reduced
//! to top-level modules (`src/<m>.rs` or `src/<m>/…`) gives the module circles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::paths::paths_of;
use super::scope::{Scopes, Target};
use super::tree::Tree;

/// `from -> to` with the names `from` uses from `to`.
pub(crate) type Edges = BTreeMap<(String, String), BTreeSet<String>>;

/// The file-level edges of a crate's library build, files named relative to `base`.
pub(crate) fn file_edges(tree: &Tree, base: &Path) -> Edges {
    let scopes = Scopes::new(tree);
    let name = |file: &PathBuf| {
        file.strip_prefix(base)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut edges = Edges::new();
    for (i, module) in tree.library() {
        for path in paths_of(&module.items) {
            let Some(Target::Item(k, item)) = scopes.resolve(i, &path) else {
                continue;
            };
            let to = &tree.modules[k].file;
            if *to != module.file {
                edges
                    .entry((name(&module.file), name(to)))
                    .or_default()
                    .insert(item);
            }
        }
    }
    edges
}

/// The same edges between top-level modules, with the file edges behind each.
pub(crate) fn module_edges(tree: &Tree, base: &Path, files: &Edges) -> Edges {
    let top: BTreeMap<String, String> = tree
        .modules
        .iter()
        .filter(|m| !m.inline)
        .filter_map(|m| {
            let rel = m.file.strip_prefix(base).unwrap_or(&m.file);
            Some((
                rel.to_string_lossy().replace('\\', "/"),
                m.path.first()?.clone(),
            ))
        })
        .collect();
    let mut out = Edges::new();
    for ((from, to), names) in files {
        if let (Some(a), Some(b)) = (top.get(from), top.get(to))
            && a != b
        {
            let via = names.iter().map(|n| format!("{from} -> {to}: {n}"));
            out.entry((a.clone(), b.clone())).or_default().extend(via);
        }
    }
    out
}

/// Strongly connected sets of more than one node, each sorted, sorted.
pub(crate) fn circles(edges: &Edges) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        graph.entry(from).or_default().push(to);
        graph.entry(to).or_default();
    }
    let mut st = Tarjan::default();
    for &v in graph.keys() {
        if !st.index.contains_key(v) {
            st.visit(v, &graph);
        }
    }
    st.out.sort();
    st.out
}

/// One circle as a report: `a <-> b` and one `from -> to: names` line per edge in it.
pub(crate) fn describe(circle: &[String], edges: &Edges) -> String {
    let mut lines = vec![circle.join(" <-> ")];
    for ((from, to), names) in edges {
        if circle.contains(from) && circle.contains(to) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            lines.push(format!("    {from} -> {to}: {}", names.join(", ")));
        }
    }
    lines.join("\n")
}

#[derive(Default)]
struct Tarjan<'a> {
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    out: Vec<Vec<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, v: &'a str, graph: &BTreeMap<&'a str, Vec<&'a str>>) {
        let i = self.index.len();
        self.index.insert(v, i);
        self.low.insert(v, i);
        self.stack.push(v);
        self.on_stack.insert(v);
        for &w in graph.get(v).into_iter().flatten() {
            let seen = self.index.get(w).copied();
            let reach = match seen {
                None => {
                    self.visit(w, graph);
                    self.low.get(w).copied()
                }
                Some(iw) if self.on_stack.contains(w) => Some(iw),
                Some(_) => None,
            };
            if let (Some(r), Some(lv)) = (reach, self.low.get_mut(v)) {
                *lv = (*lv).min(r);
            }
        }
        if self.low.get(v) == self.index.get(v) {
            let mut comp = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                self.out.push(comp);
            }
        }
    }
}
