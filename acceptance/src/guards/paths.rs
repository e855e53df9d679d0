//! Every path an item's code writes: `use` leaves, types, calls, patterns, and
//! the arguments of function-like macros (`format!`, `vec!`, `assert_eq!`), which
//! are token streams to `syn` until parsed as comma-separated expressions.
//!
//! Items under a `cfg` no library build compiles (`#[cfg(test)]` helpers) and
//! nested `mod` items (modules of their own) are skipped.

use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Expr, Item, ItemMod, ItemUse, Macro, Token};

use super::cfg::{Compiled, compiled};
use super::scope::use_leaves;

/// The paths (as segment names) written by the library-compiled `items`.
pub(crate) fn paths_of(items: &[Item]) -> Vec<Vec<String>> {
    let mut collector = Collector { out: Vec::new() };
    for item in items {
        if !matches!(item, Item::Mod(_)) {
            collector.visit_item(item);
        }
    }
    collector.out
}

struct Collector {
    out: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast Item) {
        if compiled(super::scope::item_attrs(item)) == Compiled::Library {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if compiled(&f.attrs) == Compiled::Library {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_mod(&mut self, _: &'ast ItemMod) {
        // A module of its own (an inline one inside a function body is rare and local).
    }

    fn visit_item_use(&mut self, u: &'ast ItemUse) {
        for leaf in use_leaves(&u.tree, u.leading_colon.is_some()) {
            if !leaf.external && !leaf.path.is_empty() {
                self.out.push(leaf.path);
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            self.out
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast Macro) {
        self.visit_path(&mac.path);
        // Best effort: most function-like macros take expressions.
        if let Ok(args) = mac.parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated) {
            for arg in &args {
                self.visit_expr(arg);
            }
        }
    }
}
