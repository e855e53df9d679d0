//! `Env`: the exact environment a scratch child gets, built from nothing.
//!
//! Two builders. The scrubbed one starts empty and adds back an allow-list, one
//! why-comment per line. The real-auth one (`STUDYLOOP_ACC_REAL_AUTH=1`) keeps the
//! caller's HOME, XDG and provider credentials, as the production CLI/tmux path
//! does, while every StudyLoop pointer is scratch. After building, a lane may add
//! variables with [`Env::with_var`] (never a `STUDYLOOP_TEST_*` hatch or a
//! scratch pointer), copy a caller variable with [`Env::inherit`] (never a
//! credential), or, in hermetic tests only, set a test hatch with
//! [`Env::with_test_hatch`]. This type never reads the process environment.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::caller_env::CallerEnv;

/// The scratch paths an env points at.
#[derive(Debug, Clone)]
pub(crate) struct Pointers<'a> {
    pub home: &'a Path,
    pub config_dir: &'a Path,
    pub state_dir: &'a Path,
    pub tmp_dir: &'a Path,
    pub socket_dir: &'a Path,
}

/// The product's stub-agent test hatches, settable only through
/// [`Env::with_test_hatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestHatch {
    /// `STUDYLOOP_TEST_AGENT_CMD`: replaces the harness launch command.
    AgentCmd,
    /// `STUDYLOOP_TEST_ACP_CMD`: replaces the ACP agent argv.
    AcpCmd,
}

impl TestHatch {
    /// The variable name.
    pub fn name(self) -> &'static str {
        match self {
            TestHatch::AgentCmd => "STUDYLOOP_TEST_AGENT_CMD",
            TestHatch::AcpCmd => "STUDYLOOP_TEST_ACP_CMD",
        }
    }
}

/// A variable an `Env` builder refused to add.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// A `STUDYLOOP_TEST_*` hatch passed to `with_var`.
    #[error(
        "refusing to set test hatch {name} with with_var: a live lane must never re-enter the stub-agent hatch (hermetic tests use Env::with_test_hatch)"
    )]
    TestHatch {
        /// The refused name.
        name: String,
    },
    /// A variable that points the child at the scratch world or the caller's tmux.
    #[error(
        "refusing to override {name}: it keeps the child inside its scratch world (build a new Scratch instead of redirecting this one)"
    )]
    ScratchPointer {
        /// The refused name.
        name: String,
    },
    /// A credential-shaped or StudyLoop-owned name passed to `inherit`.
    #[error(
        "refusing to inherit {name} from the caller: it matches the credential or StudyLoop deny rules (pass an explicit value with with_var if a lane really needs it)"
    )]
    Denied {
        /// The refused name.
        name: String,
    },
    /// A name that cannot be an environment variable.
    #[error(
        "invalid environment variable name {name:?}: it must be non-empty and contain no `=` or NUL"
    )]
    InvalidName {
        /// The refused name.
        name: String,
    },
}

/// Names no builder method may override once the scratch env is built.
const SCRATCH_POINTERS: [&str; 13] = [
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "TMPDIR",
    "TMUX_TMPDIR",
    "TMUX",
    "STUDYLOOP_STATE_DIR",
    "STUDYLOOP_CONFIG",
    "STUDYLOOP_SESSION_DIR",
    "STUDYLOOP_DB",
    "SESSION_CONTEXT_SCOPE",
];

/// Used when the caller has no `PATH` at all.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Used when the caller has no locale: a UTF-8 locale every glibc ships.
const FALLBACK_LOCALE: &str = "C.UTF-8";

/// An ordered map of variable name to value for one child process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, OsString>,
}

impl Env {
    /// The scrubbed scratch env: an allow-list, nothing else from the caller.
    pub(crate) fn scrubbed(caller: &CallerEnv, p: &Pointers<'_>) -> Self {
        let mut env = Env::default();
        // Harness binaries and tmux are found as the developer's shell finds them;
        // `just testacc` puts the pinned `.harnesses/node_modules/.bin` first.
        env.set("PATH", Env::scratch_path(caller));
        // Harness TUIs draw UTF-8; without a locale they garble or fall back.
        env.set("LANG", or_default(caller.var_os("LANG"), FALLBACK_LOCALE));
        // Same reason, and LC_ALL beats any LC_* the caller left unset here.
        env.set(
            "LC_ALL",
            or_default(caller.var_os("LC_ALL"), FALLBACK_LOCALE),
        );
        // A known, capable terminal: CI has none, and panes must render the same.
        env.set("TERM", "xterm-256color");
        // The product and every harness derive config, sessions and DB from HOME.
        env.set("HOME", p.home);
        // Harnesses that read XDG directly must still land inside scratch.
        env.set("XDG_CONFIG_HOME", p.home.join(".config"));
        // Same: data (opencode's storage, harness installs) stays in scratch.
        env.set("XDG_DATA_HOME", p.home.join(".local/share"));
        // Same: caches are swept with the scratch tree.
        env.set("XDG_CACHE_HOME", p.home.join(".cache"));
        // Same: state files (logs, history) stay in scratch.
        env.set("XDG_STATE_HOME", p.home.join(".local/state"));
        // Temp files a child leaves behind are swept with the scratch tree.
        env.set("TMPDIR", p.tmp_dir);
        // A private tmux socket dir: a child can never reach the caller's server.
        env.set("TMUX_TMPDIR", p.socket_dir);
        // The one StudyLoop pointer a scrubbed child gets; the rest derive from HOME.
        env.set("STUDYLOOP_STATE_DIR", p.state_dir);
        env
    }

    /// The real-auth env: the caller's env minus StudyLoop's own variables and
    /// the caller's tmux, with every StudyLoop pointer set to scratch.
    pub(crate) fn real_auth(caller: &CallerEnv, p: &Pointers<'_>) -> Self {
        let mut env = Env::default();
        for (name, value) in caller.iter() {
            let Some(name) = name.to_str() else { continue };
            if !real_auth_drops(name) {
                env.set(name, value);
            }
        }
        // The same PATH rule as scrubbed mode, so requirement checks hold here too.
        env.set("PATH", Env::scratch_path(caller));
        if env.get("TERM").is_none() {
            // A known terminal when the caller (CI) has none.
            env.set("TERM", "xterm-256color");
        }
        // The seeded config (with its scope), never the developer's.
        env.set("STUDYLOOP_CONFIG", p.config_dir.join("config.yaml"));
        // session-state.json, the one-session authority, stays scratch.
        env.set("STUDYLOOP_SESSION_DIR", p.config_dir);
        // Plans, modules and state stay scratch.
        env.set("STUDYLOOP_STATE_DIR", p.state_dir);
        // The session history DB stays scratch.
        env.set("STUDYLOOP_DB", p.config_dir.join("sessions.db"));
        // A private tmux socket dir, as in scrubbed mode.
        env.set("TMUX_TMPDIR", p.socket_dir);
        env
    }

    /// The `PATH` every scratch child gets: the caller's, or a minimal system
    /// path when the caller has none. Requirement checks resolve binaries on
    /// exactly this value.
    pub fn scratch_path(caller: &CallerEnv) -> OsString {
        or_default(caller.var_os("PATH"), FALLBACK_PATH)
    }

    /// Adds or replaces `name`. Refuses test hatches and scratch pointers.
    pub fn with_var(mut self, name: &str, value: impl AsRef<OsStr>) -> Result<Self, EnvError> {
        check_name(name)?;
        if name.starts_with("STUDYLOOP_TEST_") {
            return Err(EnvError::TestHatch { name: name.into() });
        }
        if SCRATCH_POINTERS.contains(&name) {
            return Err(EnvError::ScratchPointer { name: name.into() });
        }
        self.set(name, value);
        Ok(self)
    }

    /// Sets a product test hatch. Only hermetic tests call this; live lanes
    /// must drive the real harness binary.
    pub fn with_test_hatch(mut self, hatch: TestHatch, value: impl AsRef<OsStr>) -> Self {
        self.set(hatch.name(), value);
        self
    }

    /// Copies `name` from the caller when it is set. Refuses anything the
    /// credential deny rules match, StudyLoop's own variables, and tmux's.
    pub fn inherit(mut self, caller: &CallerEnv, name: &str) -> Result<Self, EnvError> {
        check_name(name)?;
        if studyloop_credentials::is_denied(name) || real_auth_drops(name) {
            return Err(EnvError::Denied { name: name.into() });
        }
        if SCRATCH_POINTERS.contains(&name) {
            return Err(EnvError::ScratchPointer { name: name.into() });
        }
        if let Some(value) = caller.var_os(name) {
            self.set(name, value);
        }
        Ok(self)
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(name).map(OsString::as_os_str)
    }

    /// Every variable, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &OsStr)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_os_str()))
    }

    /// Replaces `cmd`'s whole environment with this one (`env_clear` first).
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env_clear().envs(self.iter())
    }

    /// Resolves `binary` on this env's `PATH`, as a child would: the first
    /// executable regular file named `binary` in a `PATH` directory.
    pub fn find_binary(&self, binary: &str) -> Option<PathBuf> {
        find_on_path(self.get("PATH")?, binary)
    }

    /// An env of exactly `pairs`, for unit tests (scratch pointers included).
    #[cfg(test)]
    pub(crate) fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut env = Self::default();
        for (name, value) in pairs {
            env.set(name, value);
        }
        env
    }

    fn set(&mut self, name: &str, value: impl AsRef<OsStr>) {
        self.vars.insert(name.to_owned(), value.as_ref().to_owned());
    }
}

/// Resolves `binary` in the directories of a `PATH` value.
pub fn find_on_path(path: &OsStr, binary: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if binary.is_empty() || binary.contains('/') {
        return None;
    }
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(binary))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What real-auth mode (and `inherit`) never copies from the caller.
fn real_auth_drops(name: &str) -> bool {
    // Every StudyLoop variable, the test hatches included: a stale export must
    // never redirect a child or re-enter a stub hatch.
    name.starts_with("STUDYLOOP_")
        // The caller's memory scope would override the seeded config's.
        || name == "SESSION_CONTEXT_SCOPE"
        // Inside-tmux markers would make the product talk to the caller's server.
        || name == "TMUX"
        || name == "TMUX_PANE"
        // Replaced by the scratch socket dir.
        || name == "TMUX_TMPDIR"
}

fn check_name(name: &str) -> Result<(), EnvError> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(EnvError::InvalidName { name: name.into() });
    }
    Ok(())
}

fn or_default(value: Option<&OsStr>, default: &str) -> OsString {
    match value {
        Some(v) if !v.is_empty() => v.to_owned(),
        _ => OsString::from(default),
    }
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
