//! The integration-test layout: one test binary per crate.
//!
//! Every link of a test binary costs seconds on the 2-core machines, so a crate's
//! tests are modules of `tests/it/main.rs`, and only the libtest-mimic runners
//! (`[[test]]` entries with `harness = false`) sit directly under `tests/`. The
//! guard reads cargo's own targets (`cargo metadata`), the manifest with `toml`
//! (for `harness`, which cargo metadata omits) and each test crate's module tree
//! with `syn`, and names: a `[[test]]` whose file is outside `tests/`, a new
//! `tests/<name>.rs` binary, a second test folder, a `tests/` file no compiled
//! `mod` loads, and a `[[bin]]` with `test = false` whose file gains a test or a
//! module (no harness is linked, so it would never run).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

use super::cfg::{Compiled, compiled};
use super::tree::Tree;
use super::workspace::Package;

/// Names of the `[[test]]` targets with `harness = false` in the package's manifest.
fn runners(dir: &Path) -> Result<BTreeSet<String>, String> {
    let manifest = dir.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: not TOML: {e}", manifest.display()))?;
    let tests = table.get("test").and_then(toml::Value::as_array);
    Ok(tests
        .into_iter()
        .flatten()
        .filter(|t| t.get("harness").and_then(toml::Value::as_bool) == Some(false))
        .filter_map(|t| {
            t.get("name")
                .and_then(toml::Value::as_str)
                .map(str::to_owned)
        })
        .collect())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every layout defect of one package, as fix instructions.
pub(crate) fn defects(pkg: &Package) -> Vec<String> {
    let tests = pkg.dir.join("tests");
    let mut out = Vec::new();
    let runners = match runners(&pkg.dir) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut compiled_files = BTreeSet::new();
    for t in pkg.targets.iter().filter(|t| t.kind == "test") {
        if !t.root.starts_with(&tests) {
            out.push(format!(
                "[[test]] `{}` of {}: its file {} is outside tests/; make it a module of \
                 tests/it/ (or, for a harness = false runner, tests/{}.rs)",
                t.name,
                pkg.name,
                t.root.display(),
                t.name
            ));
        } else if t.root.parent() == Some(tests.as_path()) && !runners.contains(&t.name) {
            let stem = t.root.file_stem().unwrap_or_default().to_string_lossy();
            out.push(format!(
                "{}: a new test binary; `git mv` it to tests/it/{stem}.rs and add `mod {stem};` \
                 to tests/it/main.rs (only harness = false runners stay in tests/)",
                t.root.display()
            ));
        }
        match Tree::load(&t.root) {
            Ok(tree) => compiled_files.extend(tree.modules.into_iter().map(|m| m.file)),
            Err(e) => out.push(format!("test target `{}` of {}: {e}", t.name, pkg.name)),
        }
    }
    for entry in std::fs::read_dir(&tests).into_iter().flatten().flatten() {
        let path = entry.path();
        let mut inside = Vec::new();
        rust_files(&path, &mut inside);
        if path.is_dir() && entry.file_name() != "it" && !inside.is_empty() {
            out.push(format!(
                "{}: a second test directory; move its files into tests/it/ as modules",
                path.display()
            ));
        }
    }
    let mut files = Vec::new();
    rust_files(&tests.join("it"), &mut files);
    for file in files.iter().filter(|f| !compiled_files.contains(*f)) {
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        out.push(format!(
            "{}: never compiled (no compiled `mod` item loads it); add `mod {stem};` to the \
             module of its folder, or delete it",
            file.display()
        ));
    }
    out.extend(untested_bin_defects(pkg));
    out
}

/// A `[[bin]]` with `test = false` links no test harness, so a test or a module (which
/// could hold one) in its crate would never run.
fn untested_bin_defects(pkg: &Package) -> Vec<String> {
    let mut out = Vec::new();
    for bin in pkg.targets.iter().filter(|t| t.kind == "bin" && !t.tested) {
        let tree = match Tree::load(&bin.root) {
            Ok(tree) => tree,
            Err(e) => {
                out.push(format!("bin `{}` of {}: {e}", bin.name, pkg.name));
                continue;
            }
        };
        let mut finder = TestFinder::default();
        for m in &tree.modules {
            for item in &m.items {
                finder.visit_item(item);
            }
        }
        if tree.modules.len() > 1 || finder.found {
            out.push(format!(
                "{}: bin `{}` has `test = false` but a test or a module; move them to the \
                 library, or drop `test = false` in its [[bin]] entry",
                bin.root.display(),
                bin.name
            ));
        }
    }
    out
}

/// Finds a `#[test]` function or a test-only item.
#[derive(Default)]
struct TestFinder {
    found: bool,
}

impl<'ast> Visit<'ast> for TestFinder {
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        let test_attr = attr.path().is_ident("test");
        let test_cfg = compiled(std::slice::from_ref(attr)) == Compiled::TestOnly;
        self.found |= test_attr || test_cfg;
        visit::visit_attribute(self, attr);
    }
}
