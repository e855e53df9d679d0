//! Rows to change (issue 32 item 1): for a step or check a trial's bundle
//! records, which adapter fact it proves and so which row of the harness table
//! (`table.rs`) and of the product's tables must change when a harness
//! upgrade breaks it. `studyloop-uat report --compare` (`just drift`) ends with
//! these rows for each broken step.
//!
//! One table, [`RULES`], by step or check name (`*` stands for a formatted
//! part, e.g. `turn * fidelity at its floor`). A unit test reads every name
//! this crate's case engine can record from its sources and fails on one
//! without a rule, so a new step is mapped (or marked as no adapter fact) when
//! it is written, not when an upgrade breaks it.

use serde::Serialize;

use crate::selection::HarnessName;

/// The adapter fact a step or check proves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterFact {
    /// The binary is found and its `--version` line parses.
    VersionParse,
    /// The offline stub-provider config the harness is given.
    StubConfig,
    /// The authenticated one-shot probe.
    AuthProbe,
    /// The ready marker (the TUI accepts input).
    ReadyMarker,
    /// A turn's reply: the idle/busy markers and the turn limit.
    TurnMarkers,
    /// How a multi-line turn is pasted.
    PasteMode,
    /// Where and in what schema the session store is written.
    SessionStore,
    /// Resume with history.
    Resume,
    /// The keys that leave the TUI.
    ExitKeys,
    /// Where the MCP server is registered and that it is called.
    McpConfig,
    /// The ACP adapter: `initialize`, `session/new`, prompts.
    AcpInitialize,
    /// Where the persona is placed.
    PersonaPlacement,
    /// A product or harness-independent step: no adapter row.
    NotAnAdapterFact,
}

impl AdapterFact {
    /// The words shown in the report.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::VersionParse => "binary and version string",
            Self::StubConfig => "offline stub-provider config",
            Self::AuthProbe => "authenticated probe",
            Self::ReadyMarker => "ready marker",
            Self::TurnMarkers => "turn reply (idle/busy markers, turn limit)",
            Self::PasteMode => "paste mode",
            Self::SessionStore => "session store (transcript source)",
            Self::Resume => "resume",
            Self::ExitKeys => "exit keys",
            Self::McpConfig => "MCP config location",
            Self::AcpInitialize => "ACP adapter (initialize, session/new, prompt)",
            Self::PersonaPlacement => "persona placement",
            Self::NotAnAdapterFact => "not an adapter fact",
        }
    }

    /// The harness-table entry (file and field) for `h`; `None` when the fact
    /// has none.
    #[must_use]
    pub fn spec_row(self, h: &str) -> Option<String> {
        const T: &str = "acceptance/src/harness_spec/table.rs";
        let field = match self {
            Self::VersionParse => "install (the pinned version; harnesses/package.json)",
            Self::StubConfig => {
                return Some(format!(
                    "acceptance/src/harness_spec/stub_config.rs: {h} (SPECS[{h}].stub_config)"
                ));
            }
            Self::AuthProbe => "probe",
            Self::ReadyMarker => "markers.ready, ready_timeout",
            Self::TurnMarkers => "markers.idle, markers.busy, turn_timeout",
            Self::PasteMode => "paste",
            Self::SessionStore => "reply_source (reader: acceptance/src/transcript/store.rs)",
            Self::Resume => "resume",
            Self::ExitKeys => "exit_keys",
            Self::McpConfig => "mcp",
            Self::AcpInitialize => "acp (argv, adapter)",
            Self::PersonaPlacement | Self::NotAnAdapterFact => return None,
        };
        Some(format!("{T}: SPECS[{h}].{field}"))
    }

    /// The product's row (file and field) for `h`; `None` when the product has
    /// no row for the fact (it does not drive turns, pastes or read stores).
    #[must_use]
    pub fn product_row(self, h: &str) -> Option<String> {
        const A: &str = "product/studyloop/src/adapters/table.rs";
        Some(match self {
            Self::VersionParse => format!("{A}: ADAPTERS[{h}].binaries"),
            Self::ReadyMarker => format!("{A}: ADAPTERS[{h}].fresh"),
            Self::Resume => format!("{A}: ADAPTERS[{h}].resume"),
            Self::PersonaPlacement => format!("{A}: ADAPTERS[{h}].placement"),
            Self::McpConfig => {
                format!("product/studyloop/src/mcp_registration/harness.rs: {h}")
            }
            Self::AcpInitialize => {
                format!("product/studyloop/src/web/agents.rs: the {h} ACP argv")
            }
            Self::StubConfig
            | Self::AuthProbe
            | Self::TurnMarkers
            | Self::PasteMode
            | Self::SessionStore
            | Self::ExitKeys
            | Self::NotAnAdapterFact => return None,
        })
    }
}

/// One rule: a step or check name (`*` = any text) and its fact; `over_acp`
/// replaces it in an ACP trial (`web-acp…`, `…::acp`), where a turn is an ACP
/// prompt, not a pane turn.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The name, `*` standing for a formatted part.
    pub name: &'static str,
    /// What it proves.
    pub fact: AdapterFact,
    /// What it proves in an ACP trial, when that differs.
    pub over_acp: Option<AdapterFact>,
}

const fn r(name: &'static str, fact: AdapterFact) -> Rule {
    Rule {
        name,
        fact,
        over_acp: None,
    }
}

const fn acp(name: &'static str, fact: AdapterFact) -> Rule {
    Rule {
        name,
        fact,
        over_acp: Some(AdapterFact::AcpInitialize),
    }
}

use AdapterFact::{
    AcpInitialize, AuthProbe, ExitKeys, McpConfig, NotAnAdapterFact, PasteMode, PersonaPlacement,
    ReadyMarker, Resume, SessionStore, StubConfig, TurnMarkers, VersionParse,
};

/// Every step and check name the case engine records, and its fact. The
/// first matching rule wins.
pub const RULES: &[Rule] = &[
    // The binary and its version line.
    r("harness binary and version", VersionParse),
    r("harness binary on the scratch PATH", VersionParse),
    r("--version prints a version", VersionParse),
    // Provisioning and the probe.
    r("provision harness for the auth mode", StubConfig),
    r("provision harness (no probe)", StubConfig),
    r(
        "no package-registry fetch from the scratch HOME (hermetic)",
        StubConfig,
    ),
    r("authenticated probe (one-shot prompt)", AuthProbe),
    r(
        "authenticated probe through pi, LiteLLM and the model",
        AuthProbe,
    ),
    r("a wrong key is the probe's not-logged-in skip", AuthProbe),
    // The pane: ready, turns, paste, exit.
    r("harness ready", ReadyMarker),
    r("live main pane", ReadyMarker),
    r("the live main pane", ReadyMarker),
    r("turn 1", TurnMarkers),
    acp("conversation", TurnMarkers),
    r("wind-down turn", TurnMarkers),
    r("turn * fidelity at its floor", SessionStore),
    r("type the multi-line turn and get its reply", PasteMode),
    r("the turn arrived as text, not as tmux commands", PasteMode),
    r("no tmux command ran (marker file absent)", PasteMode),
    r("tmux server and control client still live", PasteMode),
    r("stub log: the learner message arrived whole", PasteMode),
    r("exit the resumed harness", ExitKeys),
    r("study --end (harness live)", ExitKeys),
    // Resume.
    r("study --resume", Resume),
    r("study --resume (the next day)", Resume),
    r("resumed session state", Resume),
    r("resumed live main pane", Resume),
    r("resumed harness ready", Resume),
    r("one more turn after resume", Resume),
    r("stub log: the resumed turn carries the history", Resume),
    r(
        "the first turn after the resume: the mentor's review",
        Resume,
    ),
    r("the review recalls the struggle", Resume),
    // MCP.
    r("tool script", McpConfig),
    r("the turn that makes the model call log_topic", McpConfig),
    r("log_topic went over MCP into the product", McpConfig),
    r("stub log: the call and its unrefused result", McpConfig),
    r("db: study_progress row for the topic", McpConfig),
    r("the session's topic feed", McpConfig),
    r("the mentor logged through studyloop-mcp", McpConfig),
    // ACP.
    r("POST /api/session/start (acp)", AcpInitialize),
    r("attach the session socket", AcpInitialize),
    r("persona as the first prompt", AcpInitialize),
    r("persona turn proven (stub turn 0)", AcpInitialize),
    r("turns proven by the stub nonce", AcpInitialize),
    r("the session over the socket", AcpInitialize),
    r("stop the session socket", AcpInitialize),
    r("stop frame ended the session", AcpInitialize),
    r("the next session frame", AcpInitialize),
    r("conversation through the console", AcpInitialize),
    r(
        "every reply shown in the console carries its stub nonce",
        AcpInitialize,
    ),
    r(
        "start from the Dashboard; the console sends the persona",
        AcpInitialize,
    ),
    // The persona.
    r(
        "stub log: persona and history length per turn",
        PersonaPlacement,
    ),
    r("db: study_sessions row with persona_hash", PersonaPlacement),
    r("the first session's record", PersonaPlacement),
    r("the session's record", PersonaPlacement),
    // The product and the world around the harness: no adapter row.
    r("scratch world", NotAnAdapterFact),
    r("real-auth scratch world for the owner", NotAnAdapterFact),
    r("a model behind the real LiteLLM proxy", NotAnAdapterFact),
    r(
        "pi's real configuration in the owner's HOME",
        NotAnAdapterFact,
    ),
    r(
        "preflight: the unset key is a named skip, the set key is found",
        NotAnAdapterFact,
    ),
    r(
        "the key reached no child without a use for it",
        NotAnAdapterFact,
    ),
    r("study start", NotAnAdapterFact),
    r("session state", NotAnAdapterFact),
    r("the session state", NotAnAdapterFact),
    r("study --end", NotAnAdapterFact),
    r("study --end after resume", NotAnAdapterFact),
    r("STUDYLOOP_NOW: the next day", NotAnAdapterFact),
    r("the first day's ended_at", NotAnAdapterFact),
    r("studyloop search finds the struggle", NotAnAdapterFact),
    r("doctor --json (read-only)", NotAnAdapterFact),
    r("studyloop web", NotAnAdapterFact),
    r("GET /api/session/state", NotAnAdapterFact),
    r("state: the session ended", NotAnAdapterFact),
    r("end from the console", NotAnAdapterFact),
    r("launch headless Chromium", NotAnAdapterFact),
    r("goto *", NotAnAdapterFact),
    r("click *", NotAnAdapterFact),
    r("fill *", NotAnAdapterFact),
    r("wait for *", NotAnAdapterFact),
    r("resize to *x*", NotAnAdapterFact),
    r("execute script", NotAnAdapterFact),
    r("snapshot", NotAnAdapterFact),
    r("the page to show *", NotAnAdapterFact),
    r("module new my-drills", NotAnAdapterFact),
    r("module add my-drills", NotAnAdapterFact),
    r("drill check, yes typed on a terminal", NotAnAdapterFact),
    r("CLI: check: passed (exit 0)", NotAnAdapterFact),
    r("CLI: Mentor told.", NotAnAdapterFact),
    r("the practice_check block", NotAnAdapterFact),
    r("the block reaches the model (stub log)", NotAnAdapterFact),
    r(
        "the check's result reached the live mentor, bounded and labelled",
        NotAnAdapterFact,
    ),
    r("stub log: labelled as data and closed", NotAnAdapterFact),
    r("stub log: at most 8 KiB", NotAnAdapterFact),
    r(
        "stub log: every output line prefixed `| `",
        NotAnAdapterFact,
    ),
    r("stub log: the drill and its result", NotAnAdapterFact),
    r("finish", NotAnAdapterFact),
    r("the scratch sweep succeeded", NotAnAdapterFact),
    r("no scratch tree left", NotAnAdapterFact),
    r(
        "no process left (tmux server, harness, stub, product)",
        NotAnAdapterFact,
    ),
    r(
        "grok's real trusted_folders.toml keeps no entry of this world (seed 003)",
        NotAnAdapterFact,
    ),
    r("the product server exited 0 on SIGTERM", NotAnAdapterFact),
];

/// The rows to change for one broken step or check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowsToChange {
    /// The step or check name as recorded.
    pub name: String,
    /// The fact it proves; `None` when no rule names it (shown as such).
    pub fact: Option<AdapterFact>,
    /// The harness-table entry; `None` when the fact has none or is unknown.
    pub harness_spec: Option<String>,
    /// The product's row; `None` when the product has none or it is unknown.
    pub product: Option<String>,
}

/// Whether `trial` drives its harness over ACP.
fn is_acp_trial(trial: &str) -> bool {
    trial.starts_with("web-acp") || trial.ends_with("::acp")
}

/// `name` against a rule's pattern: `*` matches any text (also none).
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The rule for `name`, if any.
#[must_use]
pub fn rule(name: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| matches(r.name, name))
}

/// The rows to change when `name` broke in `trial` of `harness` (a harness
/// this crate does not name gets the fact but no rows: it has none).
#[must_use]
pub fn rows_to_change(harness: &str, trial: &str, name: &str) -> RowsToChange {
    let fact = rule(name).map(|r| match r.over_acp {
        Some(f) if is_acp_trial(trial) => f,
        _ => r.fact,
    });
    let known = harness.parse::<HarnessName>().ok().map(HarnessName::as_str);
    RowsToChange {
        name: name.to_owned(),
        fact,
        harness_spec: fact.zip(known).and_then(|(f, h)| f.spec_row(h)),
        product: fact.zip(known).and_then(|(f, h)| f.product_row(h)),
    }
}

#[cfg(test)]
#[path = "drift_rows_tests.rs"]
mod tests;
