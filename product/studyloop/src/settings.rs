//! Where StudyLoop keeps things: every path derived at call time from an
//! [`Env`] (and, for the DB and state dir, the loaded config), exactly as the
//! reference does it (HOME-derived, no XDG).
//!
//! This module only computes paths; it creates nothing. Directory creation is
//! done by the code that writes (see [`crate::fsutil`]).

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::env::{self, Env, EnvError};

/// Why a path could not be derived.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// HOME is needed for a default path but is unset or empty.
    #[error("HOME is not set; set HOME (or the STUDYLOOP_* path variables) and retry")]
    NoHome,
    /// A path variable holds a relative path.
    #[error("{name}=`{value}` is not an absolute path; set it to an absolute path")]
    NotAbsolute {
        /// The variable (or config key).
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A path key of config.yaml holds a relative path.
    #[error(
        "config key `{key}` = `{value}` is not an absolute path; write an absolute path (or one starting with `~/`) in config.yaml"
    )]
    ConfigNotAbsolute {
        /// The config key.
        key: &'static str,
        /// Its value.
        value: String,
    },
    /// A variable is not valid UTF-8.
    #[error(transparent)]
    Env(#[from] EnvError),
}

/// Files of the live session, all under one directory (`STUDYLOOP_SESSION_DIR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    /// The directory itself.
    pub dir: PathBuf,
}

impl SessionPaths {
    /// `session-state.json`, the single-session authority.
    pub fn state_file(&self) -> PathBuf {
        self.dir.join("session-state.json")
    }
    /// The flock guarding every state read-merge-write.
    pub fn state_lock(&self) -> PathBuf {
        self.dir.join(".session-state.lock")
    }
    /// The intent record of a start or end in progress (see
    /// [`crate::session`]): present only while one runs or after one was killed.
    pub fn journal(&self) -> PathBuf {
        self.dir.join("session-journal.json")
    }
    /// The flock a start or end holds from its intent record to its last step;
    /// a journal whose lock is free belongs to a process that died.
    pub fn op_lock(&self) -> PathBuf {
        self.dir.join(".session-op.lock")
    }
    /// The flock serialising tmux session creation.
    pub fn tmux_lock(&self) -> PathBuf {
        self.dir.join("studyloop-tmux.lock")
    }
    /// The topics feed (`studyloop topic`).
    pub fn topics(&self) -> PathBuf {
        self.dir.join("session-topics.md")
    }
    /// The parking-lot feed (`studyloop park`).
    pub fn parking(&self) -> PathBuf {
        self.dir.join("session-parking.md")
    }
    /// One-line summary for status bars.
    pub fn oneline(&self) -> PathBuf {
        self.dir.join("session-oneline.txt")
    }
    /// Parent of every per-session working directory.
    pub fn sessions_root(&self) -> PathBuf {
        self.dir.join("sessions")
    }
}

/// Every resolved path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The home directory.
    pub home: PathBuf,
    /// `config.yaml`.
    pub config_file: PathBuf,
    /// Live-session files.
    pub session: SessionPaths,
    /// Durable data directory.
    pub state_dir: PathBuf,
    /// SQLite history database.
    pub db: PathBuf,
}

fn abs_var(env: &Env, name: &'static str) -> Result<Option<PathBuf>, SettingsError> {
    match env.get_nonempty(name)? {
        None => Ok(None),
        Some(v) if Path::new(v).is_absolute() => Ok(Some(PathBuf::from(v))),
        Some(v) => Err(SettingsError::NotAbsolute {
            name,
            value: v.to_owned(),
        }),
    }
}

/// The embedding model directory (`STUDYLOOP_EMBED_MODEL`), when set; an
/// absolute path or an error naming the variable.
pub fn embed_model_dir(env: &Env) -> Result<Option<PathBuf>, SettingsError> {
    abs_var(env, env::STUDYLOOP_EMBED_MODEL)
}

/// The home directory.
pub fn home(env: &Env) -> Result<PathBuf, SettingsError> {
    abs_var(env, env::HOME)?.ok_or(SettingsError::NoHome)
}

/// `$HOME/.config/studyloop`: the fixed config directory.
pub fn config_dir(env: &Env) -> Result<PathBuf, SettingsError> {
    Ok(home(env)?.join(".config").join("studyloop"))
}

/// The config file: `STUDYLOOP_CONFIG`, else `config_dir/config.yaml`.
pub fn config_file(env: &Env) -> Result<PathBuf, SettingsError> {
    match abs_var(env, env::STUDYLOOP_CONFIG)? {
        Some(p) => Ok(p),
        None => Ok(config_dir(env)?.join("config.yaml")),
    }
}

/// The live-session directory: `STUDYLOOP_SESSION_DIR`, else the config dir.
/// Needs no config, so `status` and the feeds stay cheap.
pub fn session_paths(env: &Env) -> Result<SessionPaths, SettingsError> {
    let dir = match abs_var(env, env::STUDYLOOP_SESSION_DIR)? {
        Some(p) => p,
        None => config_dir(env)?,
    };
    Ok(SessionPaths { dir })
}

/// Expand a leading `~/` against HOME; config paths are written that way.
fn expand(home: &Path, key: &'static str, raw: &str) -> Result<PathBuf, SettingsError> {
    let p = if let Some(rest) = raw.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(raw)
    };
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(SettingsError::ConfigNotAbsolute {
            key,
            value: raw.to_owned(),
        })
    }
}

impl Paths {
    /// Resolve every path. Precedence as the reference: state dir = config
    /// `state_dir`, then `STUDYLOOP_STATE_DIR`, then the default; DB = config
    /// `session_db` or `database.path`, then `STUDYLOOP_DB`, then the default.
    pub fn resolve(env: &Env, config: &Config) -> Result<Self, SettingsError> {
        let home = home(env)?;
        let config_dir = home.join(".config").join("studyloop");
        let default_db = config_dir.join("sessions.db");
        let state_dir = match config.state_dir.as_deref() {
            Some(raw) => expand(&home, "state_dir", raw)?,
            None => match abs_var(env, env::STUDYLOOP_STATE_DIR)? {
                Some(p) => p,
                None => home.join(".local").join("share").join("studyloop"),
            },
        };
        let from_config = match (config.session_db.as_deref(), config.database_path()) {
            (Some(raw), _) => Some(expand(&home, "session_db", raw)?),
            (None, Some(raw)) => {
                Some(expand(&home, "database.path", raw)?).filter(|p| *p != default_db)
            }
            (None, None) => None,
        };
        let db = match from_config {
            Some(p) => p,
            None => abs_var(env, env::STUDYLOOP_DB)?.unwrap_or(default_db),
        };
        Ok(Self {
            config_file: config_file(env)?,
            session: session_paths(env)?,
            state_dir,
            db,
            home,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().map(|(k, v)| (*k, *v)))
    }

    #[test]
    fn defaults_derive_from_home_only() {
        let e = env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")]);
        let p = Paths::resolve(&e, &Config::default()).unwrap();
        assert_eq!(
            p.config_file,
            PathBuf::from("/h/.config/studyloop/config.yaml")
        );
        assert_eq!(p.session.dir, PathBuf::from("/h/.config/studyloop"));
        assert_eq!(p.state_dir, PathBuf::from("/h/.local/share/studyloop"));
        assert_eq!(p.db, PathBuf::from("/h/.config/studyloop/sessions.db"));
    }

    #[test]
    fn overrides_follow_reference_precedence() {
        let e = env(&[
            ("HOME", "/h"),
            ("STUDYLOOP_CONFIG", "/c/config.yaml"),
            ("STUDYLOOP_SESSION_DIR", "/s"),
            ("STUDYLOOP_STATE_DIR", "/st"),
            ("STUDYLOOP_DB", "/db/x.db"),
        ]);
        let p = Paths::resolve(&e, &Config::default()).unwrap();
        assert_eq!(p.config_file, PathBuf::from("/c/config.yaml"));
        assert_eq!(
            p.session.state_file(),
            PathBuf::from("/s/session-state.json")
        );
        assert_eq!(p.state_dir, PathBuf::from("/st"));
        assert_eq!(p.db, PathBuf::from("/db/x.db"));
        let cfg = Config {
            state_dir: Some("~/state".into()),
            session_db: Some("/cfg.db".into()),
            ..Config::default()
        };
        let p = Paths::resolve(&e, &cfg).unwrap();
        assert_eq!(p.state_dir, PathBuf::from("/h/state"));
        assert_eq!(p.db, PathBuf::from("/cfg.db"));
    }

    #[test]
    fn relative_and_missing_are_errors() {
        assert!(matches!(home(&env(&[])), Err(SettingsError::NoHome)));
        let cfg = Config {
            session_db: Some("sessions.db".into()),
            ..Config::default()
        };
        let err = Paths::resolve(&env(&[("HOME", "/h")]), &cfg).unwrap_err();
        assert!(
            err.to_string()
                .contains("config key `session_db` = `sessions.db`"),
            "{err}"
        );
        let err =
            session_paths(&env(&[("HOME", "/h"), ("STUDYLOOP_SESSION_DIR", "rel")])).unwrap_err();
        assert!(
            err.to_string().contains("STUDYLOOP_SESSION_DIR=`rel`"),
            "{err}"
        );
    }
}

/// Why `STUDYLOOP_PLANS_DIR` cannot name the study-plans directory.
#[derive(Debug, thiserror::Error)]
pub enum PlansDirError {
    /// The value is relative (it would move with the working directory).
    #[error("STUDYLOOP_PLANS_DIR=`{0}` is not an absolute path; set it to an absolute path")]
    NotAbsolute(String),
    /// The variable is not readable text.
    #[error(transparent)]
    Env(#[from] EnvError),
}

/// The study-plans directory: `STUDYLOOP_PLANS_DIR` when set (absolute), else
/// `<state_dir>/study-plans`. Path resolution lives here, beside [`Paths`], so
/// the plans layer and the MCP registration (which passes it to the server)
/// resolve it one way without importing each other.
///
/// # Errors
/// [`PlansDirError`]: a relative or unreadable `STUDYLOOP_PLANS_DIR`.
pub fn plans_dir(env: &Env, state_dir: &Path) -> Result<PathBuf, PlansDirError> {
    match env.get_nonempty(env::STUDYLOOP_PLANS_DIR)? {
        Some(v) if Path::new(v).is_absolute() => Ok(PathBuf::from(v)),
        Some(v) => Err(PlansDirError::NotAbsolute(v.chars().take(200).collect())),
        None => Ok(state_dir.join("study-plans")),
    }
}
