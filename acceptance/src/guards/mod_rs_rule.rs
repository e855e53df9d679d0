//! Folder roots re-export and document only.
//!
//! A module's folder root (its `mod.rs`, or a `foo.rs` beside the `foo/` folder
//! its children live in) says what the module is for (`//!`) and which files hold
//! its concepts; the logic lives in those files, named for what they hold, so a
//! newcomer finds a concept from the file names alone. Allowed are `mod name;`
//! declarations and `use` items, with any attributes and docs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::Item;

use super::tree::Tree;

/// The folder-root files of a module tree: every `mod.rs`, and every other
/// non-root file with a child module loaded from its `<stem>/` folder.
pub(crate) fn folder_roots(tree: &Tree) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for m in tree.modules.iter().filter(|m| !m.inline) {
        if m.file.file_name().is_some_and(|n| n == "mod.rs") {
            out.insert(m.file.clone());
        }
    }
    for child in tree.modules.iter().filter(|m| !m.inline) {
        let Some(parent) = child.parent.map(|p| &tree.modules[p]) else {
            continue;
        };
        if parent.parent.is_none() || parent.file == child.file {
            continue; // the crate root may hold logic; inline children share the file
        }
        if let Some(folder) = stem_folder(&parent.file)
            && child.file.starts_with(&folder)
        {
            out.insert(parent.file.clone());
        }
    }
    out
}

/// `a/foo.rs` -> `a/foo/` (none for `mod.rs`, whose folder is its own).
fn stem_folder(file: &Path) -> Option<PathBuf> {
    let stem = file.file_stem()?;
    (stem != "mod").then(|| file.with_file_name(stem))
}

/// Every item of a folder root's file that is neither a `mod name;` nor a `use`,
/// described for the report (`fn parse`, `inline mod tests`, `impl`).
pub(crate) fn logic(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| {
            let named = |kind: &str, ident: &syn::Ident| Some(format!("{kind} {ident}"));
            match item {
                Item::Use(_) => None,
                Item::Mod(m) if m.content.is_none() => None,
                Item::Mod(m) => named("inline mod", &m.ident),
                Item::Const(i) => named("const", &i.ident),
                Item::Enum(i) => named("enum", &i.ident),
                Item::Fn(i) => named("fn", &i.sig.ident),
                Item::Static(i) => named("static", &i.ident),
                Item::Struct(i) => named("struct", &i.ident),
                Item::Trait(i) => named("trait", &i.ident),
                Item::Type(i) => named("type", &i.ident),
                Item::Union(i) => named("union", &i.ident),
                Item::Impl(_) => Some("impl block".to_owned()),
                Item::Macro(_) => Some("macro".to_owned()),
                _ => Some("item".to_owned()),
            }
        })
        .collect()
}

/// Each folder root of the crate rooted at `root` that holds logic, as
/// `(file relative to base, its logic items)`.
pub(crate) fn breaches(tree: &Tree, base: &Path) -> Vec<(String, Vec<String>)> {
    let roots = folder_roots(tree);
    tree.modules
        .iter()
        .filter(|m| !m.inline && roots.contains(&m.file))
        .filter_map(|m| {
            let found = logic(&m.items);
            let rel = m.file.strip_prefix(base).unwrap_or(&m.file);
            (!found.is_empty()).then(|| (rel.to_string_lossy().replace('\\', "/"), found))
        })
        .collect()
}
