//! `#[cfg(…)]` read as rustc reads it, as far as a structure guard needs.
//!
//! A guard must not count code the compiler never sees (`#[cfg(any())]`, the
//! idiom for "switched off") and must tell test-only code (`#[cfg(test)]`)
//! from the library. Every other predicate (`unix`, `feature = "x"`, …) may be
//! true in some build, so it is *unknown*: such code counts, as it may compile.

use syn::Attribute;
use syn::parse::ParseStream;

/// A cfg predicate's value in one build: unknown for anything but `test` and
/// the `any`/`all`/`not` combinators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Unknown,
}

impl Tri {
    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// Where an item is compiled, from its `#[cfg]` attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compiled {
    /// In the library build (and so in the test build too), or maybe.
    Library,
    /// Only when compiling tests (`cfg(test)` and the like).
    TestOnly,
    /// In no build at all (`cfg(any())`, `cfg(all(test, not(test)))`).
    Never,
}

impl Compiled {
    /// The stricter of two: an item inside a test-only module is test-only.
    pub(crate) fn within(self, outer: Compiled) -> Compiled {
        match (outer, self) {
            (Compiled::Never, _) | (_, Compiled::Never) => Compiled::Never,
            (Compiled::TestOnly, _) | (_, Compiled::TestOnly) => Compiled::TestOnly,
            _ => Compiled::Library,
        }
    }
}

/// Where an item with these attributes is compiled (every `#[cfg]` must hold).
pub(crate) fn compiled(attrs: &[Attribute]) -> Compiled {
    let in_build = |test: bool| {
        attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .map(|a| {
                // An unreadable predicate may hold: count the item, never drop it.
                let mut value = Tri::Unknown;
                let _ = a.parse_nested_meta(|meta| {
                    value = predicate(&meta.path, meta.input, test)?;
                    Ok(())
                });
                value
            })
            .fold(Tri::True, and)
    };
    match (in_build(false), in_build(true)) {
        (Tri::False, Tri::False) => Compiled::Never,
        (Tri::False, _) => Compiled::TestOnly,
        _ => Compiled::Library,
    }
}

fn and(a: Tri, b: Tri) -> Tri {
    match (a, b) {
        (Tri::False, _) | (_, Tri::False) => Tri::False,
        (Tri::True, Tri::True) => Tri::True,
        _ => Tri::Unknown,
    }
}

fn or(a: Tri, b: Tri) -> Tri {
    and(a.not(), b.not()).not()
}

/// One predicate (`test`, `unix`, `feature = "x"`, `any(…)`, `all(…)`, `not(…)`).
fn predicate(path: &syn::Path, input: ParseStream<'_>, test: bool) -> syn::Result<Tri> {
    // By hand, not `meta.parse_nested_meta`: that refuses the empty list of `any()`.
    let combine = |start: Tri, op: fn(Tri, Tri) -> Tri| -> syn::Result<Tri> {
        let content;
        syn::parenthesized!(content in input);
        let mut acc = start;
        while !content.is_empty() {
            let inner = content.call(syn::Path::parse_mod_style)?;
            acc = op(acc, predicate(&inner, &content, test)?);
            if !content.is_empty() {
                content.parse::<syn::Token![,]>()?;
            }
        }
        Ok(acc)
    };
    if path.is_ident("any") {
        combine(Tri::False, or)
    } else if path.is_ident("all") {
        combine(Tri::True, and)
    } else if path.is_ident("not") {
        Ok(combine(Tri::True, and)?.not())
    } else if path.is_ident("test") {
        Ok(if test { Tri::True } else { Tri::False })
    } else {
        if input.peek(syn::Token![=]) {
            // `feature = "x"`: consume the value so the list parses on.
            input.parse::<syn::Token![=]>()?;
            input.parse::<syn::Lit>()?;
        }
        Ok(Tri::Unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(attrs: &str) -> Compiled {
        let item: syn::ItemConst = syn::parse_str(&format!("{attrs} const X: u8 = 0;")).unwrap();
        compiled(&item.attrs)
    }

    #[test]
    fn predicates_are_read_as_rustc_reads_them() {
        assert_eq!(of(""), Compiled::Library);
        assert_eq!(of("#[cfg(unix)]"), Compiled::Library);
        assert_eq!(
            of("#[cfg(feature = \"x\")] #[doc = \"d\"]"),
            Compiled::Library
        );
        assert_eq!(of("#[cfg(test)]"), Compiled::TestOnly);
        assert_eq!(of("#[cfg(all(test, unix))]"), Compiled::TestOnly);
        assert_eq!(of("#[cfg(any(test, feature = \"x\"))]"), Compiled::Library);
        assert_eq!(of("#[cfg(not(test))]"), Compiled::Library);
        assert_eq!(of("#[cfg(any())]"), Compiled::Never);
        assert_eq!(of("#[cfg(all(test, not(test)))]"), Compiled::Never);
        assert_eq!(of("#[cfg(unix)] #[cfg(any())]"), Compiled::Never);
        assert_eq!(of("#[cfg(not(all()))]"), Compiled::Never);
    }
}
