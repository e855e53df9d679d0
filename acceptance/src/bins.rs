//! Finding the workspace's own binaries and directories from a running test.
//!
//! Tests run from `target/<profile>/deps/<test>-<hash>`; the workspace's
//! binaries (`studyloop`, `studyloop-stub-provider`, …) are built beside it in
//! `target/<profile>/` by `cargo build --bins` (which the justfile recipes run
//! first). This is the one helper for that; it never builds anything itself.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A binary or directory that should exist beside the test executable.
#[derive(Debug, thiserror::Error)]
pub enum BinError {
    /// The running executable's path is unknown.
    #[error("failed to locate the running executable: {source}")]
    CurrentExe {
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The binary has not been built.
    #[error(
        "{name} not found at {path} (build it first: `cargo build --bins`, which `just test` and `just testacc` run)"
    )]
    Missing {
        /// The binary name.
        name: String,
        /// Where it was expected.
        path: PathBuf,
    },
}

/// `target/<profile>/`: the directory of the running executable, one level up
/// if that is `deps/`.
pub fn profile_dir() -> Result<PathBuf, BinError> {
    let exe = std::env::current_exe().map_err(|source| BinError::CurrentExe { source })?;
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    Ok(dir)
}

/// The cargo target directory: the nearest ancestor of the profile dir holding
/// cargo's `CACHEDIR.TAG`, else the profile dir's parent.
pub fn target_dir() -> Result<PathBuf, BinError> {
    let profile = profile_dir()?;
    let tagged = profile
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file());
    Ok(tagged
        .map(Path::to_path_buf)
        .or_else(|| profile.parent().map(Path::to_path_buf))
        .unwrap_or(profile))
}

/// The path of workspace binary `name`, which must exist and be executable.
pub fn path(name: &str) -> Result<PathBuf, BinError> {
    let path = profile_dir()?.join(name);
    let executable =
        std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if executable {
        Ok(path)
    } else {
        Err(BinError::Missing {
            name: name.to_owned(),
            path,
        })
    }
}

/// The workspace root (the directory holding the root `Cargo.toml`), fixed at
/// compile time.
pub fn workspace_root() -> PathBuf {
    let acceptance = Path::new(env!("CARGO_MANIFEST_DIR"));
    acceptance.parent().unwrap_or(acceptance).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_dir_is_not_deps_and_target_dir_contains_it() {
        let profile = profile_dir().unwrap();
        assert_ne!(profile.file_name().unwrap(), "deps");
        assert!(profile.starts_with(target_dir().unwrap()));
    }

    #[test]
    fn a_missing_binary_names_the_build_command() {
        let err = path("studyloop-no-such-binary").unwrap_err().to_string();
        assert!(
            err.contains("studyloop-no-such-binary") && err.contains("cargo build --bins"),
            "{err}"
        );
    }

    #[test]
    fn workspace_root_holds_the_workspace_manifest() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(workspace_root().join("acceptance").is_dir());
    }
}
