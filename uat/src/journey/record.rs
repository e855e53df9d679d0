//! Where a journey's bundle goes and in which layout: the UAT destination of the case
//! engine. A journey is a case (`studyloop_acceptance::case`); its record is written
//! to the durable UAT root with each step as `lifecycle/<NN>-<id>.json`, the learner
//! transcript (`transcript.jsonl`), other evidence files, the rubric and redaction
//! pins recorded in its manifest before any grading, and the redacted summary
//! (`summary.redacted.json`, inside the bundle so its inventory covers it).
//!
//! Pure layout: it starts nothing and drives nothing (`smoke` and `study` do).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_acceptance::case::{
    BundleError, CaseRecord, CheckRecord, Destination as CaseDestination, PinnedInput, StepFailure,
    StepRecord,
};
use studyloop_acceptance::evidence::{
    BundleWriter, DurableRootError, EvidenceError, Manifest, RepoIdentity, RunId, Surface, Tier,
    durable_root,
};
use studyloop_actors::Transcript;
use studyloop_redaction::{RedactionError, Redactor};

use crate::bundle_summary;
use crate::signoff::Pins;

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

/// One step as a UAT lifecycle file (`lifecycle/<NN>-<step>.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
struct LifecycleStep<'a> {
    n: usize,
    step: &'a str,
    what: &'a str,
    ok: bool,
    elapsed_ms: u64,
    detail: &'a Value,
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    checks: &'a [CheckRecord],
}

impl<'a> LifecycleStep<'a> {
    fn of(s: &'a StepRecord) -> Self {
        Self {
            n: s.n,
            step: &s.name,
            what: s.what.as_deref().unwrap_or(&s.name),
            ok: s.ok,
            elapsed_ms: s.elapsed_ms,
            detail: &s.detail,
            error: s.error.as_deref(),
            checks: &s.checks,
        }
    }
}

/// A step's bundle path: `lifecycle/<NN>-<name>.json`.
#[must_use]
pub fn lifecycle_path(step: &StepRecord) -> String {
    format!("lifecycle/{:02}-{}.json", step.n, step.name)
}

/// The UAT layout of a case's bundle, in the durable root.
pub struct UatBundle<'a> {
    /// Where it goes.
    pub dest: &'a Destination,
    /// The rubric and redaction pins recorded in the manifest.
    pub pins: &'a Pins,
    /// The rewrite of the redacted summary.
    pub redactor: &'a Redactor,
    /// Whether the council grades it (the rubric pin is recorded then).
    pub graded: bool,
    /// The summary's `arbitration_note`: what is and is not graded.
    pub arbitration_note: &'a str,
}

impl CaseDestination for UatBundle<'_> {
    fn run_id(&self) -> &RunId {
        &self.dest.run_id
    }

    fn write(
        &self,
        record: &CaseRecord,
        manifest: Manifest,
        result: Result<(), &StepFailure>,
    ) -> Result<PathBuf, BundleError> {
        let manifest = self.manifest(record, manifest, result);
        write_with(
            record,
            self.arbitration_note,
            &self.dest.dir,
            manifest,
            self.redactor,
        )
        .map_err(|e| {
            format!(
                "writing the evidence bundle {}: {e}",
                self.dest.dir.display()
            )
            .into()
        })
    }

    /// The redaction rules and sign-off definition always; the rubric when graded.
    fn pinned_inputs(&self) -> Vec<PinnedInput> {
        let p = self.pins;
        let mut pinned = vec![
            PinnedInput {
                kind: "redaction-rules",
                version: p.rules.version().to_string(),
                sha256: p.rules.sha256().to_owned(),
            },
            PinnedInput {
                kind: "signoff-definition",
                version: p.definition.version().to_string(),
                sha256: p.definition.sha256().to_owned(),
            },
        ];
        if self.graded {
            pinned.push(PinnedInput {
                kind: "rubric",
                version: p.rubric.version().to_string(),
                sha256: p.rubric.sha256().to_owned(),
            });
        }
        pinned
    }
}

impl UatBundle<'_> {
    /// Adds the pins, step counts and failure artefacts to the engine's manifest.
    fn manifest(
        &self,
        record: &CaseRecord,
        mut m: Manifest,
        result: Result<(), &StepFailure>,
    ) -> Manifest {
        m.redaction_version = Some(self.pins.rules.version().to_string());
        m.redaction_hash = Some(self.pins.rules.sha256().to_owned());
        if self.graded {
            m.rubric_version = Some(self.pins.rubric.version().to_string());
            m.rubric_hash = Some(self.pins.rubric.sha256().to_owned());
        }
        m.counts.passed = record.steps.iter().filter(|s| s.ok).count() as u64;
        m.counts.failed = record.steps.iter().filter(|s| !s.ok).count() as u64;
        if result.is_err() {
            m.failure_artifacts = record
                .steps
                .iter()
                .filter(|s| !s.ok)
                .map(lifecycle_path)
                .collect();
        }
        m
    }
}

/// Writes `record` as a UAT bundle to `dest` outside a running case (the engine's
/// finish does the same through [`UatBundle`]) and returns its directory.
///
/// # Errors
/// Why the bundle could not be written, naming the file or check that failed.
#[expect(clippy::too_many_arguments, reason = "the bundle's every input, named")]
pub fn write_bundle(
    record: &CaseRecord,
    arbitration_note: &str,
    dest: &Destination,
    caller: &CallerEnv,
    result: Result<(), &StepFailure>,
    pins: &Pins,
    redactor: &Redactor,
    graded: bool,
) -> Result<PathBuf, BundleError> {
    let repo = RepoIdentity::detect(&bins::workspace_root(), caller);
    let base = record.manifest(&dest.run_id, Tier::Uat, Surface::Journey, repo, result);
    let layout = UatBundle {
        dest,
        pins,
        redactor,
        graded,
        arbitration_note,
    };
    layout.write(record, base, result)
}

fn write_with(
    record: &CaseRecord,
    arbitration_note: &str,
    dir: &Path,
    manifest: Manifest,
    redactor: &Redactor,
) -> Result<PathBuf, WriteError> {
    let mut w = BundleWriter::create(dir, manifest)?;
    if let Some(t) = &record.transcript {
        w.write_file(TRANSCRIPT, transcript_jsonl(t)?.as_bytes())?;
        w.write_json(
            "conversation.json",
            &json!({"outcome": t.outcome, "error": t.error, "turns": t.turns.len()}),
        )?;
    }
    for step in &record.steps {
        w.write_json(&lifecycle_path(step), &LifecycleStep::of(step))?;
    }
    for (rel, bytes) in &record.files {
        w.write_file(rel, bytes)?;
    }
    // Rewrite first (a home path in a version line becomes a placeholder), then let
    // the summary check keep the allow-listed keys and prove nothing leaks.
    let candidate = bundle_summary::rewritten(
        bundle_summary::journey_summary(w.manifest_mut(), arbitration_note),
        redactor,
    );
    let redacted = redactor.summary(&candidate)?;
    w.write_json(
        SUMMARY,
        &studyloop_acceptance::evidence::sorted(Value::Object(redacted)),
    )?;
    Ok(w.finish()?)
}

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error("the redacted summary still leaks, so nothing was written for it: {0}")]
    Redaction(#[from] RedactionError),
    #[error("serialising {TRANSCRIPT}: {0}")]
    Transcript(#[from] serde_json::Error),
}

/// `transcript.jsonl`: one `{learner, mentor_reply, usage, elapsed_ms}` object per line,
/// every completed turn, in order.
///
/// # Errors
/// A turn that cannot be serialised (never an empty line in its place).
pub fn transcript_jsonl(transcript: &Transcript) -> Result<String, serde_json::Error> {
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
            serde_json::to_string(&studyloop_acceptance::evidence::sorted(line)).map(|s| s + "\n")
        })
        .collect()
}
