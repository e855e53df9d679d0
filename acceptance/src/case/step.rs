//! The one step schema: a case is a list of named steps; a step runs, and a
//! check step runs every one of its checks and reports every failure (as
//! terraform's aggregate check function does), so one run names all that is
//! wrong, not only the first. Each step leaves a [`StepRecord`] with its
//! timing and every check outcome.
//!
//! A step that starts after a Ctrl-C, or fails because of one, ends the case
//! as `cancelled` (the interrupt handler, `crate::interrupt`).

use std::time::Instant;

use serde_json::Value;

use super::StepFailure;
use super::record::{CaseRecord, CheckRecord, StepRecord};
use crate::evidence::Outcome;

/// One check: a name and the closure that verifies it.
type CheckFn<'c, S> = Box<dyn FnOnce(&mut S) -> Result<(), String> + 'c>;

/// The checks of one check step, run in order, all of them.
pub struct Checks<'c, S: ?Sized> {
    items: Vec<(String, CheckFn<'c, S>)>,
}

impl<S: ?Sized> Default for Checks<'_, S> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

impl<'c, S: ?Sized> Checks<'c, S> {
    /// No checks yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the check `name`; its error (any typed error) is kept as its message.
    #[must_use]
    pub fn check<E: std::fmt::Display>(
        mut self,
        name: impl Into<String>,
        f: impl FnOnce(&mut S) -> Result<(), E> + 'c,
    ) -> Self {
        self.items.push((
            name.into(),
            Box::new(move |s| f(s).map_err(|e| e.to_string())),
        ));
        self
    }

    /// Adds the check `name` only when `when` holds.
    #[must_use]
    pub(crate) fn check_if<E: std::fmt::Display>(
        self,
        when: bool,
        name: impl Into<String>,
        f: impl FnOnce(&mut S) -> Result<(), E> + 'c,
    ) -> Self {
        if when { self.check(name, f) } else { self }
    }
}

/// Anything that runs steps into a [`CaseRecord`]: a live `Case`, or a bare
/// `CaseRecord` (tests, and bookkeeping without resources).
pub trait Steps {
    /// Where the steps are recorded.
    fn record_mut(&mut self) -> &mut CaseRecord;

    /// Runs the step `name`, recording it; a failure ends the case with its
    /// outcome, its message prefixed with the step's name.
    ///
    /// # Errors
    /// The step's own failure (or `cancelled` after an interrupt).
    fn step<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<T, StepFailure>,
    ) -> Result<T, StepFailure>
    where
        Self: Sized,
    {
        run_step(self, "step", name, None, f)
    }

    /// As [`step`](Self::step), for a step whose name is a stable id: `what`
    /// says in words what it does and checks.
    ///
    /// # Errors
    /// The step's own failure.
    fn step_doing<T>(
        &mut self,
        id: &str,
        what: &str,
        f: impl FnOnce(&mut Self) -> Result<T, StepFailure>,
    ) -> Result<T, StepFailure>
    where
        Self: Sized,
    {
        run_step(self, "step", id, Some(what), f)
    }

    /// Runs every check of `checks` as the check step `name`; every failed
    /// check is recorded and named in the one failure it returns.
    ///
    /// # Errors
    /// An errored failure listing every failed check.
    fn verify(&mut self, name: &str, checks: Checks<'_, Self>) -> Result<(), StepFailure>
    where
        Self: Sized,
    {
        run_step(self, "check", name, None, |s| {
            let mut records = Vec::new();
            for (check, f) in checks.items {
                let started = Instant::now();
                let result = f(s);
                records.push(CheckRecord {
                    name: check,
                    ok: result.is_ok(),
                    elapsed_ms: millis(started),
                    error: result.err(),
                });
            }
            let failed: Vec<String> = records
                .iter()
                .filter_map(|c| c.error.as_ref().map(|e| format!("`{}`: {e}", c.name)))
                .collect();
            let total = records.len();
            s.record_mut().pending_checks = records;
            match failed.len() {
                0 => Ok(()),
                n => Err(StepFailure::errored(format!(
                    "{n} of {total} checks failed: {}",
                    failed.join("; ")
                ))),
            }
        })
    }

    /// One check as its own check step.
    ///
    /// # Errors
    /// The check's failure, errored.
    fn check<E: std::fmt::Display>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> Result<(), E>,
    ) -> Result<(), StepFailure>
    where
        Self: Sized,
    {
        self.verify(name, Checks::new().check(name, f))
    }
}

impl Steps for CaseRecord {
    fn record_mut(&mut self) -> &mut CaseRecord {
        self
    }
}

fn run_step<S: Steps, T>(
    s: &mut S,
    kind: &'static str,
    name: &str,
    what: Option<&str>,
    f: impl FnOnce(&mut S) -> Result<T, StepFailure>,
) -> Result<T, StepFailure> {
    let started = Instant::now();
    {
        let r = s.record_mut();
        r.detail = None;
        r.pending_checks.clear();
    }
    let result = if crate::interrupt::interrupted() {
        Err(StepFailure::cancelled(
            "interrupted (SIGINT/SIGTERM to the runner) before this step",
        ))
    } else {
        f(s)
    };
    let result = result.map_err(cancelled_if_interrupted);
    let r = s.record_mut();
    let n = r.steps.len() + 1;
    r.steps.push(StepRecord {
        n,
        kind,
        name: name.to_owned(),
        what: what.map(str::to_owned),
        ok: result.is_ok(),
        elapsed_ms: millis(started),
        detail: r.detail.take().unwrap_or(Value::Null),
        error: result.as_ref().err().map(|e| e.message.clone()),
        checks: std::mem::take(&mut r.pending_checks),
    });
    result.map_err(|mut e| {
        e.message = format!("{kind} `{name}`: {}", e.message);
        e
    })
}

/// A failure seen after a Ctrl-C was caused by it (its server was stopped):
/// the case was cancelled, whatever error the step saw.
pub(crate) fn cancelled_if_interrupted(e: StepFailure) -> StepFailure {
    if crate::interrupt::interrupted()
        && !matches!(e.outcome, Outcome::Cancelled | Outcome::Skipped)
    {
        StepFailure::cancelled(format!(
            "interrupted (SIGINT/SIGTERM to the runner): {}",
            e.message
        ))
    } else {
        e
    }
}

/// Milliseconds since `started`, saturating.
pub(crate) fn millis(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_step_reports_every_failed_check_not_only_the_first() {
        let mut r = CaseRecord::new("cell");
        let err = r
            .verify(
                "three checks",
                Checks::new()
                    .check("first", |_| Err("one is wrong"))
                    .check("passes", |_| Ok::<(), String>(()))
                    .check("second", |_| Err("two is wrong"))
                    .check("third", |r: &mut CaseRecord| {
                        r.notes.push("the third ran".into());
                        Err("three is wrong")
                    }),
            )
            .unwrap_err();
        assert_eq!(err.outcome, Outcome::Errored);
        for needle in [
            "3 of 4 checks failed",
            "`first`: one is wrong",
            "`second`: two is wrong",
            "`third`: three is wrong",
        ] {
            assert!(err.message.contains(needle), "{needle}: {}", err.message);
        }
        assert!(
            err.message.starts_with("check `three checks`: "),
            "{}",
            err.message
        );
        let step = &r.steps[0];
        assert_eq!((step.n, step.kind, step.ok), (1, "check", false));
        let outcomes: Vec<(&str, bool)> = step
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.ok))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("first", false),
                ("passes", true),
                ("second", false),
                ("third", false)
            ]
        );
        assert_eq!(r.notes, ["the third ran"]);
    }

    #[test]
    fn steps_are_numbered_with_detail_and_a_failure_names_its_step() {
        let mut r = CaseRecord::new("cell");
        let got = r.step_doing("first", "does one thing", |r| {
            r.detail(serde_json::json!({"seen": 1}));
            Ok(7)
        });
        assert_eq!(got.unwrap(), 7);
        let err = r
            .step("second", |_| -> Result<(), _> {
                Err(StepFailure::budget("out"))
            })
            .unwrap_err();
        assert_eq!(err.message, "step `second`: out");
        assert_eq!(err.outcome, Outcome::BudgetExhausted);
        assert_eq!(r.steps[0].detail["seen"], 1);
        assert_eq!(r.steps[0].what.as_deref(), Some("does one thing"));
        assert_eq!(r.steps[1].detail, Value::Null);
        assert!(r.steps[0].checks.is_empty());
        assert!(r.check("ok", |_| Ok::<(), String>(())).is_ok());
        assert_eq!(r.steps[2].checks.len(), 1);
    }
}
