//! The real-auth login, checked once per harness when the catalogue is built, so a
//! harness that is not signed in is a *listed* skip of every one of its trials.
//!
//! Why at catalogue time: a skip found at run time is ignored-with-reason under plain
//! `cargo test` but must be reported as a failure under nextest, which shows a run-time
//! ignore as PASS (see `runner`). Only a skip decided before the trials are listed is a
//! skip under both. In real-auth mode the login is the operator's, outside any case, so
//! it can be asked up front: the harness's authenticated probe (`harness_spec::auth_probe`: a
//! one-shot prompt, or kiro's `whoami`) runs in a throwaway real-auth scratch world. A
//! probe that says "not logged in" makes the requirement "<h> logged in" unmet, with the
//! reason "not logged in: <h>: <evidence>; <fix>". Any other probe result leaves the
//! trials to run (and the case engine still turns a login failure met later into a
//! named skip, `case::auth`).
//!
//! In the stub-provider and local-model modes the harness's model path is the case's
//! own stub, provisioned inside the case: nothing exists to ask before it runs, so
//! those modes have no preflight; their login failures (the stub's 401 drill,
//! `STUDYLOOP_ACC_STUB_FAULT=401`) are run-time skips.
//!
//! One answer per harness per run: nextest lists the binary twice and starts one
//! process per trial, all sharing the run directory (`NEXTEST_RUN_ID`), so the answer
//! is kept there (`login-<harness>.json`, written atomically) and read back.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::caller_env::CallerEnv;
use crate::harness_spec::auth_probe::{self, ProbeError};
use crate::harness_spec::{self, ProbeKind};
use crate::ledger::RunLog;
use crate::runner::approval_gate;
use crate::runner::trial::{Requirement, TrialSpec};
use crate::scratch::{Env, Scratch, find_on_path};
use crate::selection::{AuthMode, HarnessName, Selection};

/// A kept answer is a few hundred bytes; anything larger is not one.
const ANSWER_LIMIT: u64 = 64 * 1024;

/// What one preflight found, as kept in the run directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Answer {
    harness: String,
    /// The skip reason when not logged in.
    unmet: Option<String>,
    /// What the probe said otherwise (it answered, or failed for another reason).
    seen: String,
}

/// Adds "<h> logged in" to every trial of a selected, installed harness when the run
/// is real-auth; the requirement is unmet when its probe said "not logged in".
pub(crate) fn require_logins(
    specs: Vec<TrialSpec>,
    selection: &Selection,
    caller: &CallerEnv,
    run_log: &RunLog,
) -> Vec<TrialSpec> {
    if selection.auth_mode != AuthMode::RealAuth {
        return specs;
    }
    let wanted: BTreeSet<HarnessName> = specs
        .iter()
        .filter(|s| s.gated)
        .flat_map(|s| s.requirements.iter())
        .filter_map(|r| match r {
            // An unapproved harness is never probed: the probe bills too.
            Requirement::HarnessSelected(h)
                if selection.selects(*h) && approval_gate::harness_approved(selection, *h) =>
            {
                Some(*h)
            }
            _ => None,
        })
        .collect();
    let answers: Vec<(HarnessName, Answer)> = wanted
        .into_iter()
        .filter_map(|h| answer(h, caller, run_log).map(|a| (h, a)))
        .collect();
    specs
        .into_iter()
        .map(|spec| {
            let harness = spec.harness();
            let found = answers.iter().find(|(h, _)| Some(*h) == harness);
            match found {
                Some((h, a)) if spec.gated => spec.requires(Requirement::Checked {
                    what: format!("{h} logged in (real-auth preflight: {})", a.seen),
                    unmet: a.unmet.clone(),
                }),
                _ => spec,
            }
        })
        .collect()
}

fn cache_file(run_log: &RunLog, harness: HarnessName) -> PathBuf {
    run_log.dir().join(format!("login-{harness}.json"))
}

/// The kept answer, else a fresh probe (kept for the run's other processes). `None`
/// when the harness cannot be probed here (no authenticated probe, not installed: its
/// own requirements say so).
fn answer(harness: HarnessName, caller: &CallerEnv, run_log: &RunLog) -> Option<Answer> {
    let spec = harness_spec::spec(harness);
    if !matches!(spec.probe, ProbeKind::Authenticated { .. }) {
        return None;
    }
    find_on_path(&Env::scratch_path(caller), harness.binary())?;
    let file = cache_file(run_log, harness);
    let kept = crate::private_fs::read_regular(&file, ANSWER_LIMIT)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Answer>(&bytes).ok())
        .filter(|a| a.harness == harness.as_str());
    if kept.is_some() {
        return kept;
    }
    let fresh = probe_now(harness, caller);
    if let Ok(bytes) = serde_json::to_vec_pretty(&fresh)
        && let Err(e) = crate::evidence::atomic_write(&file, &bytes)
    {
        eprintln!("login preflight: cannot keep {}: {e}", file.display());
    }
    Some(fresh)
}

/// The harness's probe in a throwaway real-auth scratch world (swept when dropped).
fn probe_now(harness: HarnessName, caller: &CallerEnv) -> Answer {
    let spec = harness_spec::spec(harness);
    let result = Scratch::create_with(caller.clone(), AuthMode::RealAuth)
        .map_err(|e| ProbeError::Run(format!("no scratch world for the probe: {e}")))
        .and_then(|scratch| {
            let env = scratch.env();
            let binary = env
                .find_binary(harness.binary())
                .ok_or_else(|| ProbeError::Run(format!("{} not on PATH", harness.binary())))?;
            let dir = scratch.root().join("probe");
            auth_probe::run(spec, &scratch, &env, &binary, &dir, None)
        });
    let (unmet, seen) = match result {
        Ok(r) => (None, format!("answered in {} ms", r.elapsed.as_millis())),
        Err(ProbeError::NotLoggedIn(out)) => (Some(out.to_string()), "not logged in".into()),
        Err(other) => (None, format!("probe failed otherwise: {other}")),
    };
    Answer {
        harness: harness.as_str().to_owned(),
        unmet,
        seen: crate::harness_spec::login::printable(&seen, 300),
    }
}
