//! What an acceptance or UAT run was asked to do, parsed once from the caller's
//! environment into typed values.
//!
//! Rules (the README's env table says the same):
//! - `STUDYLOOP_ACC` and `STUDYLOOP_UAT` are gates: exactly `1`, untrimmed, opens
//!   one; any other value (including ` 1`) leaves it closed. A closed gate is not
//!   an error.
//! - `STUDYLOOP_ACC_HARNESS` is a comma list: items are trimmed, empty items are
//!   dropped, a repeated name keeps its first position, and empty or unset means
//!   every harness in [`HARNESS_ORDER`]. Names are lowercase and case-sensitive.
//! - `STUDYLOOP_ACC_ACTOR` is trimmed; empty or unset means `scripted`.
//! - `STUDYLOOP_ACC_AUTH_MODE` is trimmed; empty or unset means `stub-provider`;
//!   it accepts `stub-provider` or `scrubbed`.
//! - `STUDYLOOP_ACC_REAL_AUTH` is trimmed; `1` forces real-auth mode whatever
//!   `STUDYLOOP_ACC_AUTH_MODE` says; empty or unset is off; anything else is an
//!   error, so a typo never falls back to a scrubbed run silently.
//!
//! Unknown values are errors naming the value, the accepted set and the fix. This
//! module only parses; the runner decides that selection errors matter only once
//! the gate is open.

use std::fmt;
use std::str::FromStr;

use studyloop_actors::ActorKind;
pub use studyloop_actors::EnvVarDoc;

use crate::caller_env::CallerEnv;

/// Gate of the acceptance tier; must be exactly `1`.
pub const ACC: &str = "STUDYLOOP_ACC";
/// Comma list of harnesses to run.
pub const ACC_HARNESS: &str = "STUDYLOOP_ACC_HARNESS";
/// Which learner backend drives the conversation.
pub const ACC_ACTOR: &str = "STUDYLOOP_ACC_ACTOR";
/// Exactly `1` forces real-auth mode.
pub const ACC_REAL_AUTH: &str = "STUDYLOOP_ACC_REAL_AUTH";
/// `stub-provider` (default) or `scrubbed`.
pub const ACC_AUTH_MODE: &str = "STUDYLOOP_ACC_AUTH_MODE";
/// Where the runner writes the skip ledger, results log and acceptance bundles.
pub const ACC_RESULTS_DIR: &str = "STUDYLOOP_ACC_RESULTS_DIR";
/// The UAT tier's own gate, on top of `STUDYLOOP_ACC`.
pub const UAT: &str = "STUDYLOOP_UAT";
/// Overrides the durable UAT evidence root.
pub const UAT_EVIDENCE_ROOT: &str = "STUDYLOOP_UAT_EVIDENCE_ROOT";

/// Every variable this crate reads; the README's env table lists them with owner
/// `studyloop-acceptance`.
pub const ENV_VARS: &[EnvVarDoc] = &[
    EnvVarDoc {
        name: ACC,
        meaning: "Gate of the acceptance tier: exactly `1` runs the trials; anything else skips every trial, naming this variable",
        default: Some("unset: the tier is off"),
    },
    EnvVarDoc {
        name: ACC_HARNESS,
        meaning: "Comma list of harnesses to run (codex, claude, kiro, pi, opencode, grok); items trimmed, empty items dropped, repeats ignored; an unknown name fails the run",
        default: Some("all six"),
    },
    EnvVarDoc {
        name: ACC_ACTOR,
        meaning: "Which learner backend drives the conversation: scripted, gateway, direct or harness; an unknown name fails the run",
        default: Some("scripted"),
    },
    EnvVarDoc {
        name: ACC_AUTH_MODE,
        meaning: "How a harness reaches a model: stub-provider (a local stub provider) or scrubbed (no credentials at all)",
        default: Some("stub-provider"),
    },
    EnvVarDoc {
        name: ACC_REAL_AUTH,
        meaning: "Exactly `1`: the harness keeps your real HOME and credentials while every StudyLoop pointer stays scratch (may bill); any other non-empty value fails the run",
        default: Some("unset: off"),
    },
    EnvVarDoc {
        name: ACC_RESULTS_DIR,
        meaning: "Run directory for the skip ledger, the results log and acceptance evidence bundles",
        default: Some(
            "`target/studyloop/runs/<run-key>/` (run-key = `NEXTEST_RUN_ID`, else a fresh run id)",
        ),
    },
    EnvVarDoc {
        name: UAT,
        meaning: "Gate of the UAT sign-off tier, needed in addition to STUDYLOOP_ACC=1: exactly `1` runs the journeys",
        default: Some("unset: the tier is off"),
    },
    EnvVarDoc {
        name: UAT_EVIDENCE_ROOT,
        meaning: "Durable root for UAT evidence bundles (never swept); read from the real environment, never a scratch one",
        default: Some("`~/.local/share/studyloop/uat/<run-id>/`"),
    },
];

/// One of the six coding-agent CLIs the product can launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HarnessName {
    /// OpenAI's Codex CLI.
    Codex,
    /// Anthropic's Claude Code.
    Claude,
    /// Amazon's Kiro CLI.
    Kiro,
    /// The pi coding agent.
    Pi,
    /// opencode (preview).
    Opencode,
    /// Grok CLI (preview).
    Grok,
}

/// Whether a harness blocks a release (core) or not (preview).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maturity {
    /// Must pass for a release.
    Core,
    /// Reported, never a release blocker.
    Preview,
}

/// The order the matrix runs in: highest real usage first, then the rest of
/// core, then preview. A literal re-ordering of [`RELEASE_HARNESSES`]; the
/// ungated drift guard keeps the two in step.
pub const HARNESS_ORDER: [HarnessName; 6] = [
    HarnessName::Codex,
    HarnessName::Claude,
    HarnessName::Kiro,
    HarnessName::Pi,
    HarnessName::Opencode,
    HarnessName::Grok,
];

/// The release contract: core kiro, codex, claude, pi; preview opencode, grok.
pub const RELEASE_HARNESSES: [HarnessName; 6] = [
    HarnessName::Kiro,
    HarnessName::Codex,
    HarnessName::Claude,
    HarnessName::Pi,
    HarnessName::Opencode,
    HarnessName::Grok,
];

impl HarnessName {
    /// The name used in `STUDYLOOP_ACC_HARNESS`, trial names and evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            HarnessName::Codex => "codex",
            HarnessName::Claude => "claude",
            HarnessName::Kiro => "kiro",
            HarnessName::Pi => "pi",
            HarnessName::Opencode => "opencode",
            HarnessName::Grok => "grok",
        }
    }

    /// The executable looked up on the scratch env's `PATH`.
    pub fn binary(self) -> &'static str {
        match self {
            HarnessName::Kiro => "kiro-cli",
            other => other.as_str(),
        }
    }

    /// Core or preview.
    pub fn maturity(self) -> Maturity {
        match self {
            HarnessName::Opencode | HarnessName::Grok => Maturity::Preview,
            _ => Maturity::Core,
        }
    }
}

impl fmt::Display for HarnessName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HarnessName {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HARNESS_ORDER
            .into_iter()
            .find(|h| h.as_str() == s)
            .ok_or(())
    }
}

/// How a harness reaches a model in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    /// A local `studyloop-stub-provider` on 127.0.0.1; hermetic and free.
    StubProvider,
    /// No credentials at all (the reference's mode).
    Scrubbed,
    /// The harness keeps the operator's real HOME and credentials.
    RealAuth,
}

impl AuthMode {
    /// The word recorded in evidence manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::StubProvider => "stub-provider",
            AuthMode::Scrubbed => "scrubbed",
            AuthMode::RealAuth => "real-auth",
        }
    }
}

impl fmt::Display for AuthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The two gates, which never fail to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gates {
    /// `STUDYLOOP_ACC` is exactly `1`.
    pub acceptance: bool,
    /// `STUDYLOOP_UAT` is exactly `1`.
    pub uat: bool,
}

impl Gates {
    /// Reads both gates: exactly `1`, no trimming.
    pub fn from_env(env: &CallerEnv) -> Self {
        let open = |name| env.var(name).as_deref() == Some("1");
        Self {
            acceptance: open(ACC),
            uat: open(UAT),
        }
    }
}

/// A parsed, valid selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Selected harnesses, in the operator's order, without repeats.
    pub harnesses: Vec<HarnessName>,
    /// The learner backend.
    pub actor: ActorKind,
    /// How harnesses reach a model.
    pub auth_mode: AuthMode,
}

impl Selection {
    /// Every harness, scripted actor, stub-provider mode: what unset variables mean.
    pub fn defaults() -> Self {
        Self {
            harnesses: HARNESS_ORDER.to_vec(),
            actor: ActorKind::Scripted,
            auth_mode: AuthMode::StubProvider,
        }
    }

    /// Parses every selection variable, reporting every bad one at once.
    pub fn from_env(env: &CallerEnv) -> Result<Self, SelectionErrors> {
        let mut errors = Vec::new();
        let harnesses = parse_harnesses(env.var(ACC_HARNESS).as_deref()).unwrap_or_else(|e| {
            errors.push(e);
            Vec::new()
        });
        let actor = parse_actor(env.var(ACC_ACTOR).as_deref()).unwrap_or_else(|e| {
            errors.push(e);
            ActorKind::Scripted
        });
        let auth_mode = parse_auth_mode(
            env.var(ACC_AUTH_MODE).as_deref(),
            env.var(ACC_REAL_AUTH).as_deref(),
        )
        .unwrap_or_else(|e| {
            errors.push(e);
            AuthMode::StubProvider
        });
        if errors.is_empty() {
            Ok(Self {
                harnesses,
                actor,
                auth_mode,
            })
        } else {
            Err(SelectionErrors(errors))
        }
    }

    /// Whether `harness` is selected.
    pub fn selects(&self, harness: HarnessName) -> bool {
        self.harnesses.contains(&harness)
    }

    /// The selected harnesses as `a, b, c`, for skip reasons.
    pub fn harness_list(&self) -> String {
        join(self.harnesses.iter().map(|h| h.as_str()))
    }
}

/// One selection variable with a value outside its accepted set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// `STUDYLOOP_ACC_HARNESS` named harnesses that do not exist.
    #[error(
        "unknown harness {} in {ACC_HARNESS}; known: {} (fix: set a comma list of known names, or leave it empty for all six)",
        quoted(.unknown), known_harnesses()
    )]
    UnknownHarness {
        /// Every unknown item, trimmed, in the order given.
        unknown: Vec<String>,
    },
    /// `STUDYLOOP_ACC_ACTOR` is not a known backend.
    #[error(
        "unknown actor `{value}` in {ACC_ACTOR}; known: {} (fix: use one of them, or leave it empty for scripted)",
        known_actors()
    )]
    UnknownActor {
        /// The trimmed value.
        value: String,
    },
    /// `STUDYLOOP_ACC_AUTH_MODE` is not a known mode.
    #[error(
        "unknown auth mode `{value}` in {ACC_AUTH_MODE}; known: stub-provider, scrubbed (fix: use one of them; for real credentials set {ACC_REAL_AUTH}=1 instead)"
    )]
    UnknownAuthMode {
        /// The trimmed value.
        value: String,
    },
    /// `STUDYLOOP_ACC_REAL_AUTH` is set to something other than `1`.
    #[error(
        "invalid {ACC_REAL_AUTH} value `{value}`; accepted: 1 or unset (fix: set it to 1 for real-auth mode, or unset it for a scratch run)"
    )]
    InvalidRealAuth {
        /// The trimmed value.
        value: String,
    },
}

/// Every selection error of one run, one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectionErrors(pub Vec<SelectionError>);

impl fmt::Display for SelectionErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SelectionErrors {}

fn parse_harnesses(raw: Option<&str>) -> Result<Vec<HarnessName>, SelectionError> {
    let mut selected = Vec::new();
    let mut unknown = Vec::new();
    for item in raw.unwrap_or("").split(',').map(str::trim) {
        if item.is_empty() {
            continue;
        }
        match item.parse::<HarnessName>() {
            Ok(h) if !selected.contains(&h) => selected.push(h),
            Ok(_) => {}
            Err(()) if !unknown.iter().any(|u| u == item) => unknown.push(item.to_owned()),
            Err(()) => {}
        }
    }
    if !unknown.is_empty() {
        return Err(SelectionError::UnknownHarness { unknown });
    }
    if selected.is_empty() {
        selected = HARNESS_ORDER.to_vec();
    }
    Ok(selected)
}

fn parse_actor(raw: Option<&str>) -> Result<ActorKind, SelectionError> {
    let value = raw.unwrap_or("").trim();
    if value.is_empty() {
        return Ok(ActorKind::Scripted);
    }
    value
        .parse::<ActorKind>()
        .map_err(|_| SelectionError::UnknownActor {
            value: value.to_owned(),
        })
}

fn parse_auth_mode(mode: Option<&str>, real: Option<&str>) -> Result<AuthMode, SelectionError> {
    match real.unwrap_or("").trim() {
        "" => {}
        "1" => return Ok(AuthMode::RealAuth),
        other => {
            return Err(SelectionError::InvalidRealAuth {
                value: other.to_owned(),
            });
        }
    }
    match mode.unwrap_or("").trim() {
        "" | "stub-provider" => Ok(AuthMode::StubProvider),
        "scrubbed" => Ok(AuthMode::Scrubbed),
        other => Err(SelectionError::UnknownAuthMode {
            value: other.to_owned(),
        }),
    }
}

fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn known_harnesses() -> String {
    join(HARNESS_ORDER.iter().map(|h| h.as_str()))
}

fn known_actors() -> String {
    join(ActorKind::ALL.iter().map(|a| a.as_str()))
}

#[cfg(test)]
#[path = "selection_tests.rs"]
mod tests;
