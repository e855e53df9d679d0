//! The variable names the crates' non-test source spells out, found with a Rust
//! parser (syn): every string literal, in code and inside macro invocations, whose
//! whole text is a name of one of the families the code owns — `STUDYLOOP_…` (the
//! product and the tiers), `STUB_ACP_…` (the stub ACP agent's knobs) and
//! `LITELLM_…` (the gateway learner and the LiteLLM proxy the tiers start). Other
//! names the code reads (`HOME`, `OPENAI_API_KEY`, `CODEX_HOME`, …) belong to other
//! programs; they reach the chapter through the crates' `ENV_VARS`.
//!
//! Non-test source: each crate's `src/lib.rs`, `src/main.rs` and `src/bin/*.rs` and
//! the module files they declare, following `mod` declarations (and `#[path]`),
//! leaving out every item under `#[cfg(test)]` or `#[test]`, so a test module's
//! own file is never read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proc_macro2::TokenTree;
use syn::visit::Visit;

/// Literals with a variable's shape that name no variable, with why.
pub(crate) const NOT_VARIABLES: &[&str] = &[
    // The word the harness actor echoes into its pane to mark a reply's end.
    "STUDYLOOP_ACTOR_DONE",
];

fn is_variable_name(s: &str) -> bool {
    ["STUDYLOOP_", "STUB_ACP_", "LITELLM_"].iter().any(|p| {
        s.strip_prefix(p).is_some_and(|rest| {
            !rest.is_empty()
                && !rest.ends_with('_')
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        })
    })
}

/// True for `#[test]`, `#[cfg(test)]` and `#[cfg(all(test, …))]`.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        if !a.path().is_ident("cfg") {
            return false;
        }
        let Ok(list) = a.meta.require_list() else {
            return false;
        };
        let tokens = list.tokens.to_string();
        tokens == "test"
            || (tokens.starts_with("all") && tokens.contains("test") && !tokens.contains("not"))
    })
}

/// Collects the names of one file's literals, skipping test-only items.
struct Names<'a> {
    file: &'a str,
    out: &'a mut BTreeMap<String, String>,
}

impl Names<'_> {
    fn found(&mut self, value: &str, line: usize) {
        if is_variable_name(value) {
            self.out
                .entry(value.to_owned())
                .or_insert_with(|| format!("{}:{line}", self.file));
        }
    }

    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        for tree in tokens {
            match tree {
                TokenTree::Literal(lit) => {
                    let line = lit.span().start().line;
                    if let syn::Lit::Str(s) = syn::Lit::new(lit) {
                        self.found(&s.value(), line);
                    }
                }
                TokenTree::Group(g) => self.tokens(g.stream()),
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !test_only(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        self.found(&lit.value(), lit.span().start().line);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
    }
}

/// The file a `mod name;` declared in `dir` (the declaring module's directory) means.
fn module_file(dir: &Path, item: &syn::ItemMod) -> Option<PathBuf> {
    for attr in &item.attrs {
        if attr.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            return Some(dir.join(s.value()));
        }
    }
    let name = item.ident.to_string();
    [
        dir.join(format!("{name}.rs")),
        dir.join(&name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Scans `file` and, through its non-test `mod` declarations, every module file
/// below it. `dir` is where its child modules' files live.
fn scan(root: &Path, file: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let rel = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    Names { file: &rel, out }.visit_file(&parsed);
    scan_items(root, &parsed.items, dir, out);
}

fn scan_items(root: &Path, items: &[syn::Item], dir: &Path, out: &mut BTreeMap<String, String>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if test_only(&m.attrs) {
            continue;
        }
        let child_dir = dir.join(m.ident.to_string());
        match &m.content {
            // Inline: its literals were visited with the file; its `mod x;` items
            // live in `dir/<name>/`.
            Some((_, inner)) => scan_items(root, inner, &child_dir, out),
            None => {
                let Some(child) = module_file(dir, m) else {
                    panic!("mod {} in {}: no file", m.ident, dir.display());
                };
                let child_dir = if child.ends_with("mod.rs") {
                    child.parent().map(Path::to_owned).unwrap_or(child_dir)
                } else {
                    child.with_extension("")
                };
                scan(root, &child, &child_dir, out);
            }
        }
    }
}

/// Every crate directory of the workspace (a `Cargo.toml` beside a `src/`).
fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for top in std::fs::read_dir(root).unwrap().flatten() {
        let top = top.path();
        for dir in [top.clone()].into_iter().chain(
            std::fs::read_dir(&top)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path()),
        ) {
            if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
                out.push(dir);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Each name found, with the `file:line` of its first appearance.
pub(crate) fn variable_literals(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for krate in crate_dirs(root) {
        let src = krate.join("src");
        let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).collect();
        if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
            roots.extend(
                bins.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "rs")),
            );
        }
        for file in roots.into_iter().filter(|p| p.is_file()) {
            scan(root, &file, &src, &mut out);
        }
    }
    out
}

#[test]
fn names_in_test_code_are_left_out_and_the_rest_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k/src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(dir.path().join("k/Cargo.toml"), "").unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\n#[cfg(test)]\nmod tests;\nconst A: &str = \"STUDYLOOP_LIB\";\n\
         fn f() { let _ = vec![(\"STUB_ACP_IN_MACRO\", 1)]; let _ = \"STUDYLOOP_\"; }\n\
         #[cfg(test)] fn g() { let _ = \"STUDYLOOP_TEST_FN\"; }\n\
         struct S; impl S { #[test] fn t() { let _ = \"LITELLM_IN_TEST\"; } }\n\
         /// Reads STUDYLOOP_DOC (prose, not a literal name).\nfn h() {}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a.rs"),
        "mod b;\nconst B: &str = \"LITELLM_CHILD\";\n",
    )
    .unwrap();
    std::fs::write(
        src.join("a/b.rs"),
        "const C: &str = \"STUDYLOOP_GRANDCHILD\";\n",
    )
    .unwrap();
    std::fs::write(
        src.join("tests.rs"),
        "const T: &str = \"STUDYLOOP_IN_TEST_FILE\";\n",
    )
    .unwrap();
    let found = variable_literals(dir.path());
    let names: Vec<&str> = found.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "LITELLM_CHILD",
            "STUB_ACP_IN_MACRO",
            "STUDYLOOP_GRANDCHILD",
            "STUDYLOOP_LIB"
        ]
    );
    assert_eq!(found["STUDYLOOP_LIB"], "k/src/lib.rs:4");
}
