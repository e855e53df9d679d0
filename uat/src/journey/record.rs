//! A journey's bookkeeping: named lifecycle steps (each one becomes
//! `lifecycle/<NN>-<id>.json`), the learner transcript (`transcript.jsonl`), other
//! evidence files, and the bundle written to the durable UAT root with the rubric and
//! redaction pins recorded in its manifest before any grading, plus the redacted
//! summary (`summary.redacted.json`, inside the bundle so its inventory covers it).
//!
//! Pure bookkeeping: it starts nothing and drives nothing (`smoke` and `study` do).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::evidence::{
    BundleWriter, DurableRootError, EvidenceError, Manifest, Outcome, RepoIdentity, RunId, Surface,
    Tier, durable_root,
};
use studyloop_acceptance::lane::LaneFailure;
use studyloop_acceptance::selection::AuthMode;
use studyloop_actors::Transcript;
use studyloop_redaction::{RedactionError, Redactor};

use crate::signoff::Pins;
use crate::summary;

/// The transcript file a graded journey writes (one turn per line).
pub const TRANSCRIPT: &str = "transcript.jsonl";
/// The redacted summary written inside the bundle.
pub const SUMMARY: &str = "summary.redacted.json";

/// Where a journey's bundle goes: a fresh run id under the durable UAT root.
#[derive(Debug, Clone)]
pub struct Destination {
    /// The bundle's run id.
    pub run_id: RunId,
    /// `<durable root>/<run id>`.
    pub dir: PathBuf,
}

impl Destination {
    /// A new run id under the durable root of the real environment `caller` (never a
    /// scratch env: `STUDYLOOP_UAT_EVIDENCE_ROOT`, else `~/.local/share/studyloop/uat`).
    ///
    /// # Errors
    /// [`DurableRootError`] naming the variable to set.
    pub fn resolve(caller: &CallerEnv) -> Result<Self, DurableRootError> {
        let run_id = RunId::generate();
        let dir = durable_root(caller, &run_id)?;
        Ok(Self { run_id, dir })
    }
}

/// One lifecycle step as evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LifecycleStep {
    /// Position, from 1.
    pub n: usize,
    /// Stable id (`session-start`, `end`, …): the file name's tail.
    pub step: String,
    /// What the step does and checks, in words.
    pub what: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Wall time.
    pub elapsed_ms: u64,
    /// What it observed (status codes, ids, counts); `null` when nothing.
    pub detail: Value,
    /// The failure, when it failed.
    pub error: Option<String>,
}

impl LifecycleStep {
    /// The step's bundle path: `lifecycle/<NN>-<step>.json`.
    #[must_use]
    pub fn path(&self) -> String {
        format!("lifecycle/{:02}-{}.json", self.n, self.step)
    }
}

/// What the manifest records about who ran the journey.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
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
}

/// One journey run in progress.
#[derive(Debug)]
pub struct Journey {
    /// The cell (trial) name.
    pub cell: String,
    /// Lifecycle steps so far.
    pub steps: Vec<LifecycleStep>,
    /// The learner conversation, once it ran.
    pub transcript: Option<Transcript>,
    /// Other evidence files (`relpath`, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// Manifest notes (labels, findings).
    pub notes: Vec<String>,
    /// Who ran it.
    pub facts: RunFacts,
    /// The summary's `arbitration_note`: what is and is not graded.
    pub arbitration_note: String,
    detail: Option<Value>,
}

impl Journey {
    /// A journey for `cell`; `arbitration_note` says what is graded.
    #[must_use]
    pub fn new(cell: &str, arbitration_note: &str) -> Self {
        Self {
            cell: cell.to_owned(),
            steps: Vec::new(),
            transcript: None,
            files: Vec::new(),
            notes: Vec::new(),
            facts: RunFacts::default(),
            arbitration_note: arbitration_note.to_owned(),
            detail: None,
        }
    }

    /// Runs one lifecycle step and records it; a failure names the step.
    ///
    /// # Errors
    /// The step's own failure, prefixed with its id.
    pub fn step<T>(
        &mut self,
        id: &str,
        what: &str,
        f: impl FnOnce(&mut Self) -> Result<T, LaneFailure>,
    ) -> Result<T, LaneFailure> {
        let started = Instant::now();
        self.detail = None;
        let result = f(self);
        self.steps.push(LifecycleStep {
            n: self.steps.len() + 1,
            step: id.to_owned(),
            what: what.to_owned(),
            ok: result.is_ok(),
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            detail: self.detail.take().unwrap_or(Value::Null),
            error: result.as_ref().err().map(|e| e.message.clone()),
        });
        result.map_err(|mut e| {
            e.message = format!("step `{id}`: {}", e.message);
            e
        })
    }

    /// Sets what the running step observed (the last call wins).
    pub fn detail(&mut self, value: Value) {
        self.detail = Some(value);
    }

    /// Adds an evidence file.
    pub fn attach(&mut self, rel: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.push((rel.into(), bytes.into()));
    }

    /// Writes the bundle to `dest` (in the durable root, resolved by the caller from the
    /// real environment) and returns its directory.
    ///
    /// The manifest carries the redaction pin always and the rubric pin when `graded`
    /// (a graded journey's rubric is fixed before any seat sees it); the summary is
    /// redacted by `redactor` and written before the manifest, so it is inventoried.
    ///
    /// # Errors
    /// A one-line reason naming the file or check that failed.
    pub fn write_bundle(
        &self,
        dest: &Destination,
        caller: &CallerEnv,
        result: Result<(), &LaneFailure>,
        pins: &Pins,
        redactor: &Redactor,
        graded: bool,
    ) -> Result<PathBuf, String> {
        let manifest = self.manifest(dest, caller, result, pins, graded);
        self.write_with(&dest.dir, manifest, redactor)
            .map_err(|e| format!("writing the evidence bundle {}: {e}", dest.dir.display()))
    }

    fn manifest(
        &self,
        dest: &Destination,
        caller: &CallerEnv,
        result: Result<(), &LaneFailure>,
        pins: &Pins,
        graded: bool,
    ) -> Manifest {
        let mut m = Manifest::new(&dest.run_id, Tier::Uat, &self.cell, Surface::Journey);
        let repo = RepoIdentity::detect(&bins::workspace_root(), caller);
        let f = &self.facts;
        m.harness.clone_from(&f.harness);
        m.harness_version.clone_from(&f.harness_version);
        m.binary_path.clone_from(&f.binary_path);
        m.auth_mode = f.auth_mode;
        m.actor_backend.clone_from(&f.actor_backend);
        m.actor_model.clone_from(&f.actor_model);
        m.repo_sha = repo.sha;
        m.dirty = repo.dirty;
        m.patch_identity = repo.patch_identity;
        m.seeds = f.seeds.iter().cloned().collect();
        m.redaction_version = Some(pins.rules.version().to_string());
        m.redaction_hash = Some(pins.rules.sha256().to_owned());
        if graded {
            m.rubric_version = Some(pins.rubric.version().to_string());
            m.rubric_hash = Some(pins.rubric.sha256().to_owned());
        }
        m.notes.clone_from(&self.notes);
        m.counts.passed = self.steps.iter().filter(|s| s.ok).count() as u64;
        m.counts.failed = self.steps.iter().filter(|s| !s.ok).count() as u64;
        match result {
            Ok(()) => m.outcome = Outcome::Completed,
            Err(failure) => {
                m.outcome = failure.outcome;
                m.notes.push(failure.message.clone());
                m.failure_artifacts = self
                    .steps
                    .iter()
                    .filter(|s| !s.ok)
                    .map(LifecycleStep::path)
                    .collect();
            }
        }
        m
    }

    fn write_with(
        &self,
        dir: &Path,
        manifest: Manifest,
        redactor: &Redactor,
    ) -> Result<PathBuf, WriteError> {
        let mut w = BundleWriter::create(dir, manifest)?;
        if let Some(t) = &self.transcript {
            w.write_file(TRANSCRIPT, transcript_jsonl(t).as_bytes())?;
            w.write_json(
                "conversation.json",
                &json!({"outcome": t.outcome, "error": t.error, "turns": t.turns.len()}),
            )?;
        }
        for step in &self.steps {
            w.write_json(&step.path(), step)?;
        }
        for (rel, bytes) in &self.files {
            w.write_file(rel, bytes)?;
        }
        // Rewrite first (a home path in a version line becomes a placeholder), then let
        // the summary check keep the allow-listed keys and prove nothing leaks.
        let candidate = summary::rewritten(
            summary::journey_summary(w.manifest_mut(), &self.arbitration_note),
            redactor,
        );
        let redacted = redactor.summary(&candidate)?;
        w.write_json(
            SUMMARY,
            &studyloop_acceptance::evidence::sorted(Value::Object(redacted)),
        )?;
        Ok(w.finish()?)
    }
}

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error("the redacted summary still leaks, so nothing was written for it: {0}")]
    Redaction(#[from] RedactionError),
}

/// `transcript.jsonl`: one `{learner, mentor_reply, usage, elapsed_ms}` object per line,
/// every completed turn, in order.
#[must_use]
pub fn transcript_jsonl(transcript: &Transcript) -> String {
    transcript
        .turns
        .iter()
        .map(|t| {
            let line = json!({
                "learner": t.learner,
                "mentor_reply": t.mentor_reply,
                "usage": t.usage,
                "elapsed_ms": t.elapsed_ms,
            });
            let mut s = serde_json::to_string(&studyloop_acceptance::evidence::sorted(line))
                .unwrap_or_default();
            s.push('\n');
            s
        })
        .collect()
}
