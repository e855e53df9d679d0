//! The guards on the workspace itself.

use std::collections::BTreeMap;

use super::allowed::{ALLOWED_CIRCLES, ALLOWED_FOLDER_ROOTS, ALLOWED_MODULE_CIRCLES};
use super::circles::{circles_of, judge};
use super::layout::defects;
use super::mod_rs_rule::breaches;
use super::tree::Tree;
use super::workspace::{packages, root};

#[test]
fn no_import_circle_between_top_level_modules_nor_between_files_outside_the_allow_list() {
    let mut modules = Vec::new();
    let mut found = Vec::new();
    let packages = packages(&root());
    assert!(packages.len() >= 10, "the workspace has its crates");
    for pkg in &packages {
        for target in pkg.targets.iter().filter(|t| t.ships()) {
            let circles = circles_of(&target.root, &pkg.dir)
                .unwrap_or_else(|e| panic!("{} ({}): {e}", pkg.name, target.name));
            for (members, report) in circles.modules {
                let entry = (pkg.name.clone(), members, report);
                if !modules.contains(&entry) {
                    modules.push(entry);
                }
            }
            for (files, report) in circles.files {
                let entry = (pkg.name.clone(), files, report);
                if !found.contains(&entry) {
                    found.push(entry);
                }
            }
        }
    }
    let mut problems = judge(&modules, ALLOWED_MODULE_CIRCLES, "module");
    problems.extend(judge(&found, ALLOWED_CIRCLES, "file"));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for a in ALLOWED_CIRCLES.iter().chain(ALLOWED_MODULE_CIRCLES) {
        assert!(!a.reason.trim().is_empty(), "{a:?} needs its reason");
    }
}

#[test]
fn every_folder_root_re_exports_and_documents_only() {
    let mut report = Vec::new();
    let mut seen = Vec::new();
    for pkg in packages(&root()) {
        for target in pkg.targets.iter().filter(|t| t.ships()) {
            let tree = Tree::load(&target.root)
                .unwrap_or_else(|e| panic!("{} ({}): {e}", pkg.name, target.name));
            for (file, logic) in breaches(&tree, &pkg.dir) {
                let key = (pkg.name.clone(), file.clone());
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                let allowed = ALLOWED_FOLDER_ROOTS
                    .iter()
                    .any(|a| a.package == pkg.name && a.file == file);
                if !allowed {
                    report.push(format!(
                        "{}/{file}: {} item(s) beyond `mod`/`use`, first: {}",
                        pkg.name,
                        logic.len(),
                        logic[0]
                    ));
                }
            }
        }
    }
    for a in ALLOWED_FOLDER_ROOTS {
        assert!(!a.reason.trim().is_empty(), "{a:?} needs its reason");
        if !seen.iter().any(|(p, f)| p == a.package && f == a.file) {
            report.push(format!(
                "{}/{}: allowed folder root holds no logic any more: drop its entry in \
                 acceptance/src/guards/allowed.rs",
                a.package, a.file
            ));
        }
    }
    assert!(
        report.is_empty(),
        "folder roots (mod.rs, or foo.rs beside foo/) with logic: move it into a file named \
         for its concept and re-export it:\n{}",
        report.join("\n")
    );
}

#[test]
fn every_crate_has_one_integration_test_binary_every_file_in_it_compiles_and_no_test_is_unlinked() {
    let found: Vec<String> = packages(&root()).iter().flat_map(defects).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_two_crates_name_a_test_binary_alike() {
    // Same-named binaries (`deps/it-<hash>` from every crate) read as versions of one
    // target to anything that keeps the newest per name, and `--test it` would pick all.
    let mut seen = BTreeMap::new();
    let mut clashes = Vec::new();
    for pkg in packages(&root()) {
        for t in pkg.targets.iter().filter(|t| t.kind == "test") {
            if let Some(other) = seen.insert(t.name.clone(), pkg.name.clone()) {
                clashes.push(format!(
                    "test binary `{}` in {other} and {}: name it for the crate in a [[test]] \
                     entry (name = \"<crate>_it\", path = \"tests/it/main.rs\")",
                    t.name, pkg.name
                ));
            }
        }
    }
    assert!(clashes.is_empty(), "{}", clashes.join("\n"));
}
