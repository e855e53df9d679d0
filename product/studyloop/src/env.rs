//! The environment the product reads: one snapshot taken by `main`, passed down
//! explicitly, plus the named constant and one-line meaning of every variable.
//!
//! Nothing in the library calls `std::env::var`; every path and switch is derived
//! from an [`Env`] at call time, so a test (or the web server) can run the same
//! code against a scratch HOME without touching the process environment.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// One environment variable the product reads, for the README table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVarDoc {
    /// The exact variable name.
    pub name: &'static str,
    /// What it does, in one line.
    pub meaning: &'static str,
}

/// The user's home; every default path derives from it.
pub const HOME: &str = "HOME";
/// Searched for `tmux` and the harness binaries.
pub const PATH: &str = "PATH";
/// Full path of `config.yaml`.
pub const STUDYLOOP_CONFIG: &str = "STUDYLOOP_CONFIG";
/// Path of the SQLite history database.
pub const STUDYLOOP_DB: &str = "STUDYLOOP_DB";
/// Directory for durable product data.
pub const STUDYLOOP_STATE_DIR: &str = "STUDYLOOP_STATE_DIR";
/// Directory holding `session-state.json`, the feeds and the session dirs.
pub const STUDYLOOP_SESSION_DIR: &str = "STUDYLOOP_SESSION_DIR";
/// Directory of the study-plan documents.
pub const STUDYLOOP_PLANS_DIR: &str = "STUDYLOOP_PLANS_DIR";
/// Default harness when `--agent` is absent.
pub const STUDYLOOP_AGENT: &str = "STUDYLOOP_AGENT";
/// Where Kiro agent JSON files live.
pub const STUDYLOOP_KIRO_AGENTS_DIR: &str = "STUDYLOOP_KIRO_AGENTS_DIR";
/// An alternative Kiro agent JSON template.
pub const STUDYLOOP_KIRO_AGENT_TEMPLATE: &str = "STUDYLOOP_KIRO_AGENT_TEMPLATE";
/// `1` opts in to pre-trusting the session dir for Grok.
pub const STUDYLOOP_GROK_TRUST_SESSION_DIR: &str = "STUDYLOOP_GROK_TRUST_SESSION_DIR";
/// Grok's home directory.
pub const GROK_HOME: &str = "GROK_HOME";
/// Claude Code's config directory (holds `.claude.json`).
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Codex's home directory (holds `config.toml`).
pub const CODEX_HOME: &str = "CODEX_HOME";
/// The XDG config root OpenCode reads `opencode/opencode.json` from.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// Overrides the memory scope for this process.
pub const SESSION_CONTEXT_SCOPE: &str = "SESSION_CONTEXT_SCOPE";
/// tmux socket directory; honoured by every tmux call.
pub const TMUX_TMPDIR: &str = "TMUX_TMPDIR";
/// Set by tmux inside a pane; means "switch-client, don't attach".
pub const TMUX: &str = "TMUX";
/// Test hatch: replaces the harness launch command.
pub const STUDYLOOP_TEST_AGENT_CMD: &str = "STUDYLOOP_TEST_AGENT_CMD";
/// Test hatch: replaces the ACP agent argv (web, phase 2).
pub const STUDYLOOP_TEST_ACP_CMD: &str = "STUDYLOOP_TEST_ACP_CMD";
/// Test hatch: the start/end step at which `studyloop` SIGKILLs itself.
pub const STUDYLOOP_TEST_KILL_AT: &str = "STUDYLOOP_TEST_KILL_AT";
/// Set by StudyLoop in a session's pane: marks the session's processes.
pub const STUDYLOOP_SESSION_MARK: &str = "STUDYLOOP_SESSION_MARK";
/// Extra exact origins allowed to open the web console's WebSocket.
pub const STUDYLOOP_ALLOWED_ORIGINS: &str = "STUDYLOOP_ALLOWED_ORIGINS";
/// The web console password (`studyloop web --lan` requires one).
pub const STUDYLOOP_WEB_PASSWORD: &str = "STUDYLOOP_WEB_PASSWORD";
/// Extra host names `studyloop web --lan` answers to (DNS-rebinding allow-list).
pub const STUDYLOOP_WEB_HOSTS: &str = "STUDYLOOP_WEB_HOSTS";
/// An RFC 3339 instant the product's clock starts at (`crate::clock`).
pub const STUDYLOOP_NOW: &str = "STUDYLOOP_NOW";

/// Directory of the sentence-embedding model (`just deps-embed` installs it).
pub const STUDYLOOP_EMBED_MODEL: &str = "STUDYLOOP_EMBED_MODEL";

/// Every environment variable the product reads (the README table is checked
/// against this list).
pub const ENV_VARS: &[EnvVarDoc] = &[
    EnvVarDoc {
        name: HOME,
        meaning: "Home directory; every default StudyLoop path derives from it (no XDG).",
    },
    EnvVarDoc {
        name: PATH,
        meaning: "Searched for `tmux` and the harness binaries; the session dir's `studyloop` shim is put first for the agent pane.",
    },
    EnvVarDoc {
        name: STUDYLOOP_CONFIG,
        meaning: "Full path of config.yaml (default `$HOME/.config/studyloop/config.yaml`).",
    },
    EnvVarDoc {
        name: STUDYLOOP_DB,
        meaning: "SQLite history DB path when config sets neither `session_db` nor `database.path` (default `$HOME/.config/studyloop/sessions.db`).",
    },
    EnvVarDoc {
        name: STUDYLOOP_STATE_DIR,
        meaning: "Durable data dir when config has no `state_dir` (default `$HOME/.local/share/studyloop`).",
    },
    EnvVarDoc {
        name: STUDYLOOP_SESSION_DIR,
        meaning: "Live-session dir: session-state.json, the topic/parking feeds, locks and `sessions/<name>/` (default `$HOME/.config/studyloop`).",
    },
    EnvVarDoc {
        name: STUDYLOOP_PLANS_DIR,
        meaning: "Directory of the study-plan Markdown documents (default `<state dir>/study-plans`).",
    },
    EnvVarDoc {
        name: STUDYLOOP_AGENT,
        meaning: "Default harness when `--agent` is omitted: codex, claude, kiro, pi, opencode or grok.",
    },
    EnvVarDoc {
        name: STUDYLOOP_KIRO_AGENTS_DIR,
        meaning: "Where the Kiro `study-mentor.json` agent is written (default `$HOME/.kiro/agents`).",
    },
    EnvVarDoc {
        name: STUDYLOOP_KIRO_AGENT_TEMPLATE,
        meaning: "Path of an alternative Kiro agent JSON template; must exist when set.",
    },
    EnvVarDoc {
        name: STUDYLOOP_GROK_TRUST_SESSION_DIR,
        meaning: "Exactly `1` pre-trusts the session dir in `$GROK_HOME/trusted_folders.toml`; unset/empty = off.",
    },
    EnvVarDoc {
        name: GROK_HOME,
        meaning: "Grok's home dir for the opt-in trust write (default `$HOME/.grok`).",
    },
    EnvVarDoc {
        name: CLAUDE_CONFIG_DIR,
        meaning: "Claude Code's config dir; the trust entry goes to its `.claude.json` (default `$HOME/.claude.json`).",
    },
    EnvVarDoc {
        name: CODEX_HOME,
        meaning: "Codex's home dir; `studyloop-mcp` is registered in its `config.toml` (default `$HOME/.codex`).",
    },
    EnvVarDoc {
        name: XDG_CONFIG_HOME,
        meaning: "OpenCode's config root; `studyloop-mcp` is registered in its `opencode/opencode.json` (default `$HOME/.config`).",
    },
    EnvVarDoc {
        name: SESSION_CONTEXT_SCOPE,
        meaning: "Memory scope for this process (personal, work or unclassified); first step of the scope gate.",
    },
    EnvVarDoc {
        name: TMUX_TMPDIR,
        meaning: "tmux socket directory; every tmux call StudyLoop makes goes through it (tests use a private one).",
    },
    EnvVarDoc {
        name: TMUX,
        meaning: "Set inside tmux; StudyLoop then switches the client instead of attaching.",
    },
    EnvVarDoc {
        name: STUDYLOOP_TEST_AGENT_CMD,
        meaning: "Test hatch: replaces the harness launch command (`{persona_file}` substituted, run by /bin/sh); stripped from every child env.",
    },
    EnvVarDoc {
        name: STUDYLOOP_TEST_ACP_CMD,
        meaning: "Test hatch: replaces the ACP agent argv for the web transport; stripped from every child env.",
    },
    EnvVarDoc {
        name: STUDYLOOP_TEST_KILL_AT,
        meaning: "Test hatch: a start or end step (e.g. `start:tmux`, `end:db`; the list is `session::KILL_POINTS`) at which studyloop SIGKILLs itself, to prove the journal repairs it; an unknown step is an error; stripped from every child env.",
    },
    EnvVarDoc {
        name: STUDYLOOP_SESSION_MARK,
        meaning: "Set by studyloop (to the study id) in a session's pane; every process still carrying it, even one that left the process group (setsid, nohup), is stopped when the session ends. Never set it yourself.",
    },
    EnvVarDoc {
        name: STUDYLOOP_ALLOWED_ORIGINS,
        meaning: "Comma list of extra exact origins (e.g. `https://study.example`) allowed to open the web console WebSocket and send its POST requests (the server's own origins always are).",
    },
    EnvVarDoc {
        name: STUDYLOOP_WEB_PASSWORD,
        meaning: "Password for `studyloop web` (HTTP Basic auth); `--password` wins; `--lan` requires one.",
    },
    EnvVarDoc {
        name: STUDYLOOP_EMBED_MODEL,
        meaning: "Absolute directory of the sentence-embedding model that makes `search` hybrid (FTS5 + embeddings, fused by rank); `just deps-embed` installs it (`.deps/embed-model/wordllama-0.4.0.post1`) and prints the path. Unset, missing or corrupt: `search` is lexical and says so.",
    },
    EnvVarDoc {
        name: STUDYLOOP_WEB_HOSTS,
        meaning: "Comma list of extra host names or IPs (e.g. `studybox.lan,192.168.1.9`) that `studyloop web --lan` answers to; any other `Host` gets 421.",
    },
    EnvVarDoc {
        name: STUDYLOOP_NOW,
        meaning: "An RFC 3339 instant (e.g. `2026-12-01T09:00:00Z`): the product's clock starts there and runs at real speed (tests resume on the next day); malformed is an error.",
    },
];

/// Why a variable's value was refused.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// The value is not valid UTF-8.
    #[error("{name} is not valid UTF-8; set it to a plain UTF-8 value or unset it")]
    NotUtf8 {
        /// The variable.
        name: &'static str,
    },
    /// The value is not in the accepted set.
    #[error("{name}=`{value}` is not accepted; use one of: {accepted}, or unset it")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// The refused value.
        value: String,
        /// The accepted values, comma separated.
        accepted: &'static str,
    },
}

/// A snapshot of an environment (name → value), ordered for stable output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<OsString, OsString>,
}

impl Env {
    /// The current process environment, read once (by `main`).
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars_os().collect(),
        }
    }

    /// An environment made of exactly these pairs.
    pub fn from_pairs<K: Into<OsString>, V: Into<OsString>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The raw value of `name`.
    pub fn get_os(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// The value of `name` as UTF-8; `Ok(None)` when unset.
    pub fn get(&self, name: &'static str) -> Result<Option<&str>, EnvError> {
        match self.get_os(name) {
            None => Ok(None),
            Some(v) => v.to_str().map(Some).ok_or(EnvError::NotUtf8 { name }),
        }
    }

    /// The value of `name`, trimmed, with empty treated as unset.
    pub fn get_nonempty(&self, name: &'static str) -> Result<Option<&str>, EnvError> {
        Ok(self.get(name)?.map(str::trim).filter(|v| !v.is_empty()))
    }

    /// Set (or replace) a variable.
    pub fn set(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) {
        self.vars.insert(name.into(), value.into());
    }

    /// Remove a variable.
    pub fn remove(&mut self, name: &str) {
        self.vars.remove(OsStr::new(name));
    }

    /// Keep only the variables for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&OsStr) -> bool) {
        self.vars.retain(|k, _| keep(k));
    }

    /// Every (name, value) pair, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }
}

/// A strict on/off switch: exactly `1` is on; unset or empty is off; anything
/// else is an error so a typo never silently means "off".
pub fn flag(env: &Env, name: &'static str) -> Result<bool, EnvError> {
    match env.get(name)? {
        None | Some("") => Ok(false),
        Some("1") => Ok(true),
        Some(other) => Err(EnvError::Invalid {
            name,
            value: other.to_owned(),
            accepted: "1 (on), empty or unset (off)",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_variable_is_unique_and_described() {
        let mut names: Vec<_> = ENV_VARS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ENV_VARS.len(), "duplicate name in ENV_VARS");
        assert!(
            ENV_VARS
                .iter()
                .all(|d| !d.meaning.is_empty() && !d.meaning.contains('\n'))
        );
    }

    #[test]
    fn flag_is_strict() {
        let on = Env::from_pairs([("X_FLAG_TEST", "1")]);
        assert!(flag(&on, STUDYLOOP_GROK_TRUST_SESSION_DIR).is_ok_and(|v| !v));
        let env = Env::from_pairs([(STUDYLOOP_GROK_TRUST_SESSION_DIR, "1")]);
        assert!(flag(&env, STUDYLOOP_GROK_TRUST_SESSION_DIR).is_ok_and(|v| v));
        let env = Env::from_pairs([(STUDYLOOP_GROK_TRUST_SESSION_DIR, "yes")]);
        let err = flag(&env, STUDYLOOP_GROK_TRUST_SESSION_DIR)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`yes`") && err.contains("1 (on)"), "{err}");
        let env = Env::from_pairs([(STUDYLOOP_GROK_TRUST_SESSION_DIR, "")]);
        assert!(flag(&env, STUDYLOOP_GROK_TRUST_SESSION_DIR).is_ok_and(|v| !v));
    }
}
