//! Trust pre-writes that stop a harness from opening a "trust this folder?"
//! dialog in the session dir (which would swallow the learner's first input).
//!
//! - Claude: only for claude sessions, and only when Claude's config file
//!   already exists; we never create it. The reference writes
//!   `~/.claude/settings.json`, but the pinned Claude Code 2.1.332 reads the
//!   trust flag from `~/.claude.json` (`projects[dir].hasTrustDialogAccepted`),
//!   so that is the file written here.
//! - Grok: only with `STUDYLOOP_GROK_TRUST_SESSION_DIR=1` and an existing
//!   `$GROK_HOME`; appends TOML tables, never rewrites the file.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{AdapterError, io_err as io};
use crate::env::{self, Env};

/// Claude Code's global config file.
pub fn claude_config_file(env: &Env, home: &Path) -> Result<PathBuf, AdapterError> {
    Ok(match env.get_nonempty(env::CLAUDE_CONFIG_DIR)? {
        Some(d) => PathBuf::from(d).join(".claude.json"),
        None => home.join(".claude.json"),
    })
}

/// Mark `dirs` trusted in Claude's config. Returns whether the file was changed.
pub fn claude(env: &Env, home: &Path, dirs: &[&Path]) -> Result<bool, AdapterError> {
    let file = claude_config_file(env, home)?;
    let text = match crate::fsutil::read_user(&file, crate::fsutil::USER_FILE_LIMIT) {
        Ok(Some(t)) => String::from_utf8_lossy(&t).into_owned(),
        Ok(None) => return Ok(false),
        Err(e) => return Err(io("read", &file)(e)),
    };
    // A file we cannot understand is left alone rather than clobbered.
    let Ok(serde_json::Value::Object(mut root)) = serde_json::from_str::<serde_json::Value>(&text)
    else {
        return Ok(false);
    };
    let projects = root
        .entry("projects")
        .or_insert_with(|| serde_json::json!({}));
    let Some(projects) = projects.as_object_mut() else {
        return Ok(false);
    };
    for d in dirs {
        let entry = projects
            .entry(d.to_string_lossy().into_owned())
            .or_insert_with(|| serde_json::json!({}));
        if let Some(obj) = entry.as_object_mut() {
            obj.insert("hasTrustDialogAccepted".into(), true.into());
        }
    }
    let mode = fs::metadata(&file)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o600);
    // A `Value` prints infallibly (alternate `Display` = `to_vec_pretty`'s bytes).
    let bytes = format!("{:#}\n", serde_json::Value::Object(root)).into_bytes();
    crate::fsutil::atomic_write(&file, &bytes, mode).map_err(io("write", &file))?;
    Ok(true)
}

/// A TOML basic string (quotes, backslashes and controls escaped).
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Grok's home: `GROK_HOME`, else `~/.grok`.
pub fn grok_home(env: &Env, home: &Path) -> Result<PathBuf, AdapterError> {
    Ok(env
        .get_nonempty(env::GROK_HOME)?
        .map_or_else(|| home.join(".grok"), PathBuf::from))
}

/// Append `[folders."<dir>"]` tables for `dirs` (opt-in). Returns whether
/// anything was appended. Unreadable files are skipped silently, as in the
/// reference: the trust write is a convenience, never a reason to fail.
pub fn grok(env: &Env, home: &Path, dirs: &[&Path], now_epoch: i64) -> Result<bool, AdapterError> {
    if !env::flag(env, env::STUDYLOOP_GROK_TRUST_SESSION_DIR)? {
        return Ok(false);
    }
    let gh = grok_home(env, home)?;
    if !gh.is_dir() {
        return Ok(false);
    }
    let file = gh.join("trusted_folders.toml");
    let existing = match crate::fsutil::read_user(&file, crate::fsutil::USER_FILE_LIMIT) {
        Ok(Some(t)) => String::from_utf8_lossy(&t).into_owned(),
        Ok(None) => String::new(),
        Err(_) => return Ok(false),
    };
    let mut add = String::new();
    for d in dirs {
        let header = format!("[folders.{}]", toml_string(&d.to_string_lossy()));
        if !existing.lines().any(|l| l.trim() == header) {
            let _ = writeln!(add, "\n{header}\ntrusted = true\ndecided_at = {now_epoch}");
        }
    }
    if add.is_empty() {
        return Ok(false);
    }
    let mut f = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&file)
        .map_err(io("open", &file))?;
    f.write_all(add.as_bytes())
        .map_err(io("append to", &file))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_only_edits_an_existing_file_and_keeps_other_keys() {
        let home = tempfile::tempdir().unwrap();
        let env = Env::default();
        let d = home.path().join("s");
        assert!(!claude(&env, home.path(), &[&d]).unwrap());
        assert!(!home.path().join(".claude.json").exists());
        fs::write(
            home.path().join(".claude.json"),
            r#"{"hasCompletedOnboarding":true,"projects":{"/x":{"a":1}}}"#,
        )
        .unwrap();
        assert!(claude(&env, home.path(), &[&d]).unwrap());
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(home.path().join(".claude.json")).unwrap())
                .unwrap();
        assert_eq!(v["hasCompletedOnboarding"], true);
        assert_eq!(v["projects"]["/x"]["a"], 1);
        assert_eq!(
            v["projects"][d.to_string_lossy().as_ref()]["hasTrustDialogAccepted"],
            true
        );
    }

    #[test]
    fn grok_is_opt_in_and_idempotent() {
        let home = tempfile::tempdir().unwrap();
        fs::create_dir(home.path().join(".grok")).unwrap();
        let d = Path::new("/s/\"q\"");
        assert!(!grok(&Env::default(), home.path(), &[d], 1).unwrap());
        assert!(!home.path().join(".grok/trusted_folders.toml").exists());
        let env = Env::from_pairs([("STUDYLOOP_GROK_TRUST_SESSION_DIR", "1")]);
        assert!(grok(&env, home.path(), &[d], 1).unwrap());
        assert!(!grok(&env, home.path(), &[d], 2).unwrap());
        let text = fs::read_to_string(home.path().join(".grok/trusted_folders.toml")).unwrap();
        assert_eq!(
            text,
            "\n[folders.\"/s/\\\"q\\\"\"]\ntrusted = true\ndecided_at = 1\n"
        );
        let bad = Env::from_pairs([("STUDYLOOP_GROK_TRUST_SESSION_DIR", "true")]);
        assert!(grok(&bad, home.path(), &[d], 1).is_err());
    }
}
