//! grok under real-auth (seed 003, issue 30 item 9): an unattended session cannot answer
//! grok's "trust this directory?" dialog, so a real-auth grok cell runs the product with
//! `STUDYLOOP_GROK_TRUST_SESSION_DIR=1`, and the product pre-writes `[folders."<dir>"]`
//! tables for the session dir and its parent into the operator's **real**
//! `$GROK_HOME/trusted_folders.toml` (default `~/.grok`). The seed's rule: those entries
//! are removed after the run.
//!
//! What pre-write added is known exactly: every session dir of a cell lies inside its
//! scratch root (a fresh random directory), so the entries to remove are the `folders`
//! tables whose path is inside that root, and no entry of the operator's can be one. The
//! file is edited with a format-preserving TOML parser (the operator's other entries,
//! comments and layout stay as they were) and replaced atomically. A file that does not
//! parse, or is not a regular file (a symlink into a dotfiles repository is kept, not
//! replaced by a copy), is left alone and the finish check names the entries still in it.

use std::path::{Path, PathBuf};

use super::{Env, EnvError};
use crate::selection::{AuthMode, HarnessName};

/// The product's opt-in (`product/studyloop/src/env.rs`); the framework drives the
/// product as a black box, so it spells the name rather than linking the product.
pub const TRUST_VAR: &str = "STUDYLOOP_GROK_TRUST_SESSION_DIR";

/// The largest trust file read (grok writes a few lines per trusted folder).
const MAX_TRUST_BYTES: u64 = 4 * 1024 * 1024;

/// The real trust file of one real-auth grok cell, and whether it existed before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrokTrust {
    file: PathBuf,
    existed: bool,
}

/// Why the trust file could not be cleaned.
#[derive(Debug, thiserror::Error)]
pub enum GrokTrustError {
    /// Not readable as a regular file (absent is fine; a symlink, FIFO or device is not).
    #[error(
        "cannot read grok's trust file {path}: {source}; remove this run's `[folders.\"…\"]` entries (paths under the scratch root) by hand"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not TOML: left as it is.
    #[error(
        "grok's trust file {path} is not valid TOML ({reason}); it was left as it is: remove this run's `[folders.\"…\"]` entries by hand"
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's words.
        reason: String,
    },
    /// Writing the cleaned file failed.
    #[error("cannot write grok's trust file {path}: {reason}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        reason: String,
    },
}

/// A cell's env for the product, with the opt-in set when the cell is grok under
/// real-auth, and the real trust file its world must clean; any other cell's env is
/// returned as it was, with `None`.
///
/// # Errors
/// [`EnvError`] from setting the variable.
pub fn real_auth_opt_in(
    mode: AuthMode,
    harness: HarnessName,
    env: Env,
) -> Result<(Env, Option<GrokTrust>), EnvError> {
    if mode != AuthMode::RealAuth || harness != HarnessName::Grok {
        return Ok((env, None));
    }
    let env = env.with_var(TRUST_VAR, "1")?;
    let trust = GrokTrust::of(&env);
    Ok((env, trust))
}

impl GrokTrust {
    /// The trust file grok reads under `env` (the cell's real-auth env): `GROK_HOME`,
    /// else `$HOME/.grok`; `None` without either.
    pub fn of(env: &Env) -> Option<Self> {
        let dir = match env.get("GROK_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => PathBuf::from(env.get("HOME").filter(|v| !v.is_empty())?).join(".grok"),
        };
        Some(Self::at(dir.join("trusted_folders.toml")))
    }

    /// The trust file at `file`, noting now whether it exists.
    pub fn at(file: PathBuf) -> Self {
        let existed = std::fs::symlink_metadata(&file).is_ok();
        Self { file, existed }
    }

    /// The file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The `folders` entries inside `root` still in the file (empty when it is absent).
    ///
    /// # Errors
    /// [`GrokTrustError::Read`] or [`GrokTrustError::Parse`].
    pub fn entries_inside(&self, root: &Path) -> Result<Vec<String>, GrokTrustError> {
        let Some(doc) = self.read()? else {
            return Ok(Vec::new());
        };
        Ok(inside(&doc, root))
    }

    /// Removes every `folders` entry inside `root` and returns their paths. A file that
    /// did not exist before the cell and holds nothing else afterwards is removed.
    ///
    /// # Errors
    /// [`GrokTrustError`]: the file is then unchanged.
    pub fn remove_inside(&self, root: &Path) -> Result<Vec<String>, GrokTrustError> {
        let Some(mut doc) = self.read()? else {
            return Ok(Vec::new());
        };
        let removed = inside(&doc, root);
        if removed.is_empty() {
            return Ok(removed);
        }
        if let Some(folders) = doc
            .get_mut("folders")
            .and_then(toml_edit::Item::as_table_like_mut)
        {
            for key in &removed {
                folders.remove(key);
            }
            if folders.is_empty() {
                doc.remove("folders");
            }
        }
        let write_err = |reason: String| GrokTrustError::Write {
            path: self.file.clone(),
            reason,
        };
        if !self.existed && doc.as_table().is_empty() {
            std::fs::remove_file(&self.file).map_err(|e| write_err(e.to_string()))?;
        } else {
            crate::evidence::atomic_write(&self.file, doc.to_string().as_bytes())
                .map_err(|e| write_err(e.to_string()))?;
        }
        Ok(removed)
    }

    fn read(&self) -> Result<Option<toml_edit::DocumentMut>, GrokTrustError> {
        let bytes = match crate::private_fs::read_regular(&self.file, MAX_TRUST_BYTES) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(GrokTrustError::Read {
                    path: self.file.clone(),
                    source,
                });
            }
        };
        let parse = |reason: String| GrokTrustError::Parse {
            path: self.file.clone(),
            reason,
        };
        let text = String::from_utf8(bytes).map_err(|e| parse(e.to_string()))?;
        text.parse::<toml_edit::DocumentMut>()
            .map(Some)
            .map_err(|e| parse(e.message().to_owned()))
    }
}

/// The keys of `folders` whose path is `root` or inside it (compared by path
/// components, so `/tmp/sl-acc-x` never matches `/tmp/sl-acc-xy`).
fn inside(doc: &toml_edit::DocumentMut, root: &Path) -> Vec<String> {
    doc.get("folders")
        .and_then(toml_edit::Item::as_table_like)
        .map(|t| {
            t.iter()
                .map(|(k, _)| k.to_owned())
                .filter(|k| Path::new(k).starts_with(root))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "grok_trust_tests.rs"]
mod tests;
