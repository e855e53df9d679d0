//! [`Case`]: one live trial run — what it is (harness, surface, seed, budget),
//! what it started ([`Slots`]) and what it recorded ([`CaseRecord`]). Every live
//! trial kind runs on it: cli-tmux and web lanes, probes and UAT journeys.
//! [`Case::run`] installs the Ctrl-C handler, runs the steps (a panic becomes
//! an errored step), turns a failure caused by a missing login into the named
//! skip (`auth`), and always finishes (`finish`): release, cleanup proof,
//! bundle.

use std::path::PathBuf;

use studyloop_actors::ActorKind;

use super::StepFailure;
use super::finish::{Destination, Finished};
use super::record::CaseRecord;
use super::slots::{Slots, keep_socket_evidence};
use super::step::{Steps, cancelled_if_interrupted};
use crate::evidence::Surface;
use crate::harness_spec::{self, HarnessSpec};
use crate::runner::TrialContext;
use crate::scratch::{Env, Scratch};
use crate::selection::{HarnessName, TurnBudget};
use crate::tmux::Tmux;
use crate::validate::CheckError;
use crate::web_acp::{AcpMentor, WebServer};

/// One live case and everything it owns.
pub struct Case<'a> {
    /// The trial context (selection, caller env, run log).
    pub ctx: &'a TrialContext,
    /// The harness it drives.
    pub harness: HarnessName,
    /// Its table row.
    pub spec: &'static HarnessSpec,
    /// The surface it drives (the manifest's `surface`).
    pub surface: Surface,
    /// The stub's reply-nonce seed (random per case, recorded in the manifest; a
    /// cassette replay's is the recorded one).
    pub seed: u64,
    /// The model-traffic cassette (`STUDYLOOP_ACC_CASSETTE`), or why it did not open.
    pub cassette: Result<Option<studyloop_actors::llm::cassette::Cassette>, String>,
    /// The learner backend of its conversations.
    pub actor: ActorKind,
    /// Turns and output-token cap of its conversations.
    pub budget: TurnBudget,
    /// The shipped turn script its scripted learner reads
    /// (`crate::turn_scripts::TURN_SCRIPTS`; the default unless a journey picks one).
    pub turn_script: &'static str,
    /// The scratch env plus what provisioning added.
    pub env: Env,
    /// The harness binary as resolved on the scratch PATH.
    pub binary: Option<PathBuf>,
    /// Whether the model path (stub or the operator's login) was provisioned: from
    /// then on a failure may be the login's (`auth`).
    pub provisioned: bool,
    /// What it started, released in a fixed order.
    pub slots: Slots,
    /// What it recorded.
    pub record: CaseRecord,
    /// For a cell whose mentor is a test double with canned replies
    /// (`studyloop-stub-acp` in the UAT smoke) and no stub provider to log
    /// what was sent: the reply it was told to give to learner turn `k`
    /// (index `k - 1`), the record its replies' fidelity is scored against.
    /// `None` (every cell with a model path) scores against the stub
    /// provider's log, or leaves the verdict unknown in real-auth.
    pub scripted_replies: Option<Vec<String>>,
}

impl Steps for Case<'_> {
    fn record_mut(&mut self) -> &mut CaseRecord {
        &mut self.record
    }
}

impl<'a> Case<'a> {
    /// A case for `harness` on `surface` in trial `ctx`: actor and budget from
    /// the selection, a fresh recorded seed.
    #[must_use]
    pub fn new(ctx: &'a TrialContext, harness: HarnessName, surface: Surface) -> Self {
        let mut seed_bytes = [0u8; 8];
        // A failed getrandom leaves seed 0: still a valid, recorded seed.
        let _ = getrandom::fill(&mut seed_bytes);
        let (cassette, seed) = super::cassette::with_seed(ctx, u64::from_le_bytes(seed_bytes) >> 1);
        let mut record = CaseRecord::new(&ctx.name);
        if let Ok(Some(c)) = &cassette {
            record.facts.cassette = Some(c.evidence());
        }
        record.facts.harness = Some(harness.to_string());
        record.facts.auth_mode = Some(ctx.selection.auth_mode);
        record.facts.approvals = Some(ctx.selection.approvals.in_force());
        record.facts.actor_backend = Some(ctx.selection.actor.as_str().to_owned());
        // Which budget applies, and why, is part of what the case was.
        record.notes.push(ctx.selection.budget.note());
        Self {
            ctx,
            harness,
            spec: harness_spec::spec(harness),
            surface,
            seed,
            cassette,
            actor: ctx.selection.actor,
            budget: ctx.selection.budget,
            turn_script: crate::turn_scripts::DEFAULT_TURN_SCRIPT,
            env: Env::default(),
            binary: None,
            provisioned: false,
            slots: Slots::default(),
            record,
            scripted_replies: None,
        }
    }

    /// Runs `steps`, then always finishes into `dest`: the one way every live
    /// case ends.
    pub fn run(
        mut self,
        dest: &dyn Destination,
        steps: impl FnOnce(&mut Self) -> Result<(), StepFailure>,
    ) -> Finished {
        if let Err(e) = crate::interrupt::install() {
            self.record.notes.push(e.to_string());
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| steps(&mut self)))
            .unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "unknown panic".into());
                Err(StepFailure::errored(format!("the case panicked: {what}")))
            });
        // Also what failed between steps (a read of a server the interrupt stopped).
        let result = result.map_err(cancelled_if_interrupted);
        // A harness that is not logged in is a named skip, whichever step met it.
        let result = result.map_err(|f| self.login_skip(f));
        self.finish(result, dest)
    }

    /// The scratch world (steps after the scratch step may rely on it).
    ///
    /// # Errors
    /// An errored failure when there is none yet.
    pub fn scratch(&self) -> Result<&Scratch, StepFailure> {
        self.slots
            .scratch
            .as_ref()
            .ok_or_else(|| StepFailure::errored("no scratch world"))
    }

    /// The product's tmux server.
    ///
    /// # Errors
    /// An errored failure when there is none yet.
    pub fn tmux(&self) -> Result<&Tmux, StepFailure> {
        self.slots
            .tmux
            .as_ref()
            .ok_or_else(|| StepFailure::errored("no tmux handle"))
    }

    /// The product server.
    ///
    /// # Errors
    /// An errored failure when none was started.
    pub fn server(&self) -> Result<&WebServer, StepFailure> {
        self.slots
            .server
            .as_ref()
            .ok_or_else(|| StepFailure::errored("no product server"))
    }

    /// The stub provider's request log.
    ///
    /// # Errors
    /// Why it cannot be read (no stub in this mode, or an unreadable log).
    pub fn stub_records(&self) -> Result<Vec<studyloop_stubs::LogRecord>, CheckError> {
        self.slots
            .stub
            .as_ref()
            .ok_or_else(|| CheckError::StubLog("this case has no stub provider".into()))?
            .records()
            .map_err(|e| CheckError::StubLog(e.to_string()))
    }

    /// Learner turn `n`'s reply is proven: its stub nonce with the cell's stub,
    /// any non-blank text with a real model.
    ///
    /// # Errors
    /// [`CheckError`] naming the turn, the reply and the marker it lacks.
    pub fn prove_reply(&self, n: u64, reply: &str) -> Result<(), CheckError> {
        crate::validate::prove_reply(self.has_stub().then_some(self.seed), n, reply)
    }

    /// Runs `f` with the session socket taken out of its slot (so `f` may also
    /// use the case), putting it back afterwards.
    ///
    /// # Errors
    /// An errored failure when no socket is attached, or `f`'s own.
    pub fn with_acp<T>(
        &mut self,
        f: impl FnOnce(&mut Self, &mut AcpMentor) -> Result<T, StepFailure>,
    ) -> Result<T, StepFailure> {
        let mut acp = self
            .slots
            .acp
            .take()
            .ok_or_else(|| StepFailure::errored("no session socket attached"))?;
        let result = f(self, &mut acp);
        self.slots.acp = Some(acp);
        result
    }

    /// Stops the session socket (`stop` frame), keeps its turns and frames,
    /// and returns the `stopped` frame when one arrived.
    ///
    /// # Errors
    /// No socket attached, or its evidence could not be serialised.
    pub fn stop_acp(&mut self) -> Result<Option<serde_json::Value>, StepFailure> {
        let acp = self
            .slots
            .acp
            .take()
            .ok_or_else(|| StepFailure::errored("no session socket attached"))?;
        let done = acp.stop();
        keep_socket_evidence(&mut self.record, &done).map_err(StepFailure::from_error)?;
        Ok(done.stopped)
    }

    /// Whether this case's mentor model is the cell's stub provider.
    #[must_use]
    pub fn has_stub(&self) -> bool {
        self.slots.stub.is_some()
    }
}
