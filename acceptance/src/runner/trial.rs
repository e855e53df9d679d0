//! Trial specs, their requirements, and what a trial body reports.

use std::fmt;
use std::path::PathBuf;

use crate::caller_env::CallerEnv;
use crate::evidence::Tier;
use crate::ledger::RunLog;
use crate::scratch::{Env, find_on_path};
use crate::selection::{HarnessName, Selection};

/// Everything a trial body may use.
#[derive(Debug, Clone)]
pub struct TrialContext {
    /// The trial's name.
    pub name: String,
    /// The tier being run.
    pub tier: Tier,
    /// The parsed selection.
    pub selection: Selection,
    /// The real environment the runner started with (never a scratch one).
    pub caller: CallerEnv,
    /// The run directory's logs; bundles go under `run_log.evidence_dir()`.
    pub run_log: RunLog,
}

impl TrialContext {
    /// This context with `budget` for every case it starts: how a UAT cell's
    /// sign-off definition budget wins over `STUDYLOOP_ACC_MAX_*` (the engine's
    /// `Case::new` takes the selection's budget and records its source).
    #[must_use]
    pub fn with_budget(&self, budget: crate::selection::TurnBudget) -> Self {
        let mut ctx = self.clone();
        ctx.selection.budget = budget;
        ctx
    }
}

/// How a trial body ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every check passed.
    Passed,
    /// It found at run time that it cannot run; the reason names what is missing.
    Skipped(String),
    /// A check failed; the message says which and why.
    Failed(String),
}

/// A trial body's result: the verdict and the evidence bundle it wrote, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialReport {
    /// How it ended.
    pub verdict: Verdict,
    /// The bundle directory.
    pub bundle: Option<PathBuf>,
    /// The cell's reply fidelity (`results.jsonl`); `None` when it recorded
    /// no reply.
    pub fidelity: Option<crate::fidelity::CellFidelity>,
}

impl TrialReport {
    /// Passed, no bundle.
    pub fn passed() -> Self {
        Self::from(Verdict::Passed)
    }
    /// Failed with `message`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::from(Verdict::Failed(message.into()))
    }
    /// Skipped at run time for `reason`.
    pub fn skipped(reason: impl Into<String>) -> Self {
        Self::from(Verdict::Skipped(reason.into()))
    }
    /// The same report, recording the bundle it wrote.
    pub fn with_bundle(mut self, bundle: PathBuf) -> Self {
        self.bundle = Some(bundle);
        self
    }
    /// The same report, recording the cell's reply fidelity.
    #[must_use]
    pub fn with_fidelity(mut self, fidelity: Option<crate::fidelity::CellFidelity>) -> Self {
        self.fidelity = fidelity;
        self
    }
}

impl From<Verdict> for TrialReport {
    fn from(verdict: Verdict) -> Self {
        Self {
            verdict,
            bundle: None,
            fidelity: None,
        }
    }
}

pub(crate) type Body = Box<dyn FnOnce(&TrialContext) -> TrialReport + Send + 'static>;

/// One trial: a name, whether the tier gate applies, requirements checked when
/// trials are built, and the body.
pub struct TrialSpec {
    pub(crate) name: String,
    pub(crate) gated: bool,
    pub(crate) requirements: Vec<Requirement>,
    pub(crate) body: Body,
}

impl TrialSpec {
    /// A trial behind the tier's gate (every live trial).
    pub fn gated(
        name: impl Into<String>,
        body: impl FnOnce(&TrialContext) -> TrialReport + Send + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            gated: true,
            requirements: Vec::new(),
            body: Box::new(body),
        }
    }

    /// A trial that runs whatever the gate says: only for `meta::` checks that
    /// validate the catalogue itself and need nothing external.
    pub fn ungated(
        name: impl Into<String>,
        body: impl FnOnce(&TrialContext) -> TrialReport + Send + 'static,
    ) -> Self {
        Self {
            gated: false,
            ..Self::gated(name, body)
        }
    }

    /// Adds a requirement, checked before the trial is built.
    #[must_use]
    pub fn requires(mut self, requirement: Requirement) -> Self {
        self.requirements.push(requirement);
        self
    }

    /// The trial's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The harness the trial drives: the one its `HarnessSelected` requirement
    /// names (the real-auth approval gate and login preflight key on it).
    pub(crate) fn harness(&self) -> Option<HarnessName> {
        self.requirements.iter().find_map(|r| match r {
            Requirement::HarnessSelected(h) => Some(*h),
            _ => None,
        })
    }
}

impl fmt::Debug for TrialSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrialSpec")
            .field("name", &self.name)
            .field("gated", &self.gated)
            .field("requirements", &self.requirements)
            .finish_non_exhaustive()
    }
}

/// Something a trial needs before it can run. `Display` says what is needed;
/// [`Requirement::check`] returns an [`Unmet`] whose `Display` is the skip
/// reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// The harness is in `STUDYLOOP_ACC_HARNESS` (or it is empty).
    HarnessSelected(HarnessName),
    /// `binary` resolves on the `PATH` a scratch child gets.
    BinaryOnScratchPath {
        /// The executable name.
        binary: &'static str,
        /// How to get it, for the skip reason.
        fix: &'static str,
    },
    /// A caller variable is set and non-blank (a credential or a setting).
    EnvVar {
        /// The variable.
        name: &'static str,
        /// Why the trial needs it.
        why: &'static str,
    },
    /// A condition the catalogue decided itself while building the trial, for needs
    /// the variants above cannot express (e.g. "the first of several harnesses that is
    /// selected and installed"); `unmet` is the skip reason, `None` when met.
    Checked {
        /// What is needed, in words.
        what: String,
        /// Why it is not met.
        unmet: Option<String>,
    },
}

/// An unmet requirement; `Display` is the skip reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet(pub String);

impl fmt::Display for Unmet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::HarnessSelected(h) => write!(f, "{h} selected in STUDYLOOP_ACC_HARNESS"),
            Requirement::BinaryOnScratchPath { binary, .. } => {
                write!(f, "{binary} on the scratch PATH")
            }
            Requirement::EnvVar { name, .. } => write!(f, "{name} set"),
            Requirement::Checked { what, .. } => f.write_str(what),
        }
    }
}

impl Requirement {
    /// Checks the requirement against the selection and the caller env.
    pub fn check(&self, selection: &Selection, caller: &CallerEnv) -> Result<(), Unmet> {
        match self {
            Requirement::HarnessSelected(h) if !selection.selects(*h) => Err(Unmet(format!(
                "{h} not selected via STUDYLOOP_ACC_HARNESS (selected: {})",
                selection.harness_list()
            ))),
            Requirement::BinaryOnScratchPath { binary, fix } => {
                let path = Env::scratch_path(caller);
                match find_on_path(&path, binary) {
                    Some(_) => Ok(()),
                    None => Err(Unmet(format!("{binary} not found on PATH ({fix})"))),
                }
            }
            Requirement::EnvVar { name, why }
                if caller.var(name).is_none_or(|v| v.trim().is_empty()) =>
            {
                Err(Unmet(format!("{name} is not set ({why})")))
            }
            Requirement::Checked {
                unmet: Some(reason),
                ..
            } => Err(Unmet(reason.clone())),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(harnesses: &str) -> Selection {
        Selection::from_env(&CallerEnv::from_pairs([(
            "STUDYLOOP_ACC_HARNESS",
            harnesses,
        )]))
        .unwrap()
    }

    #[test]
    fn unmet_requirements_read_as_named_skip_reasons() {
        let caller = CallerEnv::from_pairs([("PATH", "/usr/bin:/bin"), ("BLANK", "  ")]);
        let not_selected =
            Requirement::HarnessSelected(HarnessName::Pi).check(&sel("kiro"), &caller);
        assert_eq!(
            not_selected.unwrap_err().to_string(),
            "pi not selected via STUDYLOOP_ACC_HARNESS (selected: kiro)"
        );
        assert!(
            Requirement::HarnessSelected(HarnessName::Kiro)
                .check(&sel("kiro"), &caller)
                .is_ok()
        );
        let missing = Requirement::BinaryOnScratchPath {
            binary: "studyloop-no-such-binary",
            fix: "build it",
        };
        assert_eq!(
            missing.check(&sel(""), &caller).unwrap_err().to_string(),
            "studyloop-no-such-binary not found on PATH (build it)"
        );
        let sh = Requirement::BinaryOnScratchPath {
            binary: "sh",
            fix: "-",
        };
        assert!(sh.check(&sel(""), &caller).is_ok());
        for name in ["BLANK", "UNSET_HERE"] {
            let key = Requirement::EnvVar {
                name,
                why: "the gateway actor needs it",
            };
            let reason = key.check(&sel(""), &caller).unwrap_err().to_string();
            assert_eq!(
                reason,
                format!("{name} is not set (the gateway actor needs it)")
            );
        }
        assert_eq!(sh.to_string(), "sh on the scratch PATH");
    }
}
