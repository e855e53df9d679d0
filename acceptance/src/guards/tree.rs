//! A crate's module tree as rustc builds it, read with `syn`.
//!
//! From a crate root (`lib.rs`, `main.rs`, `tests/it/main.rs`) the tree follows
//! every `mod` item: `mod x;` to `x.rs` or `x/mod.rs` (beside a `mod.rs`-like
//! file, or in the `foo/` folder of a `foo.rs`), `#[path = "…"]` relative to the
//! file's folder (or the inline module's), inline `mod x { … }` blocks, and
//! skips modules no build compiles (`#[cfg(any())]`). A `mod x;` in a comment or
//! a string is no item, so it declares nothing.

use std::path::{Path, PathBuf};

use syn::{Item, ItemMod};

use super::cfg::{Compiled, compiled};

/// Why a module tree could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TreeError {
    /// A source file could not be read.
    #[error("read {path}: {source} (is the module declared with the right name or #[path]?)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A source file is not Rust `syn` can parse.
    #[error("parse {path}: {message} (does `cargo check` accept it?)")]
    Parse { path: PathBuf, message: String },
    /// A `mod x;` whose file is in none of the places rustc looks.
    #[error("module `{name}` declared in {from}: neither {} nor {} exists", candidates[0].display(), candidates[1].display())]
    Missing {
        name: String,
        from: PathBuf,
        candidates: [PathBuf; 2],
    },
}

/// One module: a file, or an inline `mod x { … }` block inside one.
pub(crate) struct Module {
    /// Names from the crate root (`[]` for the root itself).
    pub(crate) path: Vec<String>,
    /// The file holding it.
    pub(crate) file: PathBuf,
    /// `true` for an inline `mod x { … }` block.
    pub(crate) inline: bool,
    /// Where it is compiled (inherited from the modules around it).
    pub(crate) compiled: Compiled,
    /// Its parent's index in [`Tree::modules`] (`None` for the root).
    pub(crate) parent: Option<usize>,
    /// Its own items, child `mod` items included (an inline child's body is taken
    /// out: it is a module of its own).
    pub(crate) items: Vec<Item>,
}

/// Every module of one crate, the root first.
pub(crate) struct Tree {
    pub(crate) modules: Vec<Module>,
}

/// Where the `mod x;` items of a module look for their files.
struct Dirs {
    /// The folder of the file the module sits in (for `#[path]` outside inline blocks).
    file_dir: PathBuf,
    /// The folder its out-of-line children live in.
    children: PathBuf,
    /// `true` inside an inline block (then `#[path]` is relative to `children`).
    inline: bool,
}

impl Tree {
    /// Reads the module tree of the crate whose root file is `root`.
    pub(crate) fn load(root: &Path) -> Result<Tree, TreeError> {
        let mut tree = Tree {
            modules: Vec::new(),
        };
        let file_dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
        let dirs = Dirs {
            children: file_dir.clone(),
            file_dir,
            inline: false,
        };
        tree.load_file(root, Vec::new(), None, Compiled::Library, &dirs)?;
        Ok(tree)
    }

    /// The modules whose items the library build compiles.
    pub(crate) fn library(&self) -> impl Iterator<Item = (usize, &Module)> {
        self.modules
            .iter()
            .enumerate()
            .filter(|(_, m)| m.compiled == Compiled::Library)
    }

    fn load_file(
        &mut self,
        file: &Path,
        path: Vec<String>,
        parent: Option<usize>,
        outer: Compiled,
        dirs: &Dirs,
    ) -> Result<(), TreeError> {
        let text = std::fs::read_to_string(file).map_err(|source| TreeError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        let parsed = syn::parse_file(&text).map_err(|e| TreeError::Parse {
            path: file.to_path_buf(),
            message: e.to_string(),
        })?;
        self.add(file, path, parent, outer, false, parsed.items, dirs)
    }

    #[expect(clippy::too_many_arguments, reason = "one private recursion step")]
    fn add(
        &mut self,
        file: &Path,
        path: Vec<String>,
        parent: Option<usize>,
        compiled_in: Compiled,
        inline: bool,
        items: Vec<Item>,
        dirs: &Dirs,
    ) -> Result<(), TreeError> {
        let index = self.modules.len();
        let mut items = items;
        let children: Vec<Child> = items
            .iter_mut()
            .filter_map(|i| match i {
                Item::Mod(m) => Some(Child {
                    name: m.ident.to_string(),
                    compiled: compiled(&m.attrs).within(compiled_in),
                    path_attr: path_attribute(m),
                    content: m.content.as_mut().map(|(_, body)| std::mem::take(body)),
                }),
                _ => None,
            })
            .collect();
        self.modules.push(Module {
            path: path.clone(),
            file: file.to_path_buf(),
            inline,
            compiled: compiled_in,
            parent,
            items,
        });
        for child in children {
            let here = child.compiled;
            if here == Compiled::Never {
                continue; // rustc never reads it, nor its file
            }
            let name = child.name;
            let mut child_path = path.clone();
            child_path.push(name.clone());
            let path_attr = child.path_attr;
            match child.content {
                Some(items) => {
                    let base = match &path_attr {
                        Some(p) => dirs.children.join(p),
                        None => dirs.children.join(&name),
                    };
                    let inner = Dirs {
                        file_dir: dirs.file_dir.clone(),
                        children: base,
                        inline: true,
                    };
                    self.add(file, child_path, Some(index), here, true, items, &inner)?;
                }
                None => {
                    let (child_file, inner) = match path_attr {
                        Some(p) => {
                            let at = if dirs.inline {
                                dirs.children.join(p)
                            } else {
                                dirs.file_dir.join(p)
                            };
                            // A `#[path]` file owns its folder, as a mod.rs does.
                            let dir = at.parent().unwrap_or(Path::new("")).to_path_buf();
                            (at, (dir.clone(), dir))
                        }
                        None => {
                            let flat = dirs.children.join(format!("{name}.rs"));
                            let nested = dirs.children.join(&name).join("mod.rs");
                            if flat.is_file() {
                                (flat, (dirs.children.clone(), dirs.children.join(&name)))
                            } else if nested.is_file() {
                                let dir = dirs.children.join(&name);
                                (nested, (dir.clone(), dir))
                            } else {
                                return Err(TreeError::Missing {
                                    name,
                                    from: file.to_path_buf(),
                                    candidates: [flat, nested],
                                });
                            }
                        }
                    };
                    let inner = Dirs {
                        file_dir: inner.0,
                        children: inner.1,
                        inline: false,
                    };
                    self.load_file(&child_file, child_path, Some(index), here, &inner)?;
                }
            }
        }
        Ok(())
    }
}

/// A child `mod` item, read before its parent is stored.
struct Child {
    name: String,
    compiled: Compiled,
    path_attr: Option<String>,
    /// The body of an inline module.
    content: Option<Vec<Item>>,
}

/// The `#[path = "…"]` of a `mod` item, if any.
fn path_attribute(item: &ItemMod) -> Option<String> {
    item.attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}
