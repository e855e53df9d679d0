//! Harness names, the run order and release contract, and auth modes.

use std::fmt;
use std::str::FromStr;

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
    /// The harness's mentor model is the stub provider (as in `StubProvider`), while
    /// the learner and the judges are a real local model (SmolLM2 served by llama.cpp)
    /// behind the LiteLLM proxy (`just deps-model`; `actors/local-model/run.sh` sets
    /// the gateway variables). Real model text on every grading path, offline; never
    /// real-auth, so the sign-off still refuses it.
    LocalModel,
}

impl AuthMode {
    /// The word recorded in evidence manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::StubProvider => "stub-provider",
            AuthMode::Scrubbed => "scrubbed",
            AuthMode::RealAuth => "real-auth",
            AuthMode::LocalModel => "local-model",
        }
    }

    /// The modes `STUDYLOOP_ACC_AUTH_MODE` accepts (real-auth has its own switch).
    pub(crate) const SELECTABLE: [AuthMode; 3] = [
        AuthMode::StubProvider,
        AuthMode::Scrubbed,
        AuthMode::LocalModel,
    ];

    /// Whether the harness's own model is the case's stub provider (its offline
    /// config is provisioned into the scratch HOME).
    pub fn stub_mentor(self) -> bool {
        matches!(self, AuthMode::StubProvider | AuthMode::LocalModel)
    }
}

impl fmt::Display for AuthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
