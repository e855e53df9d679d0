//! The lane's outer "finally": stop what the lane started, write the evidence
//! bundle, sweep the scratch tree and prove nothing was left behind. Runs on
//! every outcome (a failed launch, a failed end or resume, a panic).

use std::path::PathBuf;

use super::{Lane, LaneFailure, StepRecord, validate};
use crate::bins;
use crate::evidence::{BundleWriter, EvidenceError, Manifest, Outcome, RepoIdentity, RunId};
use crate::runner::TrialReport;

impl Lane<'_> {
    /// Ends the lane: always call it, with what the steps returned.
    pub fn finish(mut self, result: Result<(), LaneFailure>) -> TrialReport {
        let root = self.scratch.as_ref().map(|s| s.root().to_owned());
        // The harness runs in the product's tmux panes: stop their process
        // groups and the server before anything is swept.
        if let Some(tmux) = &self.tmux {
            tmux.kill_server();
        }
        if let Some(stub) = self.stub.as_mut() {
            if let Ok(log) = std::fs::read(stub.log_path()) {
                self.files.push(("stub-requests.jsonl".into(), log));
            }
            stub.stop();
        }
        let mut result = result;
        if let Some(root) = &root {
            // A harness may have forked out of its pane's process group, or be
            // flushing its session files; stop it before the sweep races it.
            let stopped = validate::stop_leftovers(root, std::time::Duration::from_millis(1500));
            if !stopped.is_empty() {
                self.notes.push(format!(
                    "stopped after the tmux server: {}",
                    stopped.join("; ")
                ));
            }
        }
        if let Some(scratch) = self.scratch.take() {
            let start = std::time::Instant::now();
            let sweep = scratch
                .close()
                .err()
                .map(|e| format!("scratch sweep refused: {e}"));
            let leftovers = root
                .as_deref()
                .map(validate::leftover_processes)
                .unwrap_or_default();
            let problem = sweep.or_else(|| {
                (!leftovers.is_empty())
                    .then(|| format!("processes left after the sweep: {}", leftovers.join("; ")))
            });
            self.steps.push(StepRecord {
                kind: "check",
                name: "nothing left after the sweep (no tmux server, no harness process, no scratch tree)".into(),
                ok: problem.is_none(),
                elapsed_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
                error: problem.clone(),
            });
            if let (Some(p), Ok(())) = (problem, &result) {
                result = Err(LaneFailure::errored(p));
            }
        }
        let outcome = match &result {
            Ok(()) => Outcome::Completed,
            Err(f) => f.outcome,
        };
        let bundle = self.write_bundle(outcome, result.as_ref().err());
        let report = match (&result, &bundle) {
            (Ok(()), Ok(_)) => TrialReport::passed(),
            (Ok(()), Err(e)) => TrialReport::failed(format!(
                "the lane passed but its evidence bundle failed: {e}"
            )),
            (Err(f), _) if f.outcome == Outcome::Skipped => TrialReport::skipped(f.message.clone()),
            (Err(f), _) => {
                TrialReport::failed(format!("{} (outcome {})", f.message, outcome_word(outcome)))
            }
        };
        match bundle {
            Ok(dir) => report.with_bundle(dir),
            Err(_) => report,
        }
    }

    fn write_bundle(
        &self,
        outcome: Outcome,
        failure: Option<&LaneFailure>,
    ) -> Result<PathBuf, EvidenceError> {
        let run_id = RunId::generate();
        let mut m = Manifest::new(&run_id, self.ctx.tier, &self.ctx.name, self.surface);
        let repo = RepoIdentity::detect(&bins::workspace_root(), &self.ctx.caller);
        m.harness = Some(self.harness.to_string());
        m.harness_version = self.version.clone();
        m.binary_path = self.binary.as_ref().map(|p| p.display().to_string());
        m.auth_mode = Some(self.ctx.selection.auth_mode);
        m.actor_backend = Some(self.ctx.selection.actor.as_str().to_owned());
        m.actor_model = self.actor_model.clone();
        m.outcome = outcome;
        m.repo_sha = repo.sha;
        m.dirty = repo.dirty;
        m.patch_identity = repo.patch_identity;
        m.seeds.insert("stub_nonce".into(), self.seed);
        m.notes.extend(self.notes.iter().cloned());
        match outcome {
            Outcome::Completed => m.counts.passed = 1,
            Outcome::Skipped => m.counts.skipped = 1,
            _ => m.counts.failed = 1,
        }
        if let Some(f) = failure {
            m.notes.push(f.message.clone());
        }
        let mut writer =
            BundleWriter::create(self.ctx.run_log.evidence_dir().join(run_id.as_str()), m)?;
        writer.write_json("steps.json", &self.steps)?;
        writer.write_json("turns.json", &self.turns)?;
        for (rel, bytes) in &self.files {
            writer.write_file(rel, bytes)?;
        }
        if failure.is_some() {
            let artefacts: Vec<String> = self
                .files
                .iter()
                .map(|(rel, _)| rel.clone())
                .filter(|rel| rel.starts_with("screens/"))
                .chain(["steps.json".to_owned(), "turns.json".to_owned()])
                .collect();
            writer.manifest_mut().failure_artifacts = artefacts;
        }
        writer.finish()
    }
}

fn outcome_word(outcome: Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{outcome:?}"))
}
