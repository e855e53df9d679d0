//! Provisioning a harness for one cell, per auth mode:
//! - `stub-provider`: the harness's offline config (see `stub_config`) written
//!   into the scratch HOME, pointing at the cell's stub; returns the env to add.
//!   For codex it also builds the one-model catalog from the pinned binary's
//!   own bundled catalog (`codex debug models --bundled`, ~0.1 s).
//! - `scrubbed`: nothing: no endpoint, no key (the reference's mode; the
//!   harness is expected to reach no model, and the lane says so).
//! - `real-auth`: nothing: the harness keeps the operator's own setup.
//!
//! Files are written privately (dirs 0700, files 0600, temp-then-rename) and
//! only ever under the given HOME.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::HarnessSpec;
use super::stub_config::{self, StubTarget};
use crate::command;
use crate::scratch::Env;
use crate::selection::{AuthMode, HarnessName};

/// What provisioning did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provisioned {
    /// Variables the cell's scratch env must gain.
    pub env: Vec<(&'static str, String)>,
    /// Files written (absolute).
    pub files: Vec<PathBuf>,
    /// One-line facts for the evidence manifest's notes.
    pub notes: Vec<String>,
}

/// Why a harness could not be provisioned.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// Stub-provider mode without a stub URL.
    #[error(
        "{harness}: stub-provider mode needs the cell's stub URL; start studyloop-stub-provider first"
    )]
    NoStub {
        /// The harness.
        harness: HarnessName,
    },
    /// The harness has no stub-provider recipe (kiro).
    #[error("{harness} has no stub-provider recipe: it cannot be installed here")]
    NoRecipe {
        /// The harness.
        harness: HarnessName,
    },
    /// Writing a config file failed.
    #[error(
        "{harness}: writing {path}: {source}; check the scratch home is writable and the disk not full"
    )]
    Write {
        /// The harness.
        harness: HarnessName,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: WriteError,
    },
    /// Building codex's model catalog failed.
    #[error(
        "codex: building the stub model catalog from `codex debug models --bundled` failed: {0}; run `just harnesses` to reinstall the pinned codex"
    )]
    CodexCatalog(String),
}

/// Why one private config file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Its private (0700) parent directory could not be made.
    #[error("cannot create its directory: {0}")]
    Dir(#[source] std::io::Error),
    /// The atomic write itself failed.
    #[error(transparent)]
    File(#[from] crate::evidence::EvidenceError),
}

/// Provisions `spec` under `home` for `mode`. `stub_url` is the stub's base
/// URL (`http://127.0.0.1:<port>`), required in stub-provider mode; `env` is the
/// scratch env (used to run the pinned codex for its catalog).
pub fn provision(
    spec: &HarnessSpec,
    mode: AuthMode,
    home: &Path,
    stub_url: Option<&str>,
    env: &Env,
) -> Result<Provisioned, ProvisionError> {
    let harness = spec.name;
    match mode {
        AuthMode::Scrubbed => Ok(Provisioned {
            notes: vec![format!(
                "{harness}: scrubbed mode: no endpoint and no credential provisioned"
            )],
            ..Provisioned::default()
        }),
        AuthMode::RealAuth => Ok(Provisioned {
            notes: vec![format!(
                "{harness}: real-auth mode: the harness uses the operator's own configuration"
            )],
            ..Provisioned::default()
        }),
        AuthMode::StubProvider | AuthMode::LocalModel => {
            let writer = spec
                .stub_config
                .ok_or(ProvisionError::NoRecipe { harness })?;
            let base_url = stub_url.ok_or(ProvisionError::NoStub { harness })?;
            let target = StubTarget {
                base_url: base_url.to_owned(),
                home: home.to_owned(),
            };
            let mut config = writer(&target);
            if harness == HarnessName::Codex {
                config.files.push(stub_config::ConfigFile {
                    path: PathBuf::from(stub_config::CODEX_CATALOG),
                    contents: codex_catalog(env)?,
                });
            }
            let mut files = Vec::new();
            for f in &config.files {
                let path = home.join(&f.path);
                write_private(&path, f.contents.as_bytes()).map_err(|source| {
                    ProvisionError::Write {
                        harness,
                        path: path.clone(),
                        source,
                    }
                })?;
                files.push(path);
            }
            Ok(Provisioned {
                env: config.env,
                files,
                notes: vec![format!(
                    "{harness}: stub-provider config pointing at {base_url}"
                )],
            })
        }
    }
}

fn codex_catalog(env: &Env) -> Result<String, ProvisionError> {
    let codex = env
        .find_binary("codex")
        .ok_or_else(|| ProvisionError::CodexCatalog("codex is not on the scratch PATH".into()))?;
    let mut cmd = std::process::Command::new(codex);
    env.apply(&mut cmd).args(["debug", "models", "--bundled"]);
    let done = command::run_bounded(&mut cmd, Duration::from_secs(30))
        .map_err(|e| ProvisionError::CodexCatalog(e.to_string()))?;
    if !done.status.success() {
        return Err(ProvisionError::CodexCatalog(format!(
            "{}: {}",
            done.status,
            done.stderr_text().trim()
        )));
    }
    stub_config::codex_catalog(&done.stdout_text())
        .map_err(|e| ProvisionError::CodexCatalog(e.to_string()))
}

/// Writes `bytes` to `path` atomically, 0600, its parent made 0700 first.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    // Every config path is joined onto the scratch home, so it has a parent.
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::private_fs::create_dir(dir).map_err(WriteError::Dir)?;
    Ok(crate::evidence::atomic_write(path, bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness_spec::spec;

    fn env() -> Env {
        Env::default()
    }

    #[test]
    fn stub_mode_writes_private_files_under_home_and_returns_env() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let p = provision(
            spec(HarnessName::Pi),
            AuthMode::StubProvider,
            &home,
            Some("http://127.0.0.1:9"),
            &env(),
        )
        .unwrap();
        assert_eq!(p.files.len(), 2);
        for f in &p.files {
            assert!(f.starts_with(&home), "{} escapes HOME", f.display());
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(f).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        assert!(p.env.iter().any(|(k, v)| *k == "PI_OFFLINE" && v == "1"));
        let models = std::fs::read_to_string(home.join(".pi/agent/models.json")).unwrap();
        assert!(models.contains("http://127.0.0.1:9/v1"));
    }

    #[test]
    fn stub_mode_without_a_stub_url_or_recipe_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = provision(
            spec(HarnessName::Grok),
            AuthMode::StubProvider,
            dir.path(),
            None,
            &env(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("studyloop-stub-provider"), "{e}");
        let e = provision(
            spec(HarnessName::Kiro),
            AuthMode::StubProvider,
            dir.path(),
            Some("x"),
            &env(),
        )
        .unwrap_err();
        assert!(matches!(e, ProvisionError::NoRecipe { .. }), "{e}");
    }

    #[test]
    fn scrubbed_and_real_auth_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [AuthMode::Scrubbed, AuthMode::RealAuth] {
            let p = provision(spec(HarnessName::Claude), mode, dir.path(), None, &env()).unwrap();
            assert!(p.files.is_empty() && p.env.is_empty());
            assert_eq!(p.notes.len(), 1);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn codex_without_a_binary_names_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let e = provision(
            spec(HarnessName::Codex),
            AuthMode::StubProvider,
            dir.path(),
            Some("http://x"),
            &env(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("just harnesses"), "{e}");
    }
}
