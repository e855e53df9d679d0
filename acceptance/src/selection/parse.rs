//! Parsing the selection from a caller env (the gates are `crate::gate`).

use std::fmt;

use studyloop_actors::ActorKind;
use studyloop_actors::llm::cassette::CassetteSetting;

use crate::approval::{ApprovalErrors, Approvals};
use crate::caller_env::CallerEnv;
use crate::selection::budget::{self, BudgetVarError, TurnBudget};
use crate::selection::names::{AuthMode, HARNESS_ORDER, HarnessName};
use crate::selection::vars::{
    ACC_ACTOR, ACC_AUTH_MODE, ACC_HARNESS, ACC_MAX_OUTPUT_TOKENS, ACC_MAX_TURNS, ACC_REAL_AUTH,
    ACC_REPEAT, ACC_STUB_FAULT,
};

/// A parsed, valid selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Selected harnesses, in the operator's order, without repeats.
    pub harnesses: Vec<HarnessName>,
    /// The learner backend.
    pub actor: ActorKind,
    /// How harnesses reach a model.
    pub auth_mode: AuthMode,
    /// Learner turns and output-token cap of every live conversation.
    pub budget: TurnBudget,
    /// Attempts per selected trial (`STUDYLOOP_ACC_REPEAT`), from 1.
    pub repeat: u32,
    /// Record or replay of model traffic (`STUDYLOOP_ACC_CASSETTE`); `None` = off.
    pub cassette: Option<CassetteSetting>,
    /// The fault-file line every cell's stub answers model requests with
    /// (`STUDYLOOP_ACC_STUB_FAULT`), validated by the stub's own parser.
    pub(crate) stub_fault: Option<String>,
    /// The operator's standing approvals (`STUDYLOOP_ACC_APPROVE`), asked through
    /// [`crate::approval::decide`] before anything billed launches.
    pub approvals: Approvals,
}

/// What `STUDYLOOP_ACC_REPEAT` accepts: one attempt up to a number a machine
/// can still run in an evening (a larger one is a typo).
pub const REPEAT_RANGE: std::ops::RangeInclusive<u32> = 1..=20;

impl Selection {
    /// Every harness, scripted actor, stub-provider mode: what unset variables mean.
    pub fn defaults() -> Self {
        Self {
            harnesses: HARNESS_ORDER.to_vec(),
            actor: ActorKind::Scripted,
            auth_mode: AuthMode::StubProvider,
            budget: TurnBudget::default(),
            repeat: 1,
            cassette: None,
            stub_fault: None,
            approvals: Approvals::default(),
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
        let (budget, budget_errors) = budget::parse(
            env.var(ACC_MAX_TURNS).as_deref(),
            env.var(ACC_MAX_OUTPUT_TOKENS).as_deref(),
        );
        errors.extend(budget_errors.into_iter().map(SelectionError::Budget));
        let repeat = budget::number(
            env.var(ACC_REPEAT).as_deref(),
            u64::from(*REPEAT_RANGE.start()),
            u64::from(*REPEAT_RANGE.end()),
        )
        .map(|n| n.and_then(|n| u32::try_from(n).ok()).unwrap_or(1))
        .unwrap_or_else(|value| {
            errors.push(SelectionError::InvalidRepeat { value });
            1
        });
        let cassette = CassetteSetting::from_env(env).unwrap_or_else(|e| {
            errors.push(SelectionError::Cassette {
                message: e.to_string(),
            });
            None
        });
        let stub_fault = parse_stub_fault(env.var(ACC_STUB_FAULT).as_deref()).unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        let approvals = Approvals::from_env(env).unwrap_or_else(|e| {
            errors.push(SelectionError::Approval(e));
            Approvals::default()
        });
        // Only a stub can be told to fail: elsewhere the knob would do nothing, silently.
        if let Some(value) = &stub_fault
            && !auth_mode.stub_mentor()
        {
            errors.push(SelectionError::StubFaultWithoutStub {
                value: value.clone(),
                mode: auth_mode,
            });
        }
        if errors.is_empty() {
            Ok(Self {
                harnesses,
                actor,
                auth_mode,
                budget,
                repeat,
                cassette,
                stub_fault,
                approvals,
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
        "unknown auth mode `{value}` in {ACC_AUTH_MODE}; known: {} (fix: use one of them; for real credentials set {ACC_REAL_AUTH}=1 instead)",
        known_auth_modes()
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
    /// `STUDYLOOP_ACC_REPEAT` is not a whole number in range.
    #[error(
        "invalid {ACC_REPEAT} value `{value}`; accepted: a whole number from {} to {} (fix: set e.g. {ACC_REPEAT}=3, or unset it for one attempt)",
        REPEAT_RANGE.start(), REPEAT_RANGE.end()
    )]
    InvalidRepeat {
        /// The trimmed value.
        value: String,
    },
    /// `STUDYLOOP_ACC_STUB_FAULT` is not a stub fault line.
    #[error(
        "invalid {ACC_STUB_FAULT} value `{value}`: {detail} (fix: set e.g. {ACC_STUB_FAULT}=401, or unset it for healthy stubs)"
    )]
    InvalidStubFault {
        /// The trimmed value (at most 80 characters).
        value: String,
        /// The stub parser's reason, naming the accepted forms.
        detail: String,
    },
    /// `STUDYLOOP_ACC_STUB_FAULT` is set in a mode without a stub provider.
    #[error(
        "{ACC_STUB_FAULT}={value} needs the stub provider, but the auth mode is {mode} (fix: unset {ACC_STUB_FAULT}, or run with {ACC_AUTH_MODE}=stub-provider or local-model)"
    )]
    StubFaultWithoutStub {
        /// The fault line.
        value: String,
        /// The selected mode.
        mode: AuthMode,
    },
    /// `STUDYLOOP_ACC_APPROVE` holds malformed or unknown entries (each named, with
    /// the accepted forms).
    #[error("{0}")]
    Approval(ApprovalErrors),
    /// `STUDYLOOP_ACC_MAX_TURNS` or `STUDYLOOP_ACC_MAX_OUTPUT_TOKENS` is out of range.
    #[error(transparent)]
    Budget(#[from] BudgetVarError),
    /// `STUDYLOOP_ACC_CASSETTE` or `STUDYLOOP_ACC_CASSETTE_FILE` is invalid (the
    /// actors' [`CassetteError`](studyloop_actors::llm::cassette::CassetteError)'s
    /// message: the value, the accepted set, the fix).
    #[error("{message}")]
    Cassette {
        /// The message.
        message: String,
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

/// One stub fault-file line, or `None` when unset or blank.
fn parse_stub_fault(raw: Option<&str>) -> Result<Option<String>, SelectionError> {
    let value = raw.unwrap_or("").trim();
    if value.is_empty() {
        return Ok(None);
    }
    studyloop_stubs::provider::Faults::from_line(value)
        .map(|_| Some(value.to_owned()))
        .map_err(|detail| SelectionError::InvalidStubFault {
            value: value.chars().take(80).collect(),
            detail,
        })
}

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
        "" => Ok(AuthMode::StubProvider),
        word => AuthMode::SELECTABLE
            .into_iter()
            .find(|m| m.as_str() == word)
            .ok_or_else(|| SelectionError::UnknownAuthMode {
                value: word.to_owned(),
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

fn known_auth_modes() -> String {
    join(AuthMode::SELECTABLE.iter().map(|m| m.as_str()))
}

fn known_actors() -> String {
    join(ActorKind::ALL.iter().map(|a| a.as_str()))
}
