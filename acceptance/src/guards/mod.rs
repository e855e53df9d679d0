//! Structure guards that read Rust as rustc does (test-only).
//!
//! Each guard parses the workspace's sources with `syn` and walks the module tree
//! the compiler builds (`mod` items, `#[path]`, inline modules, `cfg`), so a
//! comment, a string or rustfmt's layout of a long `use` cannot fool it:
//! [`folders`] (folders follow the crate graph: no arrow back up),
//! [`circles`] (import circles between top-level modules and between files),
//! [`mod_rs_rule`] (folder roots declare, re-export and document only) and
//! [`layout`] (one integration-test binary per crate, every test file compiled).

mod allowed;
mod cfg;
mod circles;
mod folders;
mod fooling;
mod graph;
mod layout;
mod mod_rs_rule;
mod paths;
mod real_tree;
mod scope;
mod tree;
mod workspace;
