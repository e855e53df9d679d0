//! The workspace as cargo sees it (`cargo metadata`): each member package, its
//! folder and its targets with the root file rustc compiles for each.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One workspace member.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) name: String,
    /// The folder holding its `Cargo.toml`.
    pub(crate) dir: PathBuf,
    pub(crate) targets: Vec<Target>,
    /// The packages it links by name (normal and build dependencies; a dev-dependency
    /// links only a test binary), workspace members or not.
    pub(crate) links: Vec<String>,
}

/// One compiled target (lib, bin, test, bench, example).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) name: String,
    /// `lib`, `bin`, `test`, `bench`, `example`, `proc-macro`, …
    pub(crate) kind: String,
    /// The crate root file.
    pub(crate) root: PathBuf,
    /// `false` when the target links no test harness (`test = false`).
    pub(crate) tested: bool,
}

impl Target {
    /// A library or binary: the code the product and the framework ship.
    pub(crate) fn ships(&self) -> bool {
        matches!(self.kind.as_str(), "lib" | "bin" | "proc-macro" | "rlib")
    }
}

/// The workspace root (acceptance/ sits in it).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("acceptance/ sits in the workspace root")
        .to_owned()
}

/// Every member of the workspace at `root`, from cargo's own reading of the manifests.
pub(crate) fn packages(root: &Path) -> Vec<Package> {
    let out = crate::bins::cargo_command()
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata is JSON");
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| Package {
            name: text(&p["name"]),
            dir: PathBuf::from(text(&p["manifest_path"]))
                .parent()
                .expect("a manifest sits in a folder")
                .to_path_buf(),
            targets: p["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| Target {
                    name: text(&t["name"]),
                    kind: t["kind"][0].as_str().unwrap_or_default().to_owned(),
                    root: PathBuf::from(text(&t["src_path"])),
                    tested: t["test"].as_bool().unwrap_or(true),
                })
                .collect(),
            links: p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| text(&d["name"]))
                .collect(),
        })
        .collect()
}
