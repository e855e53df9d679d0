//! Folders follow the crate graph (`docs/architecture.md#layout`): a folder never holds a
//! crate that a crate outside the folder, and below it in the graph, depends on. Such a
//! crate would draw an arrow from a lower folder back up into a higher one, which is how
//! the product once sat above its own test framework (it linked `acceptance/regular-file`).
//!
//! The graph is cargo's own ([`super::workspace::packages`]), not a reading of the
//! manifests by hand.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::workspace::{Package, packages, root};

type Graph = BTreeMap<String, (PathBuf, BTreeSet<String>)>;

/// The part of `dir` one level below `folder` (`folder` itself for a crate that sits there).
fn room(folder: &Path, dir: &Path) -> Option<PathBuf> {
    let rest = dir.strip_prefix(folder).ok()?;
    Some(match rest.components().next() {
        Some(c) => folder.join(c),
        None => folder.to_path_buf(),
    })
}

/// Each breach as a sentence. Inside every folder the rooms one level down (sub-folders,
/// and the folder's own crate) must link each other without a loop: a loop means some
/// arrow runs back up, whichever way the rooms are stacked.
fn breaches(graph: &Graph) -> Vec<String> {
    let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
    for (dir, _) in graph.values() {
        folders.extend(dir.ancestors().skip(1).map(Path::to_path_buf));
    }
    let mut out = Vec::new();
    for folder in &folders {
        // room -> rooms it links, and one crate pair behind each link, for the message.
        let mut links: BTreeMap<PathBuf, BTreeMap<PathBuf, (String, String)>> = BTreeMap::new();
        for (user, (dir, deps)) in graph {
            let Some(from) = room(folder, dir) else {
                continue;
            };
            for dep in deps {
                let Some(to) = room(folder, &graph[dep].0) else {
                    continue;
                };
                if from != to && from != *folder && to != *folder {
                    links
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_insert((user.clone(), dep.clone()));
                }
            }
        }
        for (a, targets) in &links {
            for (b, (user, dep)) in targets {
                if a < b && reaches(&links, b, a) {
                    out.push(format!(
                        "`{}/` and `{}/` link each other (`{user}` links `{dep}`, and a crate of `{}/` \
                         links back): move the shared crate to `common/` so every arrow runs down",
                        a.display(),
                        b.display(),
                        b.display()
                    ));
                }
            }
        }
    }
    out
}

fn reaches(
    links: &BTreeMap<PathBuf, BTreeMap<PathBuf, (String, String)>>,
    from: &Path,
    to: &Path,
) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_path_buf()];
    while let Some(at) = todo.pop() {
        if at == to {
            return true;
        }
        if seen.insert(at.clone()) {
            todo.extend(links.get(&at).into_iter().flat_map(|t| t.keys().cloned()));
        }
    }
    false
}

/// Each workspace crate's folder (relative to `root`) and the workspace crates it links.
fn graph(root: &Path, packages: &[Package]) -> Graph {
    let names: BTreeSet<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    packages
        .iter()
        .map(|p| {
            let dir = p
                .dir
                .strip_prefix(root)
                .expect("a member sits under the workspace root")
                .to_path_buf();
            let links = p
                .links
                .iter()
                .filter(|l| names.contains(l.as_str()))
                .cloned()
                .collect();
            (p.name.clone(), (dir, links))
        })
        .collect()
}

#[test]
fn no_folder_holds_a_crate_that_a_lower_crate_links() {
    let graph = graph(&root(), &packages(&root()));
    assert!(graph.len() >= 10, "the workspace has its crates: {graph:?}");
    let found = breaches(&graph);
    assert!(found.is_empty(), "arrows back up:\n{}", found.join("\n"));
}

/// The check can fail: the layouts the tree had before `common/` are named (a leaf that
/// `actors` links living inside `acceptance/`, which links `actors`; the credential rules
/// inside `product/`, which the framework links while the product linked a leaf inside
/// `acceptance/`).
#[test]
fn a_leaf_inside_a_higher_folder_is_named() {
    let mut graph = graph(&root(), &packages(&root()));
    let leaf = graph
        .get_mut("studyloop-regular-file")
        .expect("the leaf crate");
    leaf.0 = PathBuf::from("acceptance/regular-file");
    let found = breaches(&graph);
    assert!(
        found
            .iter()
            .any(|b| b.contains("`acceptance/` and `actors/` link each other")),
        "{found:?}"
    );
    graph
        .get_mut("studyloop-credentials")
        .expect("the credential rules")
        .0 = PathBuf::from("product/studyloop-credentials");
    let found = breaches(&graph);
    assert!(
        found
            .iter()
            .any(|b| b.contains("`acceptance/` and `product/` link each other")),
        "{found:?}"
    );
}
