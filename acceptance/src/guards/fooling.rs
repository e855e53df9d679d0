//! Each way the hand-written lexer guards were fooled, on a synthetic source tree:
//! the guards now see what rustc sees.

use std::path::Path;

use super::allowed::AllowedCircle;
use super::circles::{circles_of, judge};
use super::graph::file_edges;
use super::layout::defects;
use super::mod_rs_rule::breaches;
use super::tree::Tree;
use super::workspace::packages;

/// A package `x` in a tempdir with these files (its own workspace, so cargo reads it alone).
fn package(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = "[package]\nname = \"x\"\nedition = \"2024\"\n\n[workspace]\n".to_owned();
    for (rel, text) in files {
        if *rel == "Cargo.toml" {
            manifest.push_str(text);
            continue;
        }
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    dir
}

/// The file circles of `src/lib.rs`, each as its sorted files.
fn file_circles(dir: &Path) -> Vec<Vec<String>> {
    let found = circles_of(&dir.join("src/lib.rs"), dir).unwrap();
    found.files.into_iter().map(|(files, _)| files).collect()
}

fn pair(a: &str, b: &str) -> Vec<Vec<String>> {
    vec![vec![a.to_owned(), b.to_owned()]]
}

#[test]
fn a_multi_line_use_as_rustfmt_writes_it_is_read() {
    let dir = package(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "use crate::{\n    b::{\n        Thing,\n    },\n};\n\npub struct Other;\n",
        ),
        ("src/b.rs", "use crate::a::Other;\npub struct Thing;\n"),
    ]);
    assert_eq!(file_circles(dir.path()), pair("src/a.rs", "src/b.rs"));
    let found = circles_of(&dir.path().join("src/lib.rs"), dir.path()).unwrap();
    assert!(
        found.files[0].1.contains("src/a.rs -> src/b.rs: Thing"),
        "{}",
        found.files[0].1
    );
    assert_eq!(
        found.modules.len(),
        1,
        "a <-> b between top-level modules too"
    );
}

#[test]
fn nested_use_groups_reach_the_file_that_defines_the_name() {
    let dir = package(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "use crate::{b::{inner::{Thing as T, self}}, a as _};\npub struct Other;\n",
        ),
        ("src/b/mod.rs", "pub mod inner;\n"),
        (
            "src/b/inner.rs",
            "use crate::a::Other;\npub struct Thing;\n",
        ),
    ]);
    assert_eq!(file_circles(dir.path()), pair("src/a.rs", "src/b/inner.rs"));
}

#[test]
fn use_crate_as_root_and_extern_crate_self_are_the_crate() {
    let dir = package(&[
        ("src/lib.rs", "extern crate self as me;\nmod a;\nmod b;\n"),
        (
            "src/a.rs",
            "use crate as root;\nfn f() -> root::b::Thing { panic!() }\npub struct Other;\n",
        ),
        ("src/b.rs", "fn g(_: me::a::Other) {}\npub struct Thing;\n"),
    ]);
    // `me` is bound in the crate root only: b.rs writes `me::…` with no `use`, which
    // rustc resolves through the extern prelude; the guard must see it either way.
    let dir2 = package(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "use crate as root;\nfn f() -> root::b::Thing { panic!() }\npub struct Other;\n",
        ),
        (
            "src/b.rs",
            "use crate as top;\nfn g(_: top::a::Other) {}\npub struct Thing;\n",
        ),
    ]);
    assert_eq!(file_circles(dir2.path()), pair("src/a.rs", "src/b.rs"));
    assert_eq!(file_circles(dir.path()), pair("src/a.rs", "src/b.rs"));
}

#[test]
fn spaced_paths_are_paths() {
    let dir = package(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "fn f() { crate :: b :: g ( ) ; }\npub fn h() {}\n",
        ),
        ("src/b.rs", "pub fn g() { super ::\n    a :: h() }\n"),
    ]);
    assert_eq!(file_circles(dir.path()), pair("src/a.rs", "src/b.rs"));
}

#[test]
fn a_raw_byte_string_neither_hides_code_nor_counts_as_code() {
    let dir = package(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "const RAW: &[u8] = br#\"he said \"hi\" crate::b::Fake\"#;\nconst S: &str = \"crate::b::Fake\";\nuse crate::b::Thing;\npub struct Other;\n",
        ),
        ("src/b.rs", "use crate::a::Other;\npub struct Thing;\n"),
    ]);
    let tree = Tree::load(&dir.path().join("src/lib.rs")).unwrap();
    let edges = file_edges(&tree, dir.path());
    let names: Vec<&String> = edges[&("src/a.rs".to_owned(), "src/b.rs".to_owned())]
        .iter()
        .collect();
    assert_eq!(names, ["Thing"], "the strings' `crate::b::Fake` is no edge");
    assert_eq!(file_circles(dir.path()), pair("src/a.rs", "src/b.rs"));
}

#[test]
fn a_path_attribute_module_is_read_from_its_file() {
    let dir = package(&[
        (
            "src/lib.rs",
            "mod a;\n#[path = \"elsewhere/bee.rs\"]\nmod b;\n",
        ),
        ("src/a.rs", "use crate::b::Thing;\npub struct Other;\n"),
        (
            "src/elsewhere/bee.rs",
            "use crate::a::Other;\npub struct Thing;\n",
        ),
        // Not compiled: the #[path] wins, so this file's innocence proves nothing.
        ("src/b.rs", "pub struct Thing;\n"),
    ]);
    assert_eq!(
        file_circles(dir.path()),
        pair("src/a.rs", "src/elsewhere/bee.rs")
    );
}

#[test]
fn code_after_an_inline_test_module_counts_and_the_test_module_does_not() {
    let dir = package(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
        (
            "src/a.rs",
            "#[cfg(test)]\nmod tests {\n    use crate::b::Thing;\n}\n\nuse crate::b::Thing;\nuse crate::c::C;\npub struct Other;\n",
        ),
        (
            "src/b.rs",
            "#[cfg(test)]\nmod tests {}\n\nuse crate::a::Other;\npub struct Thing;\n",
        ),
        (
            "src/c.rs",
            "pub struct C;\n#[cfg(test)]\nmod tests {\n    use crate::a::Other;\n}\n#[cfg(test)]\nuse crate::a::Other as O;\n",
        ),
    ]);
    assert_eq!(file_circles(dir.path()), pair("src/a.rs", "src/b.rs"));
}

#[test]
fn a_module_behind_cfg_any_is_never_compiled_so_never_read() {
    let files = |decl: &'static str| {
        package(&[
            ("src/lib.rs", decl),
            ("src/a.rs", "use crate::b::Thing;\npub struct Other;\n"),
            ("src/b.rs", "use crate::a::Other;\npub struct Thing;\n"),
        ])
    };
    let compiled = files("mod a;\nmod b;\n");
    assert_eq!(file_circles(compiled.path()), pair("src/a.rs", "src/b.rs"));
    let off = files("mod a;\n#[cfg(any())]\nmod b;\n");
    assert!(file_circles(off.path()).is_empty());
    let tree = Tree::load(&off.path().join("src/lib.rs")).unwrap();
    assert!(tree.modules.iter().all(|m| !m.file.ends_with("b.rs")));
}

#[test]
fn a_mod_item_in_a_comment_or_a_string_declares_nothing() {
    let dir = package(&[
        (
            "tests/it/main.rs",
            "// mod ghost;\nconst S: &str = \"\nmod phantom;\n\";\n/* mod spook; */\n#[cfg(any())]\nmod off;\nmod real;\n",
        ),
        ("tests/it/real.rs", "#[test]\nfn t() {}\n"),
        ("tests/it/ghost.rs", ""),
        ("tests/it/phantom.rs", ""),
        ("tests/it/spook.rs", ""),
        ("tests/it/off.rs", ""),
        ("src/lib.rs", ""),
        (
            "src/bin/quiet.rs",
            "// mod helpers;\nfn main() { let _ = \"#[test] mod m;\"; }\n",
        ),
        (
            "src/bin/loud.rs",
            "#[path = \"../helpers.rs\"]\nmod helpers;\nfn main() {}\n",
        ),
        ("src/helpers.rs", ""),
        (
            "Cargo.toml",
            "[[test]]\nname = \"x_it\"\npath = \"tests/it/main.rs\"\n\n[[bin]]\nname = \"quiet\"\ntest = false\n\n[[bin]]\nname = \"loud\"\ntest = false\n",
        ),
    ]);
    let pkg = &packages(dir.path())[0];
    let mut found = defects(pkg);
    found.sort();
    let never: Vec<&str> = ["ghost", "off", "phantom", "spook"]
        .into_iter()
        .filter(|f| {
            found
                .iter()
                .any(|d| d.contains(&format!("it/{f}.rs: never compiled")))
        })
        .collect();
    assert_eq!(never, ["ghost", "off", "phantom", "spook"], "{found:#?}");
    assert!(found.iter().all(|d| !d.contains("real.rs")), "{found:#?}");
    assert!(found.iter().any(|d| d.contains("bin `loud`")), "{found:#?}");
    assert!(
        found.iter().all(|d| !d.contains("bin `quiet`")),
        "{found:#?}"
    );
    assert_eq!(found.len(), 5, "{found:#?}");
}

#[test]
fn a_test_target_outside_tests_is_refused_by_name() {
    let dir = package(&[
        ("src/lib.rs", ""),
        ("src/checks.rs", "#[test]\nfn t() {}\n"),
        ("tests/runner.rs", "fn main() {}\n"),
        ("tests/stray.rs", "#[test]\nfn t() {}\n"),
        (
            "Cargo.toml",
            "[[test]]\nname = \"checks\"\npath = \"src/checks.rs\"\n\n[[test]]\nname = \"runner\"\nharness = false\n",
        ),
    ]);
    let found = defects(&packages(dir.path())[0]);
    assert!(
        found
            .iter()
            .any(|d| d.starts_with("[[test]] `checks` of x: its file")
                && d.contains("outside tests/")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|d| d.contains("stray.rs: a new test binary")),
        "{found:#?}"
    );
    assert_eq!(
        found.len(),
        2,
        "the harness = false runner stays: {found:#?}"
    );
}

#[test]
fn a_folder_root_beside_its_folder_declares_re_exports_and_documents_only() {
    let dir = package(&[
        (
            "src/lib.rs",
            "pub fn root_may_hold_logic() {}\nmod clean;\nmod dirty;\nmod flat;\nmod nested;\n",
        ),
        (
            "src/clean.rs",
            "//! Docs.\n#[cfg(test)]\nmod tests;\npub(crate) mod part;\npub use part::X;\n// fn not_code() {}\n",
        ),
        ("src/clean/part.rs", "pub struct X;\n"),
        ("src/clean/tests.rs", "fn helper() {}\n"),
        (
            "src/dirty.rs",
            "mod part;\nconst S: &str = \"mod a; use b;\";\n",
        ),
        ("src/dirty/part.rs", ""),
        ("src/flat.rs", "pub fn logic_in_a_leaf_file() {}\n"),
        (
            "src/nested/mod.rs",
            "mod inner;\nimpl Foo {}\n#[cfg(test)]\nmod tests {}\n",
        ),
        ("src/nested/inner.rs", ""),
    ]);
    let tree = Tree::load(&dir.path().join("src/lib.rs")).unwrap();
    let found = breaches(&tree, dir.path());
    assert_eq!(
        found,
        vec![
            ("src/dirty.rs".to_owned(), vec!["const S".to_owned()]),
            (
                "src/nested/mod.rs".to_owned(),
                vec!["impl block".to_owned(), "inline mod tests".to_owned()]
            ),
        ]
    );
}

#[test]
fn an_unlisted_circle_and_a_stale_allow_list_entry_both_fail() {
    let found = vec![(
        "x".to_owned(),
        vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()],
        "src/a.rs <-> src/b.rs".to_owned(),
    )];
    let listed = [AllowedCircle {
        package: "x",
        files: &["src/b.rs", "src/a.rs"],
        reason: "deliberate",
    }];
    assert!(judge(&found, &listed, "file").is_empty());
    let unlisted = judge(&found, &[], "file");
    assert!(
        unlisted.len() == 1 && unlisted[0].contains("not in the allow-list"),
        "{unlisted:?}"
    );
    let stale = [AllowedCircle {
        package: "x",
        files: &["src/a.rs", "src/c.rs"],
        reason: "was deliberate",
    }];
    let problems = judge(&found, &stale, "file");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.iter().any(|p| p.contains("no longer exists")),
        "{problems:?}"
    );
}
