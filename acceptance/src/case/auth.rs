//! The login of a case's harness: its authenticated probe, and the one rule that an
//! authentication failure anywhere in a case is a named skip, never a lane error.
//!
//! Every live trial runs on [`Case::run`], so the rule lives here once and every lane
//! of every surface (cli-tmux, web-acp and its browser variant, mcp, drill, paste, the
//! arc), the probes and the UAT journeys get it alike. When a case fails (errored or
//! out of budget; never a skip or a Ctrl-C):
//!
//! 1. its failure message is read for phrases that name a missing login wherever they
//!    appear (`harness_spec::login::named_anywhere`: an ACP adapter's `authRequired`
//!    "Authentication required" at initialize or session/new, an invalid API key);
//! 2. otherwise, once the model path was provisioned, the harness itself is asked: its
//!    one-shot probe runs again in the same world with the same login. A harness that
//!    answers it "not logged in", 401 or "invalid API key" was the cause — a TUI that
//!    met a 401 only shows it on its screen, and the lane saw a turn time out.
//!
//! Either way the case ends `skipped` with "not logged in: <harness>: <evidence>; <fix>"
//! and the original failure stays in the notes. A probe that answers means the failure
//! was not a login's, and it stays a failure.
//!
//! Under nextest a skip found at run time must still be reported as a failure (nextest
//! shows a run-time ignore as PASS; `runner`): the real-auth login is therefore also
//! checked once per harness when the catalogue is built (`runner::login_preflight`), so
//! a missing login there is a listed skip under both runners.

use super::StepFailure;
use super::live::Case;
use crate::evidence::Outcome;
use crate::harness_spec::ProbeKind;
use crate::harness_spec::auth_probe::{self, ProbeError, ProbeResult};
use crate::harness_spec::login::{self, LoggedOut};
use crate::selection::AuthMode;

/// The name of the authenticated-probe step (the probe and every lane).
pub const PROBE_STEP: &str = "authenticated probe (one-shot prompt)";

impl Case<'_> {
    /// Whether this case's harness can be asked for its login: a model path exists in
    /// the auth mode (not scrubbed), the harness has an authenticated probe, and a
    /// stub-mentor mode has the harness's stub recipe.
    #[must_use]
    pub(crate) fn can_probe_login(&self) -> bool {
        let mode = self.ctx.selection.auth_mode;
        matches!(self.spec.probe, ProbeKind::Authenticated { .. })
            && mode != AuthMode::Scrubbed
            && (!mode.stub_mentor() || self.spec.stub_config.is_some())
    }

    /// Runs the harness's authenticated probe in the case's world and env, from the
    /// fresh directory `dir_name` under the scratch root; with the cell's stub the
    /// reply must carry its marker.
    ///
    /// # Errors
    /// [`ProbeError`]: `NotLoggedIn` is the caller's named skip.
    pub(crate) fn probe_login(&self, dir_name: &str) -> Result<ProbeResult, ProbeError> {
        let binary = self
            .binary
            .as_deref()
            .ok_or_else(|| ProbeError::Run("no harness binary resolved".into()))?;
        let scratch = self
            .scratch()
            .map_err(|e| ProbeError::Run(e.message.clone()))?;
        let dir = scratch.root().join(dir_name);
        let expect = self.slots.stub.as_ref().map(|_| "MENTOR-REPLY");
        auth_probe::run(self.spec, scratch, &self.env, binary, &dir, expect)
    }

    /// An authentication failure becomes the named skip; any other failure is kept
    /// (see the module docs). Called by `run` for every case.
    pub(crate) fn login_skip(&mut self, failure: StepFailure) -> StepFailure {
        if !matches!(failure.outcome, Outcome::Errored | Outcome::BudgetExhausted)
            || crate::interrupt::interrupted()
        {
            return failure;
        }
        // A check step's failure quotes the product's and the model's text (a reply
        // that talks about logging in is no login failure): only the probe decides there.
        let quoted = failure.message.starts_with("check `");
        if !quoted && let Some(evidence) = login::named_anywhere(&failure.message) {
            return self.skip_for(LoggedOut::new(self.harness, &evidence), failure);
        }
        let probe_failed = failure.message.starts_with(&format!("step `{PROBE_STEP}`"));
        if !self.provisioned || probe_failed || !self.can_probe_login() {
            return failure;
        }
        match self.probe_login("probe-after-failure") {
            Err(ProbeError::NotLoggedIn(out)) => self.skip_for(out, failure),
            other => {
                let what = other.map_or_else(
                    |e| format!("it failed otherwise ({e})"),
                    |r| format!("it answered in {} ms", r.elapsed.as_millis()),
                );
                self.record.notes.push(format!(
                    "login check after the failure: the authenticated probe ran again; {what}: not a login failure"
                ));
                failure
            }
        }
    }

    fn skip_for(&mut self, out: LoggedOut, failure: StepFailure) -> StepFailure {
        self.record.notes.push(format!(
            "the case failed because the harness is not logged in; its failure was: {}",
            failure.message
        ));
        StepFailure::skipped(out.to_string())
    }
}
