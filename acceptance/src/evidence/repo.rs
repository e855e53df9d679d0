//! The workspace's git identity for a manifest: sha, dirty flag, patch
//! identity. Read through the `git` CLI; unknown (no git, not a repo, git
//! refused) is `None`, never a made-up value.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::caller_env::CallerEnv;
use crate::command;

const GIT_TIMEOUT: Duration = Duration::from_secs(20);

/// What the manifest records about the source tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoIdentity {
    /// `git rev-parse HEAD`.
    pub sha: Option<String>,
    /// Whether `git status` reports any change (untracked files included).
    pub dirty: Option<bool>,
    /// When dirty: sha256 over `git diff HEAD --binary` and the status list, so
    /// two runs on the same uncommitted change share an identity.
    pub(crate) patch_identity: Option<String>,
}

/// Runs `git ARGS` in `dir` with `caller`'s `PATH` and an otherwise empty
/// environment; its stdout, or `None` when git is missing, fails or times out.
fn git(dir: &Path, caller: &CallerEnv, args: &[&str]) -> Option<Vec<u8>> {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .current_dir(dir)
        .args(args)
        // git is found as the caller's shell finds it.
        .env("PATH", caller.var_os("PATH").unwrap_or_default())
        // Never take index.lock: other processes may be using this tree.
        .env("GIT_OPTIONAL_LOCKS", "0")
        // Stable, untranslated output.
        .env("LC_ALL", "C");
    match command::run_bounded(&mut cmd, GIT_TIMEOUT) {
        Ok(done) if done.status.success() => Some(done.stdout),
        _ => None,
    }
}

/// The one status query "dirty" means everywhere: any change, untracked files included.
const STATUS: [&str; 4] = ["status", "--porcelain=v1", "-z", "--untracked-files=all"];

impl RepoIdentity {
    /// Reads the identity of the repository containing `dir`, running `git`
    /// from `caller`'s `PATH` with an otherwise empty environment.
    pub fn detect(dir: &Path, caller: &CallerEnv) -> Self {
        let git = |args: &[&str]| git(dir, caller, args);
        let Some(sha) = git(&["rev-parse", "--verify", "HEAD"]) else {
            return Self::default();
        };
        let sha = String::from_utf8_lossy(&sha).trim().to_owned();
        let Some(status) = git(&STATUS) else {
            return Self {
                sha: Some(sha),
                ..Self::default()
            };
        };
        let dirty = !status.is_empty();
        let patch_identity = if dirty {
            git(&["diff", "HEAD", "--binary"]).map(|diff| {
                let mut hasher = Sha256::new();
                hasher.update(&diff);
                hasher.update([0u8]);
                hasher.update(&status);
                crate::hex::encode(&hasher.finalize())
            })
        } else {
            None
        };
        Self {
            sha: Some(sha),
            dirty: Some(dirty),
            patch_identity,
        }
    }

    /// The commit of the repository containing `dir` and the paths that make its
    /// tree dirty (the same status [`RepoIdentity::detect`] reads: modified, staged,
    /// deleted, untracked; a rename names its new path). `None` when git or the
    /// repository is unavailable: unknown, never clean.
    pub fn dirty_paths(dir: &Path, caller: &CallerEnv) -> Option<(String, Vec<String>)> {
        let sha = git(dir, caller, &["rev-parse", "--verify", "HEAD"])?;
        let status = git(dir, caller, &STATUS)?;
        let mut paths = Vec::new();
        let mut fields = status.split(|b| *b == 0).filter(|f| !f.is_empty());
        while let Some(entry) = fields.next() {
            // `XY path`; a rename or copy is followed by its original path.
            if entry.len() > 3 {
                paths.push(String::from_utf8_lossy(&entry[3..]).into_owned());
            }
            if entry.iter().take(2).any(|b| matches!(b, b'R' | b'C')) {
                fields.next();
            }
        }
        Some((String::from_utf8_lossy(&sha).trim().to_owned(), paths))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_a_repo_or_without_git_everything_is_unknown() {
        let no_git = CallerEnv::from_pairs([("PATH", "/nonexistent")]);
        assert_eq!(
            RepoIdentity::detect(Path::new("/"), &no_git),
            RepoIdentity::default()
        );
    }

    #[test]
    fn this_workspace_has_a_sha() {
        let id = RepoIdentity::detect(Path::new(env!("CARGO_MANIFEST_DIR")), &CallerEnv::capture());
        let sha = id.sha.expect("the workspace is a git checkout");
        assert_eq!(sha.len(), 40, "{sha}");
        assert!(id.dirty.is_some());
        assert_eq!(id.patch_identity.is_some(), id.dirty == Some(true));
    }
}
