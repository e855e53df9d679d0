//! The one finish step of every case: release the slots in their fixed
//! order, prove nothing is left (no process mentions the scratch root — tmux
//! server, harness, stub and product included — and no scratch tree), then
//! write the bundle to a [`Destination`]: the run directory ([`RunDirBundle`]) or,
//! for UAT cells, the durable UAT root (the uat crate's destination).

use std::path::PathBuf;
use std::sync::OnceLock;

use super::StepFailure;
use super::inputs::{INPUTS_FILE, PinnedInput};
use super::live::Case;
use super::record::CaseRecord;
use super::step::{Checks, Steps};
use crate::bins;
use crate::caller_env::CallerEnv;
use crate::evidence::{BundleWriter, Manifest, Outcome, RepoIdentity, RunId};
use crate::fidelity::CellFidelity;
use crate::runner::TrialReport;

/// Why a bundle could not be written.
pub type BundleError = Box<dyn std::error::Error + Send + Sync>;

/// Where a finished case's bundle goes and in which layout.
pub trait Destination {
    /// The bundle's run id (the manifest records it).
    fn run_id(&self) -> &RunId;

    /// Writes `record` with `manifest` (outcome and notes already set from
    /// `result`) and returns the bundle directory.
    ///
    /// # Errors
    /// Why the bundle could not be written.
    fn write(
        &self,
        record: &CaseRecord,
        manifest: Manifest,
        result: Result<(), &StepFailure>,
    ) -> Result<PathBuf, BundleError>;

    /// The pinned files this destination grades or redacts against, recorded in the
    /// bundle's `inputs.json` (none for the run directory).
    fn pinned_inputs(&self) -> Vec<PinnedInput> {
        Vec::new()
    }
}

/// How a case ended: its result (cleanup included) and its bundle.
#[derive(Debug)]
pub struct Finished {
    /// The steps' result; a failed cleanup proof fails a passing case.
    pub result: Result<(), StepFailure>,
    /// The bundle directory, or why none was written.
    pub bundle: Result<PathBuf, BundleError>,
    /// The cell's reply fidelity; `None` when it recorded no reply.
    pub fidelity: Option<CellFidelity>,
    /// The name of the step (not check) the case failed at, when one failed:
    /// where a failure the engine re-read (a login skip) actually happened.
    pub failed_step: Option<String>,
}

/// The bundle file holding the cell's and every turn's fidelity (the
/// recorded reply, its source, its verdict and diff).
pub(crate) const FIDELITY_FILE: &str = "fidelity.json";

impl Finished {
    /// The trial report of an acceptance case: passed, skipped or failed,
    /// with its bundle.
    #[must_use]
    pub fn report(self) -> TrialReport {
        let report = match (&self.result, &self.bundle) {
            (Ok(()), Ok(_)) => TrialReport::passed(),
            (Ok(()), Err(e)) => TrialReport::failed(format!(
                "the case passed but its evidence bundle failed: {e}"
            )),
            (Err(f), _) if f.outcome == Outcome::Skipped => TrialReport::skipped(f.message.clone()),
            (Err(f), Ok(_)) => TrialReport::failed(format!(
                "{} (outcome {})",
                f.message,
                outcome_word(f.outcome)
            )),
            (Err(f), Err(e)) => TrialReport::failed(format!(
                "{} (outcome {}); its evidence bundle failed too: {e}",
                f.message,
                outcome_word(f.outcome)
            )),
        };
        let report = report.with_fidelity(self.fidelity);
        match self.bundle {
            Ok(dir) => report.with_bundle(dir),
            Err(_) => report,
        }
    }
}

impl Case<'_> {
    /// Releases, proves cleanup, writes the bundle. Called by `run`.
    pub(crate) fn finish(
        mut self,
        result: Result<(), StepFailure>,
        dest: &dyn Destination,
    ) -> Finished {
        let cleanup = self.prove_cleanup();
        // The steps' own failure wins over a cleanup failure.
        let result = result.and(cleanup);
        if let Err(f) = &result
            && f.outcome != Outcome::Skipped
        {
            // The failure's kind from the fixed taxonomy, in the bundle itself
            // (the results line records the same word from the same classifier).
            let category = crate::ledger::FailureCategory::classify(
                &f.message,
                f.outcome == Outcome::BudgetExhausted,
            );
            self.record
                .notes
                .push(format!("failure-category: {category}"));
        }
        let fidelity = super::faithful::cell(&self.record);
        if let Some(cell) = &fidelity {
            let file = serde_json::json!({"cell": cell, "turns": self.record.fidelity});
            if let Ok(bytes) = serde_json::to_vec_pretty(&file) {
                self.record.attach(FIDELITY_FILE, bytes);
            }
        }
        // Every input that shaped the case, whatever happened (never fails the case).
        let facts = &self.record.facts;
        let parts = super::inputs::CaseInputs {
            ctx: self.ctx,
            surface: self.surface,
            harness: self.harness,
            spec: self.spec,
            budget: self.budget,
            persona: facts.persona.as_ref(),
            turn_script: facts.turn_script.as_deref(),
        };
        let inputs = super::inputs::inputs(parts, &dest.pinned_inputs());
        match serde_json::to_vec_pretty(&crate::evidence::sorted(inputs)) {
            Ok(bytes) => self.record.attach(INPUTS_FILE, bytes),
            Err(e) => self
                .record
                .notes
                .push(format!("{INPUTS_FILE} not written: {e}")),
        }
        let manifest = self.record.manifest(
            dest.run_id(),
            self.ctx.tier,
            self.surface,
            repo_identity(&self.ctx.caller),
            result.as_ref().map(|_| ()),
        );
        let bundle = dest.write(&self.record, manifest, result.as_ref().map(|_| ()));
        let failed_step = self
            .record
            .steps
            .iter()
            .rev()
            .find(|s| s.kind == "step" && !s.ok)
            .map(|s| s.name.clone());
        Finished {
            result,
            bundle,
            fidelity,
            failed_step,
        }
    }

    /// The cleanup proof as the check step `finish` (only when a scratch world
    /// was made: before it, nothing was started).
    fn prove_cleanup(&mut self) -> Result<(), StepFailure> {
        let released = self.slots.release(&mut self.record);
        if !released.stopped.is_empty() {
            self.record.notes.push(format!(
                "stopped after the tmux server: {}",
                released.stopped.join("; ")
            ));
        }
        let Some(root) = released.root else {
            return Ok(());
        };
        // The modes whose mentor model is the stub provider promise no network peer
        // but the stub; a real-auth (or scrubbed) harness may install what it
        // installs for its user.
        let hermetic = matches!(
            self.ctx.selection.auth_mode,
            crate::selection::AuthMode::StubProvider | crate::selection::AuthMode::LocalModel
        );
        let checks = Checks::new()
            .check("the scratch sweep succeeded", |_: &mut Self| {
                released.sweep.map_or(Ok(()), Err)
            })
            .check("no scratch tree left", |_| {
                if root.exists() {
                    Err(format!("{} still exists", root.display()))
                } else {
                    Ok(())
                }
            })
            .check(
                "no process left (tmux server, harness, stub, product)",
                |_| {
                    let left = crate::scratch::leftovers::leftover_processes(&root);
                    if left.is_empty() {
                        Ok(())
                    } else {
                        Err(format!(
                            "processes left after the sweep: {}",
                            left.join("; ")
                        ))
                    }
                },
            )
            .check_if(
                hermetic,
                "no package-registry fetch from the scratch HOME (hermetic)",
                |_| {
                    if released.registry_fetches.is_empty() {
                        Ok(())
                    } else {
                        Err(format!(
                            "a harness fetched from a package registry in a hermetic trial: {}; \
                             its stub env must keep it offline (see scratch::registry)",
                            released.registry_fetches.join(", ")
                        ))
                    }
                },
            )
            .check_if(
                released.grok_trust_left.is_some(),
                "grok's real trusted_folders.toml keeps no entry of this world (seed 003)",
                |_| match &released.grok_trust_left {
                    Some((file, Ok(left))) if !left.is_empty() => Err(format!(
                        "{} still trusts this run's folders: {}; remove those tables by hand",
                        file.display(),
                        left.join(", ")
                    )),
                    Some((_, Err(e))) => Err(e.clone()),
                    _ => Ok(()),
                },
            )
            .check_if(
                released.server_exit.is_some(),
                "the product server exited 0 on SIGTERM",
                |_| match released.server_exit {
                    Some(Some(0)) | None => Ok(()),
                    Some(code) => Err(format!(
                        "studyloop web exited {code:?} on SIGTERM, expected 0"
                    )),
                },
            );
        self.verify("finish", checks)
    }
}

/// The acceptance layout in the run directory: `steps.json`, `turns.json`,
/// `transcript.json` and the attached files; counts say one case.
#[derive(Debug)]
pub struct RunDirBundle {
    run_id: RunId,
    dir: PathBuf,
}

impl RunDirBundle {
    /// A fresh bundle directory under `ctx`'s run directory.
    #[must_use]
    pub fn new(ctx: &crate::runner::TrialContext) -> Self {
        let run_id = RunId::generate();
        let dir = ctx.run_log.evidence_dir().join(run_id.as_str());
        Self { run_id, dir }
    }
}

impl Destination for RunDirBundle {
    fn run_id(&self) -> &RunId {
        &self.run_id
    }

    fn write(
        &self,
        record: &CaseRecord,
        mut m: Manifest,
        result: Result<(), &StepFailure>,
    ) -> Result<PathBuf, BundleError> {
        match m.outcome {
            Outcome::Completed => m.counts.passed = 1,
            Outcome::Skipped => m.counts.skipped = 1,
            _ => m.counts.failed = 1,
        }
        let mut writer = BundleWriter::create(&self.dir, m)?;
        writer.write_json("steps.json", &record.steps)?;
        writer.write_json("turns.json", &record.turns)?;
        if let Some(t) = &record.transcript {
            writer.write_json("transcript.json", t)?;
        }
        for (rel, bytes) in &record.files {
            writer.write_file(rel, bytes)?;
        }
        if result.is_err() {
            let artefacts: Vec<String> = record
                .files
                .iter()
                .map(|(rel, _)| rel.clone())
                .filter(|rel| rel.starts_with("screens/"))
                .chain(record.failure_artifacts.iter().cloned())
                .chain(["steps.json".to_owned(), "turns.json".to_owned()])
                .collect();
            writer.manifest_mut().failure_artifacts = artefacts;
        }
        Ok(writer.finish()?)
    }
}

/// The workspace's git identity, read once per process.
fn repo_identity(caller: &CallerEnv) -> RepoIdentity {
    static IDENTITY: OnceLock<RepoIdentity> = OnceLock::new();
    IDENTITY
        .get_or_init(|| RepoIdentity::detect(&bins::workspace_root(), caller))
        .clone()
}

fn outcome_word(outcome: Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{outcome:?}"))
}
