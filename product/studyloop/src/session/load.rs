//! What every session command shares: loading the config, scope and settings ([`load`]), the session error type and the energy rating.

use super::ClaimError;
use std::path::{Path, PathBuf};

use crate::config::{self, ConfigError};
use crate::context::Ctx;
use crate::scope::{self, Scope, ScopeError};
use crate::settings::{self, Paths, SettingsError};

/// A session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Paths.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// Config.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The scope gate (exit 2).
    #[error(transparent)]
    Scope(#[from] ScopeError),
    /// An environment variable.
    #[error(transparent)]
    Env(#[from] crate::env::EnvError),
    /// Harness adapter.
    #[error(transparent)]
    Adapter(#[from] crate::adapters::AdapterError),
    /// tmux.
    #[error(transparent)]
    Tmux(#[from] crate::tmux::TmuxError),
    /// State file.
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    /// History DB.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The single-session claim.
    #[error(transparent)]
    Claim(#[from] ClaimError),
    /// `--energy` out of range.
    #[error(
        "energy `{0}` is not accepted; use a whole number from 1 (low) to 10 (high), e.g. --energy 5"
    )]
    InvalidEnergy(String),
    /// `--mode` unknown.
    #[error("mode `{0}` is not accepted; use one of: {modes}", modes = crate::persona::Mode::CLI_ACCEPTED)]
    InvalidMode(String),
    /// No topic.
    #[error(
        "a study topic is required, e.g. `studyloop study \"SQL window functions\" --agent codex`"
    )]
    EmptyTopic,
    /// Nothing to resume.
    #[error("No active session to resume.")]
    NoSessionToResume,
    /// The session to resume has lost its directory.
    #[error(
        "session {name} is gone (its directory {dir} no longer exists); start a new one with `studyloop study TOPIC --agent NAME`"
    )]
    SessionGone {
        /// tmux name.
        name: String,
        /// The missing dir.
        dir: PathBuf,
    },
    /// `--end` of a tmux session without tmux: nothing was changed.
    #[error(
        "cannot end tmux session {name}: {source}; nothing was changed (the harness is still running). Put tmux on PATH and run `studyloop study --end` again"
    )]
    EndNeedsTmux {
        /// The recorded tmux session.
        name: String,
        /// Why tmux is unusable.
        source: crate::tmux::TmuxError,
    },
    /// The journal of an interrupted start or end cannot be parsed.
    #[error(
        "the session journal {path} is damaged ({message}); run `studyloop doctor --fix`, which keeps a copy and rebuilds the state from the history DB and tmux"
    )]
    JournalCorrupt {
        /// The journal file.
        path: PathBuf,
        /// The parse error.
        message: String,
    },
    /// A session runs with no state (see `orphan`): a start beside it would
    /// run a second harness and lose the first one's notes.
    #[error(
        "session {id} (tmux session {name}) is still running but the session state is missing; run `studyloop doctor --fix`, which rebuilds it, then `studyloop study --resume` or `studyloop study --end`"
    )]
    Orphaned {
        /// The row's study id.
        id: String,
        /// Its live tmux session.
        name: String,
    },
    /// A start failed and undoing it failed too; the journal stays.
    #[error(
        "{cause}; undoing the start also failed ({rollback}); the next studyloop command retries the rollback"
    )]
    RollbackIncomplete {
        /// Why the start failed.
        cause: Box<SessionError>,
        /// Why the rollback failed.
        rollback: Box<SessionError>,
    },
    /// A file operation.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl SessionError {
    /// The process exit code for this error: 2 for the scope gate, else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Scope(ScopeError::Unconfigured { .. }) => 2,
            Self::RollbackIncomplete { cause, .. } => cause.exit_code(),
            _ => 1,
        }
    }
}

/// A `map_err` adapter that names what was being done to which path:
/// `fs_call(path).map_err(io("write", path))`. It lives beside the error
/// type so every session file can use it without importing another.
pub(super) fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SessionError {
    let path = path.to_owned();
    move |source| SessionError::Io {
        action,
        path,
        source,
    }
}

/// Energy 1..=10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Energy(u8);

impl Energy {
    /// The default energy.
    pub const DEFAULT: Self = Self(5);

    /// Parse a CLI value.
    pub fn parse(s: &str) -> Result<Self, SessionError> {
        match s.trim().parse::<u8>() {
            Ok(n @ 1..=10) => Ok(Self(n)),
            _ => Err(SessionError::InvalidEnergy(s.to_owned())),
        }
    }

    /// From a stored value (clamped into range).
    pub fn from_stored(n: Option<u8>) -> Self {
        n.map_or(Self::DEFAULT, |n| Self(n.clamp(1, 10)))
    }

    /// The number.
    pub fn get(self) -> u8 {
        self.0
    }

    /// `low` (1–3), `medium` (4–7) or `high` (8–10).
    pub fn label(self) -> &'static str {
        match self.0 {
            1..=3 => "low",
            4..=7 => "medium",
            _ => "high",
        }
    }
}

/// Config, paths and scope: what every DB-touching operation needs first.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The loaded config.
    pub config: config::Loaded,
    /// Resolved paths.
    pub paths: Paths,
    /// The scope that let us through the gate.
    pub scope: Scope,
}

/// Load config and paths, then pass the scope gate.
pub fn load(ctx: &Ctx) -> Result<Loaded, SessionError> {
    let config_file = settings::config_file(&ctx.env)?;
    let config = config::load(&config_file)?;
    let paths = Paths::resolve(&ctx.env, &config.config)?;
    let scope = scope::resolve(&ctx.env, &config.config, &config_file, &ctx.cwd)?;
    Ok(Loaded {
        config,
        paths,
        scope,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_range_and_labels() {
        assert_eq!(Energy::parse("5").unwrap().label(), "medium");
        assert_eq!(Energy::parse("3").unwrap().label(), "low");
        assert_eq!(Energy::parse("8").unwrap().label(), "high");
        for bad in ["0", "11", "-1", "five", ""] {
            let err = Energy::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(&format!("`{bad}`")) && err.contains("1 (low) to 10"),
                "{err}"
            );
        }
    }
}
