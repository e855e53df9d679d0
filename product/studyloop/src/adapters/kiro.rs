//! Kiro's persona hook: Kiro reads its persona from an agent JSON file in a
//! shared directory (`~/.kiro/agents`), so StudyLoop writes
//! `study-mentor.json` there pointing at the persona file, backs up whatever
//! was there first, and restores it at the end. A backup left by a crash is
//! restored before a new one is taken, so the user's own file is never lost.

use std::fs;
use std::path::{Path, PathBuf};

use super::{AdapterError, io_err as io};
use crate::env::{self, Env};

/// The agent name passed to `kiro-cli chat --agent`.
pub const KIRO_AGENT_NAME: &str = "study-mentor";

const BACKUP_SUFFIX: &str = ".studyloop-backup";

/// The persona-neutral fields of the agent StudyLoop writes when no
/// `STUDYLOOP_KIRO_AGENT_TEMPLATE` is given.
const BUILTIN_TEMPLATE: &str = r#"{
  "name": "study-mentor",
  "description": "StudyLoop study mentor (written by studyloop; restored when the session ends)",
  "prompt": null,
  "mcpServers": {},
  "tools": ["*"],
  "allowedTools": ["fs_read"],
  "resources": [],
  "hooks": {},
  "useLegacyMcpJson": false
}"#;

/// Where Kiro agent files live: `STUDYLOOP_KIRO_AGENTS_DIR`, else `~/.kiro/agents`.
pub fn kiro_agents_dir(env: &Env, home: &Path) -> Result<PathBuf, AdapterError> {
    Ok(match env.get_nonempty(env::STUDYLOOP_KIRO_AGENTS_DIR)? {
        Some(d) => PathBuf::from(d),
        None => home.join(".kiro").join("agents"),
    })
}

fn files(env: &Env, home: &Path) -> Result<(PathBuf, PathBuf), AdapterError> {
    let dir = kiro_agents_dir(env, home)?;
    let json = dir.join(format!("{KIRO_AGENT_NAME}.json"));
    let backup = dir.join(format!("{KIRO_AGENT_NAME}.json{BACKUP_SUFFIX}"));
    Ok((json, backup))
}

fn template(env: &Env) -> Result<serde_json::Map<String, serde_json::Value>, AdapterError> {
    let (text, path) = match env.get_nonempty(env::STUDYLOOP_KIRO_AGENT_TEMPLATE)? {
        Some(p) => {
            let path = PathBuf::from(p);
            let text = crate::fsutil::read_user(&path, crate::fsutil::USER_FILE_LIMIT)
                .and_then(|b| b.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound)))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .map_err(|e| AdapterError::KiroTemplate {
                    path: path.clone(),
                    problem: format!("cannot be read ({e})"),
                })?;
            (text, Some(path))
        }
        None => (BUILTIN_TEMPLATE.to_owned(), None),
    };
    match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        _ => Err(AdapterError::KiroTemplate {
            path: path.unwrap_or_default(),
            problem: "is not a JSON object".into(),
        }),
    }
}

/// Check the template before anything is written (a pre-flight check).
pub(super) fn check_template(env: &Env) -> Result<(), AdapterError> {
    template(env).map(drop)
}

/// Write the agent JSON pointing at `persona_file`, backing up any existing one.
pub(super) fn install(env: &Env, home: &Path, persona_file: &Path) -> Result<(), AdapterError> {
    let (json, backup) = files(env, home)?;
    let mut agent = template(env)?;
    if let Some(dir) = json.parent() {
        fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    if backup.exists() {
        // A previous run crashed before teardown: its backup is the user's file.
        fs::rename(&backup, &json).map_err(io("restore stale backup", &backup))?;
    }
    if json.exists() {
        fs::rename(&json, &backup).map_err(io("back up", &json))?;
    }
    agent.insert("name".into(), KIRO_AGENT_NAME.into());
    agent.insert(
        "prompt".into(),
        format!("file://{}", persona_file.display()).into(),
    );
    // A `Value` prints infallibly (alternate `Display` = `to_vec_pretty`'s bytes).
    let bytes = format!("{:#}\n", serde_json::Value::Object(agent)).into_bytes();
    crate::fsutil::atomic_write(&json, &bytes, 0o600).map_err(io("write", &json))
}

/// Put back the user's agent JSON, or remove ours when there was none.
pub(super) fn uninstall(env: &Env, home: &Path, persona_file: &Path) -> Result<(), AdapterError> {
    let (json, backup) = files(env, home)?;
    if backup.exists() {
        return fs::rename(&backup, &json).map_err(io("restore", &backup));
    }
    let ours = crate::fsutil::read_user(&json, crate::fsutil::USER_FILE_LIMIT)
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["prompt"] == format!("file://{}", persona_file.display()).as_str());
    if ours {
        crate::fsutil::remove_if_exists(&json).map_err(io("remove", &json))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Env) {
        let dir = tempfile::tempdir().unwrap();
        let env = Env::from_pairs([("STUDYLOOP_KIRO_AGENTS_DIR", dir.path().join("agents"))]);
        (dir, env)
    }

    #[test]
    fn backs_up_and_restores_the_users_file() {
        let (dir, env) = setup();
        let agents = dir.path().join("agents");
        fs::create_dir_all(&agents).unwrap();
        fs::write(agents.join("study-mentor.json"), "{\"mine\":true}").unwrap();
        let persona = dir.path().join("p.md");
        install(&env, dir.path(), &persona).unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(agents.join("study-mentor.json")).unwrap())
                .unwrap();
        assert_eq!(
            written["prompt"],
            format!("file://{}", persona.display()).as_str()
        );
        assert_eq!(
            fs::read_to_string(agents.join("study-mentor.json.studyloop-backup")).unwrap(),
            "{\"mine\":true}"
        );
        uninstall(&env, dir.path(), &persona).unwrap();
        assert_eq!(
            fs::read_to_string(agents.join("study-mentor.json")).unwrap(),
            "{\"mine\":true}"
        );
        assert!(!agents.join("study-mentor.json.studyloop-backup").exists());
    }

    #[test]
    fn stale_backup_is_restored_before_a_new_one() {
        let (dir, env) = setup();
        let agents = dir.path().join("agents");
        fs::create_dir_all(&agents).unwrap();
        // Crash leftovers: our JSON in place, the user's file in the backup.
        fs::write(
            agents.join("study-mentor.json"),
            "{\"prompt\":\"file:///old\"}",
        )
        .unwrap();
        fs::write(
            agents.join("study-mentor.json.studyloop-backup"),
            "{\"mine\":1}",
        )
        .unwrap();
        let persona = dir.path().join("p.md");
        install(&env, dir.path(), &persona).unwrap();
        assert_eq!(
            fs::read_to_string(agents.join("study-mentor.json.studyloop-backup")).unwrap(),
            "{\"mine\":1}"
        );
        uninstall(&env, dir.path(), &persona).unwrap();
        assert_eq!(
            fs::read_to_string(agents.join("study-mentor.json")).unwrap(),
            "{\"mine\":1}"
        );
    }

    #[test]
    fn no_prior_file_means_ours_is_removed() {
        let (dir, env) = setup();
        let persona = dir.path().join("p.md");
        install(&env, dir.path(), &persona).unwrap();
        uninstall(&env, dir.path(), &persona).unwrap();
        assert_eq!(fs::read_dir(dir.path().join("agents")).unwrap().count(), 0);
    }

    #[test]
    fn bad_template_is_named() {
        let (dir, mut env) = setup();
        env.set(
            "STUDYLOOP_KIRO_AGENT_TEMPLATE",
            dir.path().join("missing.json"),
        );
        let err = check_template(&env).unwrap_err().to_string();
        assert!(
            err.contains("missing.json") && err.contains("cannot be read"),
            "{err}"
        );
    }
}
