//! Where an added module came from when its path is inside a git checkout: the
//! remote URL and the commit sha, read from the `.git` files themselves.
//! No `git` process runs: a hostile checkout's config (`core.fsmonitor`,
//! hooks) could make one execute code.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The checkout a module was added from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GitSource {
    /// `remote.origin.url` (else the first remote), credentials removed; null
    /// when the checkout has no remote.
    pub(crate) remote: Option<String>,
    /// The commit `HEAD` names.
    pub(crate) sha: String,
}

const SMALL: u64 = 1 << 20;

fn read(path: &Path) -> Option<String> {
    studyloop_regular_file::read_regular(path, SMALL)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
}

/// The git source of `dir` (canonical), if it lies inside a checkout.
pub(crate) fn source(dir: &Path) -> Option<GitSource> {
    let (gitdir, common) = find(dir)?;
    let head = read(&gitdir.join("HEAD"))?;
    let head = head.trim();
    let sha = match head.strip_prefix("ref: ") {
        Some(r) => resolve(&gitdir, &common, r.trim())?,
        None => head.to_owned(),
    };
    if sha.len() < 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(GitSource {
        remote: remote(&common),
        sha,
    })
}

/// The git dir and the common dir (they differ for a linked worktree).
fn find(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    for d in dir.ancestors() {
        let dotgit = d.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dotgit) else {
            continue;
        };
        let gitdir = if meta.is_dir() {
            dotgit
        } else {
            let text = read(&dotgit)?;
            d.join(text.trim().strip_prefix("gitdir:")?.trim())
        };
        let common = read(&gitdir.join("commondir"))
            .map_or_else(|| gitdir.clone(), |c| gitdir.join(c.trim()));
        return Some((gitdir, common));
    }
    None
}

fn resolve(gitdir: &Path, common: &Path, name: &str) -> Option<String> {
    if name.split('/').any(|c| c == ".." || c.is_empty()) {
        return None;
    }
    for base in [gitdir, common] {
        if let Some(s) = read(&base.join(name)) {
            return Some(s.trim().to_owned());
        }
    }
    read(&common.join("packed-refs"))?.lines().find_map(|l| {
        let (sha, r) = l.split_once(' ')?;
        (r.trim() == name).then(|| sha.to_owned())
    })
}

fn remote(common: &Path) -> Option<String> {
    let config = read(&common.join("config"))?;
    let mut section = String::new();
    let mut urls: Vec<(String, String)> = Vec::new();
    for l in config.lines() {
        let l = l.trim();
        if l.starts_with('[') {
            section = l.to_owned();
        } else if let Some((k, v)) = l.split_once('=')
            && k.trim() == "url"
            && section.starts_with("[remote ")
        {
            urls.push((section.clone(), v.trim().to_owned()));
        }
    }
    let url = urls
        .iter()
        .find(|(s, _)| s == "[remote \"origin\"]")
        .or_else(|| urls.first())
        .map(|(_, u)| u.clone())?;
    Some(without_credentials(&url))
}

/// `https://user:token@host/x` → `https://host/x`: a token in a remote URL
/// must never be copied into the lockfile.
pub(crate) fn without_credentials(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if path.is_empty() && !rest.contains('/') {
            return format!("{scheme}://{host}");
        }
        return format!("{scheme}://{host}/{path}");
    }
    url.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_the_lockfile() {
        assert_eq!(
            without_credentials("https://u:ghp_secret@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(
            without_credentials("git@github.com:o/r.git"),
            "git@github.com:o/r.git"
        );
        assert_eq!(
            without_credentials("https://h.example"),
            "https://h.example"
        );
    }

    #[test]
    fn reads_head_and_origin_of_a_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let g = dir.path().join(".git");
        std::fs::create_dir_all(g.join("refs/heads")).unwrap();
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(
            g.join("packed-refs"),
            format!("# pack-refs\n{sha} refs/heads/main\n"),
        )
        .unwrap();
        std::fs::write(
            g.join("config"),
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://tok@example.org/m.git\n",
        )
        .unwrap();
        let sub = dir.path().join("mods/m");
        std::fs::create_dir_all(&sub).unwrap();
        let got = source(&sub).unwrap();
        assert_eq!(got.sha, sha);
        assert_eq!(got.remote.as_deref(), Some("https://example.org/m.git"));
    }
}
