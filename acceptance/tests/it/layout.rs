//! The integration-test layout stays one binary per crate: every link of a test
//! binary costs seconds on the 2-core machines, so a crate's tests are modules of
//! `tests/it/main.rs`, and only the libtest-mimic runners (`[[test]]` entries with
//! `harness = false`) sit directly under `tests/`. This test fails on a new
//! `tests/<name>.rs` (a new binary) and on a `tests/it/` file no `mod` declares
//! (a file that silently never compiles), naming the fix; and on a `[[bin]]` with
//! `test = false` (no test harness linked) whose file gains a test or a module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("acceptance/ sits in the workspace root")
        .to_owned()
}

/// The `members = [...]` paths of the workspace manifest.
fn members(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let list = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("the workspace manifest lists its members");
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m))
        .collect()
}

/// The `key = value` pairs of every `[[table]]` entry of a member manifest.
fn targets(member: &Path, table: &str) -> Vec<Vec<(String, String)>> {
    let manifest = std::fs::read_to_string(member.join("Cargo.toml")).unwrap();
    manifest
        .split(&format!("[[{table}]]"))
        .skip(1)
        .map(|entry| {
            let entry = entry.split("\n[").next().unwrap_or_default();
            entry
                .lines()
                .filter_map(|l| {
                    let l = l.split('#').next()?;
                    let (key, value) = l.split_once('=')?;
                    Some((
                        key.trim().to_owned(),
                        value.trim().trim_matches('"').to_owned(),
                    ))
                })
                .collect()
        })
        .collect()
}

fn field<'e>(entry: &'e [(String, String)], key: &str) -> Option<&'e str> {
    entry
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Names of the `[[test]]` targets with `harness = false` in a member manifest.
fn runners(member: &Path) -> BTreeSet<String> {
    targets(member, "test")
        .iter()
        .filter(|t| field(t, "harness") == Some("false"))
        .filter_map(|t| field(t, "name").map(str::to_owned))
        .collect()
}

/// A `[[bin]]` with `test = false` links no test harness, so a test or a module (which
/// could hold one) in its file would never run.
fn untested_bin_defects(member: &Path) -> Vec<String> {
    let package = std::fs::read_to_string(member.join("Cargo.toml"))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("name = ")
                .map(|v| v.trim_matches('"').to_owned())
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for bin in targets(member, "bin") {
        if field(&bin, "test") != Some("false") {
            continue;
        }
        let name = field(&bin, "name").unwrap_or_default();
        let path = match field(&bin, "path") {
            Some(path) => member.join(path),
            None if name == package => member.join("src/main.rs"),
            None => member.join(format!("src/bin/{name}.rs")),
        };
        let Ok(source) = std::fs::read_to_string(&path) else {
            out.push(format!(
                "{}: bin `{name}` has no source here",
                path.display()
            ));
            continue;
        };
        let risky = source.lines().map(str::trim).any(|l| {
            l.contains("#[test]")
                || l.contains("cfg(test)")
                || l.starts_with("mod ")
                || l.starts_with("pub mod ")
        });
        if risky {
            out.push(format!(
                "{}: bin `{name}` has `test = false` but a test or a module; move them to the \
                 library, or drop `test = false` in its [[bin]] entry",
                path.display()
            ));
        }
    }
    out
}

/// The `mod name;` declarations of `main.rs` (with or without attributes before them).
fn declared(main: &str) -> BTreeSet<String> {
    main.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

fn has_rust(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let p = e.path();
        p.extension().is_some_and(|x| x == "rs") || (p.is_dir() && has_rust(&p))
    })
}

/// Every layout defect of one member's `tests/` directory, as fix instructions.
fn defects(member: &Path) -> Vec<String> {
    let tests = member.join("tests");
    let mut out = Vec::new();
    if !tests.is_dir() {
        return out;
    }
    let runners = runners(member);
    for entry in std::fs::read_dir(&tests).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "it" && has_rust(&path) {
                out.push(format!(
                    "{}: a second test directory; move its files into tests/it/ as modules",
                    path.display()
                ));
            }
        } else if let Some(stem) = name.strip_suffix(".rs")
            && !runners.contains(stem)
        {
            out.push(format!(
                "{}: a new test binary; `git mv` it to tests/it/{name} and add `mod {stem};` \
                 to tests/it/main.rs (only harness = false runners stay in tests/)",
                path.display()
            ));
        }
    }
    let it = tests.join("it");
    let Ok(main) = std::fs::read_to_string(it.join("main.rs")) else {
        if it.is_dir() {
            out.push(format!("{}: no main.rs", it.display()));
        }
        return out;
    };
    let declared = declared(&main);
    for entry in std::fs::read_dir(&it).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let module = if path.is_dir() {
            // A directory is a module (`dir/mod.rs`) or the submodules of `dir.rs`.
            if !path.join("mod.rs").is_file() {
                continue;
            }
            name
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem == "main" {
                continue;
            }
            stem.to_owned()
        } else {
            continue;
        };
        if !declared.contains(&module) {
            out.push(format!(
                "{}: never compiled; add `mod {module};` to {}",
                path.display(),
                it.join("main.rs").display()
            ));
        }
    }
    out
}

/// The name of each member's test binaries: declared `[[test]]` names, plus `it` when
/// `tests/it/main.rs` is there without a declaration (cargo then infers the name `it`).
fn test_binary_names(member: &Path) -> Vec<String> {
    let declared = targets(member, "test");
    let mut names: Vec<String> = declared
        .iter()
        .filter_map(|t| field(t, "name").map(str::to_owned))
        .collect();
    let it_declared = declared
        .iter()
        .any(|t| field(t, "path") == Some("tests/it/main.rs"));
    if member.join("tests/it/main.rs").is_file() && !it_declared {
        names.push("it".to_owned());
    }
    names
}

#[test]
fn no_two_crates_name_a_test_binary_alike() {
    // Same-named binaries (`deps/it-<hash>` from every crate) read as versions of one
    // target to anything that keeps the newest per name, and `--test it` would pick all.
    let mut seen = std::collections::BTreeMap::new();
    let mut clashes = Vec::new();
    for member in members(&workspace_root()) {
        for name in test_binary_names(&member) {
            if let Some(other) = seen.insert(name.clone(), member.clone()) {
                clashes.push(format!(
                    "test binary `{name}` in {} and {}: name it for the crate in a [[test]] \
                     entry (name = \"<crate>_it\", path = \"tests/it/main.rs\")",
                    other.display(),
                    member.display()
                ));
            }
        }
    }
    assert!(clashes.is_empty(), "{}", clashes.join("\n"));
}

#[test]
fn every_crate_has_one_integration_test_binary_every_file_in_it_compiles_and_no_test_is_unlinked() {
    let root = workspace_root();
    let members = members(&root);
    assert!(members.len() >= 5, "members parsed: {members:?}");
    let found: Vec<String> = members
        .iter()
        .flat_map(|m| defects(m).into_iter().chain(untested_bin_defects(m)))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_layout_check_finds_a_stray_binary_and_an_undeclared_module() {
    let dir = tempfile::tempdir().unwrap();
    let member = dir.path();
    std::fs::write(
        member.join("Cargo.toml"),
        "[package]\nname = \"x\"\n\n[[test]]\nname = \"runner\"\nharness = false\n",
    )
    .unwrap();
    std::fs::create_dir_all(member.join("tests/it/common")).unwrap();
    std::fs::create_dir_all(member.join("tests/it/nested")).unwrap();
    for (file, text) in [
        ("tests/runner.rs", "fn main() {}"),
        ("tests/stray.rs", ""),
        ("tests/it/main.rs", "mod common;\n#[cfg(unix)]\nmod kept;\n"),
        ("tests/it/kept.rs", ""),
        ("tests/it/nested.rs", ""),
        ("tests/it/nested/child.rs", ""),
        ("tests/it/common/mod.rs", ""),
    ] {
        std::fs::write(member.join(file), text).unwrap();
    }
    std::fs::create_dir_all(member.join("src/bin")).unwrap();
    std::fs::write(member.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(
        member.join("src/bin/tool.rs"),
        "mod helpers;\nfn main() {}\n",
    )
    .unwrap();
    let manifest = std::fs::read_to_string(member.join("Cargo.toml")).unwrap();
    std::fs::write(
        member.join("Cargo.toml"),
        manifest + "\n[[bin]]\nname = \"x\"\ntest = false\n\n[[bin]]\nname = \"tool\"\ntest = false # why\n",
    )
    .unwrap();
    let bins = untested_bin_defects(member);
    assert!(
        bins.len() == 1 && bins[0].contains("tool.rs"),
        "only the bin with a module is flagged: {bins:?}"
    );
    let found = defects(member);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("stray.rs") || found[1].contains("stray.rs"),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| d.contains("nested.rs") && d.contains("mod nested;")),
        "{found:?}"
    );
}
