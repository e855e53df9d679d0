//! The real-auth credential preflight (`studyloop-uat certify`): what each harness needs to
//! reach its vendor with the operator's own login, checked from the real HOME and
//! environment BEFORE anything launches. Nothing here starts a process; it stats the
//! harness binary on the scratch PATH, reads the auth files (`credential_files`) and
//! looks at which key variables are set. Values are never copied into the result:
//! it names files and variables only, so it can be printed and recorded.
//!
//! A harness is ready when its binary is on PATH and at least one credential source
//! is usable; otherwise the result is a named skip listing exactly what is missing
//! and how to fix it. The authenticated probe stays the authority on whether the
//! vendor accepts the credential (a refused one is its own "not logged in" skip).

use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;

use super::credential_files::{self, CredentialFinding, Format};
use super::{install_hint, login_hint};
use crate::caller_env::CallerEnv;
use crate::scratch::{Env, find_on_path};
use crate::selection::HarnessName;

/// Where an auth file lives: `$VAR/<name>` when the harness honours an override
/// variable and it is set, else `~/<default_dir>/<name>`.
#[derive(Debug, Clone, Copy)]
struct AuthFile {
    var: Option<&'static str>,
    default_dir: &'static str,
    name: &'static str,
    format: Format,
}

/// What real-auth needs for one harness.
struct Needs {
    /// Any one of these, set and non-empty, is a key the harness reads.
    keys: &'static [&'static str],
    /// Auth files, any one usable suffices.
    files: &'static [AuthFile],
}

const fn file(
    var: Option<&'static str>,
    dir: &'static str,
    name: &'static str,
    format: Format,
) -> AuthFile {
    AuthFile {
        var,
        default_dir: dir,
        name,
        format,
    }
}

/// Provider keys pi and opencode read from the environment (their built-in providers).
const PROVIDER_KEYS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
];

const CODEX_FILES: &[AuthFile] = &[file(
    Some("CODEX_HOME"),
    ".codex",
    "auth.json",
    Format::CodexAuth,
)];
const CLAUDE_FILES: &[AuthFile] = &[file(
    Some("CLAUDE_CONFIG_DIR"),
    ".claude",
    ".credentials.json",
    Format::ClaudeCredentials,
)];
const PI_FILES: &[AuthFile] = &[
    file(
        Some("PI_CODING_AGENT_DIR"),
        ".pi/agent",
        "auth.json",
        Format::ProviderMap,
    ),
    file(
        Some("PI_CODING_AGENT_DIR"),
        ".pi/agent",
        "models.json",
        Format::PiModels,
    ),
];
const OPENCODE_FILES: &[AuthFile] = &[file(
    Some("XDG_DATA_HOME"),
    ".local/share",
    "opencode/auth.json",
    Format::ProviderMap,
)];
const GROK_FILES: &[AuthFile] = &[file(
    None,
    ".grok",
    "user-settings.json",
    Format::GrokSettings,
)];

fn needs(h: HarnessName) -> Needs {
    match h {
        HarnessName::Codex => Needs {
            keys: &["OPENAI_API_KEY", "CODEX_API_KEY"],
            files: CODEX_FILES,
        },
        HarnessName::Claude => Needs {
            keys: &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
            ],
            files: CLAUDE_FILES,
        },
        // kiro keeps its login in its own store, which only `kiro-cli whoami` (its
        // probe) reads: the preflight can check the binary, nothing more.
        HarnessName::Kiro => Needs {
            keys: &[],
            files: &[],
        },
        HarnessName::Pi => Needs {
            keys: PROVIDER_KEYS,
            files: PI_FILES,
        },
        HarnessName::Opencode => Needs {
            keys: PROVIDER_KEYS,
            files: OPENCODE_FILES,
        },
        HarnessName::Grok => Needs {
            keys: &["GROK_API_KEY"],
            files: GROK_FILES,
        },
    }
}

/// The preflight's finding for one harness: sources found and what is missing,
/// by file path and variable name only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialCheck {
    /// The harness.
    pub harness: HarnessName,
    /// Its binary on the scratch PATH, when there.
    pub binary: Option<PathBuf>,
    /// Usable credential sources (`~/.codex/auth.json: a ChatGPT login (…)`, `$OPENAI_API_KEY`).
    pub found: Vec<String>,
    /// What was looked for and not usable (`~/.codex/auth.json absent`, `OPENAI_API_KEY unset`).
    pub missing: Vec<String>,
}

impl CredentialCheck {
    /// Ready for a real-auth run: the binary is there and a credential is usable.
    pub fn ready(&self) -> bool {
        self.binary.is_some() && !self.found.is_empty()
    }

    /// The named skip when not ready: the harness, what is missing, and the fix.
    pub fn skip_reason(&self) -> Option<String> {
        if self.ready() {
            return None;
        }
        let h = self.harness;
        if self.binary.is_none() {
            return Some(format!(
                "{h}: not installed: `{}` is not on PATH; {}",
                h.binary(),
                install_hint(h)
            ));
        }
        Some(format!(
            "{h}: not logged in: {}; {}",
            self.missing.join(" and "),
            login_hint(h)
        ))
    }
}

/// Checks what `harness` needs for real-auth in `caller`'s HOME and environment
/// (expiry against `now_ms`, Unix ms). Starts no process.
pub fn check(harness: HarnessName, caller: &CallerEnv, now_ms: i64) -> CredentialCheck {
    let binary = find_on_path(&Env::scratch_path(caller), harness.binary());
    let needs = needs(harness);
    let mut found = Vec::new();
    let mut missing = Vec::new();
    let home = caller
        .var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    for f in needs.files {
        let Some((path, shown)) = locate(f, caller, home.as_deref()) else {
            missing.push(format!("~/{}/{} (HOME is unset)", f.default_dir, f.name));
            continue;
        };
        match credential_files::judge(&path, f.format, caller, now_ms) {
            CredentialFinding::Usable(what) => found.push(format!("{shown}: {what}")),
            CredentialFinding::Absent => missing.push(format!("{shown} absent")),
            CredentialFinding::Unusable(why) => missing.push(format!("{shown} unusable: {why}")),
        }
    }
    let (set, unset): (Vec<&str>, Vec<&str>) = needs
        .keys
        .iter()
        // A blank value is no key.
        .partition(|k| {
            caller
                .var_os(k)
                .is_some_and(|v| !v.as_bytes().trim_ascii().is_empty())
        });
    found.extend(set.iter().map(|k| format!("${k}")));
    if set.is_empty() && !unset.is_empty() {
        missing.push(format!("{} unset", unset.join(", ")));
    }
    if needs.keys.is_empty() && needs.files.is_empty() {
        found.push(format!(
            "its login lives in {}'s own store, which only the probe reads",
            harness.binary()
        ));
    }
    CredentialCheck {
        harness,
        binary,
        found,
        missing,
    }
}

/// Where `f` is and how to show it: under its override variable when that is set
/// (`$CODEX_HOME/auth.json`), else under HOME (`~/.codex/auth.json`); `None` without
/// either.
fn locate(
    f: &AuthFile,
    caller: &CallerEnv,
    home: Option<&std::path::Path>,
) -> Option<(PathBuf, String)> {
    let overridden = f
        .var
        .and_then(|var| Some((var, caller.var_os(var).filter(|dir| !dir.is_empty())?)));
    match overridden {
        Some((var, dir)) => Some((
            PathBuf::from(dir).join(f.name),
            format!("${var}/{}", f.name),
        )),
        None => Some((
            home?.join(f.default_dir).join(f.name),
            format!("~/{}/{}", f.default_dir, f.name),
        )),
    }
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
