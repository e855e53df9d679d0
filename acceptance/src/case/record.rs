//! What a case records while it runs, independent of what it drives: the step
//! records (each with every check outcome), the driven turns, the learner
//! transcript, named evidence files, manifest notes and the facts of who ran
//! it. Destinations turn a [`CaseRecord`] into a bundle (`finish`).

use serde::Serialize;
use serde_json::Value;
use studyloop_actors::Transcript;
use studyloop_actors::llm::cassette::CassetteMode;

use crate::evidence::{Manifest, Outcome, RepoIdentity, RunId, Surface, Tier};
use crate::pane::TurnRecord;
use crate::selection::AuthMode;

use super::StepFailure;

/// One check of a step, as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRecord {
    /// What it checks.
    pub name: String,
    /// Whether it held.
    pub ok: bool,
    /// Wall time.
    pub elapsed_ms: u64,
    /// Why it failed, when it failed.
    pub error: Option<String>,
}

/// One step as evidence (`steps.json`; a UAT bundle's `lifecycle/NN-<name>.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRecord {
    /// Position, from 1.
    pub n: usize,
    /// `step` (does something) or `check` (only verifies).
    pub kind: &'static str,
    /// Its name (a UAT step's stable id, e.g. `session-start`).
    pub name: String,
    /// What it does and checks, in words, when the name is an id.
    pub what: Option<String>,
    /// Whether it and every one of its checks succeeded.
    pub ok: bool,
    /// Wall time, checks included.
    pub elapsed_ms: u64,
    /// What it observed (status codes, ids, counts); `null` when nothing.
    pub detail: Value,
    /// The failure, when it failed (for checks: every failed check, joined).
    pub error: Option<String>,
    /// Every check it ran, passed or failed.
    pub checks: Vec<CheckRecord>,
}

/// A driven turn with the phase it belongs to (`turns.json`).
#[derive(Debug, Clone, Serialize)]
pub struct PhaseTurn {
    /// `first-session`, `resumed-session`, `paste`.
    pub phase: &'static str,
    /// The driver's record.
    #[serde(flatten)]
    pub record: TurnRecord,
}

/// Who ran the case: what the manifest records.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The harness (or the named test double).
    pub harness: Option<String>,
    /// Its version line.
    pub harness_version: Option<String>,
    /// Its resolved binary.
    pub binary_path: Option<String>,
    /// How it reached a model; `None` when no model was involved.
    pub auth_mode: Option<AuthMode>,
    /// The learner backend.
    pub actor_backend: Option<String>,
    /// The learner model, when a model played the learner.
    pub actor_model: Option<String>,
    /// Seeds by name.
    pub seeds: Vec<(String, u64)>,
    /// The model-traffic cassette the case recorded into or replayed from.
    pub cassette: Option<studyloop_actors::llm::cassette::CassetteEvidence>,
    /// The approvals in force for the run.
    pub approvals: Option<Vec<crate::approval::ApprovalRecord>>,
    /// The billed learner capability the conversation ran under, once it ran.
    pub learner_capability: Option<String>,
    /// The persona the product built, once the case saw it (`inputs.json`).
    pub persona: Option<super::inputs::PersonaSeen>,
    /// The shipped turn script the conversation read, once it ran (`inputs.json`).
    pub turn_script: Option<String>,
}

/// Everything a case recorded so far.
#[derive(Debug, Default)]
pub struct CaseRecord {
    /// The cell (trial) name.
    pub cell: String,
    /// Steps so far.
    pub steps: Vec<StepRecord>,
    /// Driven turns (pane lanes).
    pub turns: Vec<PhaseTurn>,
    /// The learner conversation, once it ran.
    pub transcript: Option<Transcript>,
    /// Every recorded mentor reply with its source and fidelity, in order
    /// (`fidelity.json`; the cell's ratio in the manifest).
    pub fidelity: Vec<crate::fidelity::TurnFidelity>,
    /// Other evidence files (`relpath`, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// Manifest notes (labels, findings).
    pub notes: Vec<String>,
    /// Who ran it.
    pub facts: Facts,
    /// Files a reader should open first when the case failed (beyond the
    /// destination's own, e.g. `steps.json`).
    pub failure_artifacts: Vec<String>,
    pub(crate) detail: Option<Value>,
    pub(crate) pending_checks: Vec<CheckRecord>,
}

impl CaseRecord {
    /// An empty record for `cell`.
    #[must_use]
    pub fn new(cell: &str) -> Self {
        Self {
            cell: cell.to_owned(),
            ..Self::default()
        }
    }

    /// Adds an evidence file.
    pub fn attach(&mut self, rel: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.push((rel.into(), bytes.into()));
    }

    /// Adds `value` as pretty JSON under `rel`.
    ///
    /// # Errors
    /// A serialisation failure is an errored step, never an empty file.
    pub fn attach_json(&mut self, rel: &str, value: &impl Serialize) -> Result<(), StepFailure> {
        let bytes = serde_json::to_vec_pretty(value)
            .map_err(|e| StepFailure::errored(format!("serialising {rel}: {e}")))?;
        self.attach(rel, bytes);
        Ok(())
    }

    /// Sets what the running step observed (the last call wins).
    pub fn detail(&mut self, value: Value) {
        self.detail = Some(value);
    }

    /// The manifest every destination starts from: identity, facts, notes and
    /// the outcome of `result` (its message becomes a note).
    #[must_use]
    pub fn manifest(
        &self,
        run_id: &RunId,
        tier: Tier,
        surface: Surface,
        repo: RepoIdentity,
        result: Result<(), &StepFailure>,
    ) -> Manifest {
        let mut m = Manifest::new(run_id, tier, &self.cell, surface);
        let f = &self.facts;
        m.harness.clone_from(&f.harness);
        m.harness_version.clone_from(&f.harness_version);
        m.binary_path.clone_from(&f.binary_path);
        m.auth_mode = f.auth_mode;
        m.approvals.clone_from(&f.approvals);
        m.learner_capability.clone_from(&f.learner_capability);
        m.actor_backend.clone_from(&f.actor_backend);
        m.actor_model.clone_from(&f.actor_model);
        m.repo_sha = repo.sha;
        m.dirty = repo.dirty;
        m.patch_identity = repo.patch_identity;
        m.seeds = f.seeds.iter().cloned().collect();
        m.notes.clone_from(&self.notes);
        m.fidelity = super::faithful::cell(self);
        m.cassette.clone_from(&f.cassette);
        if let Some(c) = f
            .cassette
            .as_ref()
            .filter(|c| c.mode == CassetteMode::Replay)
        {
            m.notes.push(format!(
                "replayed from cassette {} (sha256 {}): no model was called, this is not a live run",
                c.file,
                c.sha256.as_deref().unwrap_or("unknown")
            ));
        }
        match result {
            Ok(()) => m.outcome = Outcome::Completed,
            Err(failure) => {
                m.outcome = failure.outcome;
                m.notes.push(failure.message.clone());
            }
        }
        m
    }
}
