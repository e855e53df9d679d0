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
    /// Cargo could not be started to build a test runner.
    #[error(
        "cannot run cargo to build the `{name}` runner: {source} (set CARGO or put cargo on PATH)"
    )]
    CargoSpawn {
        /// The runner's test target name.
        name: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Cargo ran but could not build a test runner.
    #[error(
        "cargo could not build the `{name}` runner: {stderr} (run `cargo test --workspace --test {name} --no-run` to see the full error)"
    )]
    CargoBuild {
        /// The runner's test target name.
        name: String,
        /// Cargo's stderr, trimmed.
        stderr: String,
    },
    /// Cargo built, but named no test executable for the runner.
    #[error(
        "cargo named no executable for the `{name}` runner (is `{name}` a `[[test]]` target of this workspace?)"
    )]
    NoRunner {
        /// The runner's test target name.
        name: String,
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
pub(crate) fn target_dir() -> Result<PathBuf, BinError> {
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

/// The executable of the `harness = false` integration test target `name` (a
/// runner such as `acceptance` or `uat`), for the ungated tests that run it as a
/// subprocess. Test executables carry per-target hashes and cargo sets no
/// `CARGO_BIN_EXE_` for them, so: the newest `deps/<name>-<hash>` beside this
/// test when it is at least as new as every file under `sources` (paths relative
/// to the workspace root); otherwise a stale or missing one is never guessed at
/// and cargo builds it and names the file (`cargo test --workspace --test <name>
/// --no-run`; `--workspace` keeps the feature set of `just test`, so no second
/// flavour is built).
///
/// # Errors
/// [`BinError::CargoSpawn`], [`BinError::CargoBuild`] or [`BinError::NoRunner`].
pub fn test_runner(name: &str, sources: &[&str]) -> Result<PathBuf, BinError> {
    if let Some(fresh) = fresh_test_runner(name, sources) {
        return Ok(fresh);
    }
    let out = cargo_command()
        .current_dir(workspace_root())
        .args([
            "test",
            "--workspace",
            "--test",
            name,
            "--no-run",
            "--message-format=json",
        ])
        .output()
        .map_err(|source| BinError::CargoSpawn {
            name: name.to_owned(),
            source,
        })?;
    if !out.status.success() {
        return Err(BinError::CargoBuild {
            name: name.to_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|msg| {
            msg["reason"] == "compiler-artifact"
                && msg["target"]["name"] == name
                && msg["target"]["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "test"))
        })
        .and_then(|msg| msg["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| BinError::NoRunner {
            name: name.to_owned(),
        })
}

fn fresh_test_runner(name: &str, sources: &[&str]) -> Option<PathBuf> {
    let prefix = format!("{name}-");
    let newest = std::fs::read_dir(profile_dir().ok()?.join("deps"))
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            file.strip_prefix(&prefix)
                .is_some_and(|hash| !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()?;
    let root = workspace_root();
    let built_from = sources
        .iter()
        .filter_map(|s| newest_mtime(&root.join(s)))
        .max()?;
    (newest.0 >= built_from).then_some(newest.1)
}

fn newest_mtime(path: &Path) -> Option<std::time::SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| newest_mtime(&e.path()))
        .max()
}

/// Whether `name` is one of the variables cargo (and nextest, which copies cargo's
/// test environment) sets for a package's build script or test process: the
/// package's identity (`CARGO_PKG_*`, `CARGO_MANIFEST_*`, `CARGO_CRATE_NAME`, ...)
/// and its build-script facts (`CARGO_CFG_*`, `OUT_DIR`). The build configuration
/// (`CARGO`, `CARGO_HOME`, `CARGO_TARGET_DIR`, `CARGO_PROFILE_*`, ...) is not one.
#[must_use]
pub fn is_package_env(name: &str) -> bool {
    const EXACT: [&str; 9] = [
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_MANIFEST_LINKS",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    const PREFIXES: [&str; 3] = ["CARGO_PKG_", "CARGO_BIN_EXE_", "CARGO_CFG_"];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Removes from `command` every package variable ([`is_package_env`]) this process
/// carries, for a cargo (or a recipe that runs cargo) started from inside a test.
/// Why: build scripts declare `rerun-if-env-changed` on them (ring declares
/// `CARGO_PKG_NAME` and `CARGO_MANIFEST_DIR`), so a cargo that sees a test's values
/// reruns ring's build script and rebuilds ring, rustls, ureq and every workspace
/// crate above them, and the next build from a shell rebuilds them back: in CI,
/// 62 s for the recipes test and 23 s for the doc-test step after it.
pub fn without_package_env(command: &mut std::process::Command) -> &mut std::process::Command {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_package_env) {
            command.env_remove(name);
        }
    }
    command
}

/// The cargo that started this process (`CARGO`, else `cargo` on PATH), as a
/// command free of this process's package variables ([`without_package_env`]).
#[must_use]
pub fn cargo_command() -> std::process::Command {
    let mut command =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    without_package_env(&mut command);
    command
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
    fn package_variables_are_told_from_the_build_configuration() {
        for name in [
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
            "CARGO_CRATE_NAME",
            "CARGO_BIN_EXE_studyloop",
            "CARGO_CFG_TARGET_OS",
            "CARGO_TARGET_TMPDIR",
            "OUT_DIR",
        ] {
            assert!(is_package_env(name), "{name} is a package variable");
        }
        for name in [
            "CARGO",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_PROFILE_DEV_DEBUG",
            "CARGO_LINT_CARGO",
            "CARGO_BUILD_JOBS",
            "CARGO_INCREMENTAL",
            "RUSTC_WORKSPACE_WRAPPER",
            "PATH",
        ] {
            assert!(!is_package_env(name), "{name} configures the build");
        }
    }

    /// Under cargo or nextest this process carries its package's variables: a plain
    /// child inherits them; one started through `without_package_env` sees none of
    /// them (else ring's build script reruns and the workspace rebuilds) and keeps
    /// the rest.
    #[test]
    fn a_child_started_from_a_test_sees_no_package_variable() {
        let env_of = |command: &mut std::process::Command| {
            let out = command.args(["-c", "env"]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let plain = env_of(&mut std::process::Command::new("sh"));
        assert!(
            plain.lines().any(|l| l.starts_with("CARGO_PKG_NAME=")),
            "cargo and nextest set CARGO_PKG_NAME for a test: {plain}"
        );
        let seen = env_of(without_package_env(&mut std::process::Command::new("sh")));
        for line in seen.lines() {
            let name = line.split('=').next().unwrap_or_default();
            assert!(!is_package_env(name), "the child saw {line}");
        }
        assert!(
            seen.lines().any(|l| l.starts_with("PATH=")),
            "the rest of the environment is kept: {seen}"
        );
    }

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
