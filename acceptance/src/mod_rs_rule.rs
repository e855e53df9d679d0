//! `mod.rs` files re-export and document only (test-only check).
//!
//! A directory module's `mod.rs` says what the module is for (`//!`) and which
//! files hold its concepts; the logic lives in those files, named for what
//! they hold, so a newcomer finds a concept from the file names alone. The
//! check reads every `mod.rs` of every workspace crate (comments and strings
//! blanked, as the import-circle check does) and fails on any statement other
//! than a `mod name;` declaration or a `use`, naming the file and the first
//! such statement.

use std::path::Path;

use crate::import_graph::{code_only, crates, is_ident, read_sources};

/// The statements of a `mod.rs` that are neither a `mod name;` declaration
/// nor a `use` (attributes and docs are allowed): a `mod.rs` re-exports and
/// documents only, so a reader finds each concept in a file named for it.
pub(crate) fn mod_rs_logic(text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let mut rest = stmt.trim();
        // Leading attributes: `#[…]` and `#![…]`, brackets balanced.
        while let Some(attr) = rest.strip_prefix("#!").or_else(|| rest.strip_prefix('#')) {
            let mut depth = 0usize;
            let mut end = attr.len();
            for (i, c) in attr.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest = attr[end..].trim_start();
        }
        if rest.is_empty() {
            continue;
        }
        let unvis = rest
            .strip_prefix("pub")
            .map(|r| {
                let r = r.trim_start();
                match r.strip_prefix('(') {
                    Some(inner) => inner.split_once(')').map_or(r, |(_, after)| after),
                    None => r,
                }
                .trim_start()
            })
            .unwrap_or(rest);
        let is_mod = unvis.strip_prefix("mod ").is_some_and(|name| {
            let name = name.trim();
            !name.is_empty() && name.bytes().all(is_ident)
        });
        let is_use = unvis.starts_with("use ") && !unvis.contains("fn ");
        if !is_mod && !is_use {
            out.push(rest.lines().next().unwrap_or(rest).trim().to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mod_rs_re_exports_and_documents_only() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut report = Vec::new();
        for dir in crates(&workspace) {
            for source in read_sources(&dir.join("src")) {
                if source.rel != "mod.rs" && !source.rel.ends_with("/mod.rs") {
                    continue;
                }
                let logic = mod_rs_logic(&source.text);
                if let Some(first) = logic.first() {
                    report.push(format!(
                        "{}/src/{}: {} statement(s) beyond `mod`/`use`, first: {first}",
                        dir.strip_prefix(&workspace).unwrap_or(&dir).display(),
                        source.rel,
                        logic.len()
                    ));
                }
            }
        }
        assert!(
            report.is_empty(),
            "mod.rs files with logic (move it into a file named for its concept and re-export it):\n{}",
            report.join("\n")
        );
    }

    #[test]
    fn mod_rs_logic_is_every_item_but_mod_and_use() {
        let clean = "//! Docs.\n\n#[cfg(test)]\nmod tests;\npub(crate) mod a;\npub mod b;\n#[doc(hidden)]\npub use a::{X, Y as Z};\nuse b::W;\n";
        assert!(mod_rs_logic(clean).is_empty(), "{:?}", mod_rs_logic(clean));
        let dirty = [
            "pub const N: u8 = 1;",
            "fn f() {}\nmod a;",
            "pub struct S;",
            "#[cfg(test)]\nmod tests {\n    use super::*;\n}",
            "impl X {}\nuse a::B;",
            "pub(crate) enum E { A }",
        ];
        for text in dirty {
            assert!(!mod_rs_logic(text).is_empty(), "{text:?} has logic");
        }
    }
}
