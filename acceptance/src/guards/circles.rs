//! The circle guard: no import circle between a crate's top-level modules, and
//! none between files outside the allow-list ([`super::allowed`]).
//!
//! A circle (`a.rs` uses `b.rs`, which uses `a.rs`) means two files share a
//! concept that belongs in neither: usually a file split by line count, not by
//! idea, or a name parked in one of its consumers. The fix is to move the shared
//! constant or type into a leaf module both use.

use std::collections::BTreeSet;
use std::path::Path;

use super::allowed::AllowedCircle;
use super::graph::{circles, describe, file_edges, module_edges};
use super::tree::{Tree, TreeError};

/// The circles of one crate (a lib or bin target), files relative to `base`.
#[derive(Debug, Default)]
pub(crate) struct Circles {
    /// Each top-level module circle: its sorted modules and its report.
    pub(crate) modules: Vec<(Vec<String>, String)>,
    /// Each file circle: its sorted files and its report.
    pub(crate) files: Vec<(Vec<String>, String)>,
}

/// The circles of the crate rooted at `root`.
pub(crate) fn circles_of(root: &Path, base: &Path) -> Result<Circles, TreeError> {
    let tree = Tree::load(root)?;
    let files = file_edges(&tree, base);
    let modules = module_edges(&tree, base, &files);
    Ok(Circles {
        modules: circles(&modules)
            .into_iter()
            .map(|c| {
                let report = describe(&c, &modules);
                (c, report)
            })
            .collect(),
        files: circles(&files)
            .into_iter()
            .map(|c| {
                let report = describe(&c, &files);
                (c, report)
            })
            .collect(),
    })
}

/// Every problem with the circles `found` (`(package, members, report)`; `what` names
/// the members, "file" or "module") against the allow-list: a circle not listed, and a
/// listed circle that no longer exists.
pub(crate) fn judge(
    found: &[(String, Vec<String>, String)],
    allowed: &[AllowedCircle],
    what: &str,
) -> Vec<String> {
    let mut out: Vec<String> = found
        .iter()
        .filter(|(pkg, files, _)| !allowed.iter().any(|a| a.is(pkg, files)))
        .map(|(pkg, _, report)| {
            format!(
                "{pkg}: {what} circle not in the allow-list (move the shared name into a leaf \
                 module both use, or list it with its reason in acceptance/src/guards/allowed.rs):\n  {}",
                report.replace('\n', "\n  ")
            )
        })
        .collect();
    for a in allowed {
        if !found.iter().any(|(pkg, files, _)| a.is(pkg, files)) {
            out.push(format!(
                "{}: allowed {what} circle {} no longer exists (opened, or its files changed): drop or \
                 update its entry in acceptance/src/guards/allowed.rs",
                a.package,
                a.files.join(" <-> ")
            ));
        }
    }
    let unique: BTreeSet<String> = out.into_iter().collect();
    unique.into_iter().collect()
}
