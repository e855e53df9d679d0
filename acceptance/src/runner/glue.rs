//! From a catalogue to an exit code: the gate (`crate::gate`), selection errors, skip decisions,
//! the ledger and results lines around each trial.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::bins;
use crate::caller_env::CallerEnv;
use crate::evidence::Tier;
use crate::gate;
use crate::gate::Gates;
use crate::ledger::{FailureCategory, ResultMeta, RunLog, TrialOutcome, open_run};
use crate::runner::durations::Durations;
use crate::runner::partition::{self, Sharding};
use crate::runner::rerun::{self, Rerun, RerunError};
use crate::runner::shard_record;
use crate::runner::trial::{Body, Requirement, TrialContext, TrialReport, TrialSpec, Verdict};
use crate::selection::{ACC_RERUN_FAILED, Selection};

/// Exit code for a run refused before any trial (bad selection, unusable run
/// directory).
const REFUSED: u8 = 2;

/// A runner's whole `main`: real environment, real arguments (the runner's own
/// `--partition K/N` among them, see `runner::partition`).
pub fn main(tier: Tier, catalogue: impl Fn(&Selection) -> Vec<TrialSpec>) -> ExitCode {
    let words: Vec<String> = std::env::args().collect();
    run_words(tier, &CallerEnv::capture(), &words, catalogue)
}

/// As [`run_with`] with the arguments as words (the first is the program name),
/// `--partition` included: for a runner started inside another binary (the
/// Ctrl-C and shard tests' children).
pub fn run_with_words(
    tier: Tier,
    caller: &CallerEnv,
    words: &[&str],
    catalogue: impl Fn(&Selection) -> Vec<TrialSpec>,
) -> ExitCode {
    let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
    run_words(tier, caller, &words, catalogue)
}

fn run_words(
    tier: Tier,
    caller: &CallerEnv,
    words: &[String],
    catalogue: impl Fn(&Selection) -> Vec<TrialSpec>,
) -> ExitCode {
    match partition::split_flag(words) {
        Ok((flag, rest)) => run_inner(
            tier,
            caller,
            &Arguments::from_iter(rest),
            flag.as_deref(),
            catalogue,
        ),
        Err(err) => {
            eprintln!("{}: {err}", label(tier));
            ExitCode::from(REFUSED)
        }
    }
}

/// As [`main`] with an explicit environment and arguments.
pub fn run_with(
    tier: Tier,
    caller: &CallerEnv,
    args: &Arguments,
    catalogue: impl Fn(&Selection) -> Vec<TrialSpec>,
) -> ExitCode {
    run_inner(tier, caller, args, None, catalogue)
}

fn run_inner(
    tier: Tier,
    caller: &CallerEnv,
    args: &Arguments,
    flag: Option<&str>,
    catalogue: impl Fn(&Selection) -> Vec<TrialSpec>,
) -> ExitCode {
    let label = label(tier);
    let gates = Gates::from_env(caller);
    let gate_reason = gate::closed_reason(tier, gates);
    let selection = match (gate_reason, Selection::from_env(caller)) {
        (_, Ok(selection)) => selection,
        // A closed gate always skips; a bad selection matters only once open.
        (Some(_), Err(_)) => Selection::defaults(),
        (None, Err(errors)) => {
            eprintln!("{label}: {errors}");
            eprintln!("{label}: no trial was run");
            return ExitCode::from(REFUSED);
        }
    };
    let nextest = caller.var("NEXTEST").as_deref() == Some("1");
    let sharding = match partition::resolve(flag, caller, nextest) {
        Ok(sharding) => sharding,
        Err(err) => {
            eprintln!("{label}: {err}");
            eprintln!("{label}: no trial was run");
            return ExitCode::from(REFUSED);
        }
    };
    let run_log = match bins::target_dir()
        .map_err(|e| e.to_string())
        .and_then(|target| open_run(caller, &target).map_err(|e| e.to_string()))
    {
        Ok(log) => log,
        Err(err) => {
            eprintln!("{label}: cannot open the run directory: {err}");
            return ExitCode::from(REFUSED);
        }
    };
    if !args.list {
        // Worlds a SIGKILLed run left (tmux server, harness, tree) go first;
        // live runners' worlds are never touched (scratch::reap_orphans).
        let reaped = crate::scratch::reap_orphans(caller);
        for line in crate::scratch::describe_reap(&reaped, false) {
            eprintln!("{label}: {line}");
        }
    }
    let mut specs = catalogue(&selection);
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let rerun = match rerun_of(caller, gate_reason.is_none(), &run_log, tier, &mut specs) {
        Ok(rerun) => rerun,
        Err(err) => {
            eprintln!("{label}: {err}");
            eprintln!("{label}: no trial was run");
            return ExitCode::from(REFUSED);
        }
    };
    // Real-auth: a harness that is not logged in is a listed skip of all its trials,
    // decided here so nextest sees a skip, not a failure (`login_preflight`). Not for
    // a plain `--list`: listing alone never calls a model.
    // Real-auth: every harness trial needs its capability approved (before the login
    // probe, which itself bills: an unapproved harness is never probed).
    if gate_reason.is_none() {
        specs = super::approval_gate::require_approvals(specs, &selection);
        if !args.list || nextest {
            for record in selection.approvals.in_force() {
                eprintln!(
                    "{label}: approved by STUDYLOOP_ACC_APPROVE: {}",
                    record.entry()
                );
            }
        }
    }
    if gate_reason.is_none() && (!args.list || nextest) {
        specs = super::login_preflight::require_logins(specs, &selection, caller, &run_log);
    }
    // STUDYLOOP_ACC_REPEAT=N: the catalogue builds every trial N times; the
    // attempts of one name run in one trial, one after another (each with its
    // own bundle and results line), so trial names stay what nextest and the
    // sign-off know.
    let mut repeats = Repeats::build(&catalogue, &selection, gate_reason.is_none() && !args.list);
    let decided: Vec<(TrialSpec, Option<String>)> = specs
        .into_iter()
        .map(|spec| {
            let reason = skip_reason(&spec, gate_reason, &selection, caller);
            (spec, reason)
        })
        .collect();
    let mut shard = shard_record::build(
        &decided, &selection, caller, args, nextest, sharding, &run_log, tier,
    );
    shard.rerun_of = rerun.as_ref().map(|r| r.key.clone());
    if let Err(err) = run_log.record_shard(&shard) {
        eprintln!("{label}: {err}");
        eprintln!("{label}: no trial was run");
        return ExitCode::from(REFUSED);
    }
    let in_scope: BTreeSet<&str> = shard.catalogue.iter().map(String::as_str).collect();
    let owned: BTreeSet<&str> = shard.owned.iter().map(String::as_str).collect();

    let mut trials = Vec::with_capacity(decided.len());
    let mut skipped = 0usize;
    for (spec, reason) in decided {
        let mine = owned.contains(spec.name.as_str()) || !in_scope.contains(spec.name.as_str());
        if !mine && sharding.is_some_and(|s| !s.by_nextest) {
            // The runner deals the shards itself: another shard's trial is not listed.
            continue;
        }
        let ctx = TrialContext {
            name: spec.name.clone(),
            tier,
            selection: selection.clone(),
            caller: caller.clone(),
            run_log: run_log.clone(),
        };
        let trial = match (reason, mine) {
            (None, true) => {
                let more = repeats.take(&spec.name);
                // A rerun's attempts follow the earlier run's (`runner::rerun`).
                let first = rerun
                    .as_ref()
                    .and_then(|r| r.trials.get(&spec.name))
                    .map_or(1, |earlier| earlier.saturating_add(1));
                active_trial(spec, more, ctx, nextest, first)
            }
            (None, false) => foreign_trial(&spec.name, sharding, &run_log),
            (Some(reason), _) => {
                let trial = skipped_trial(&spec.name, &reason, &run_log, nextest);
                // Ledger what this invocation would list or run, for this shard
                // only. nextest lists every binary twice (`--list`, then
                // `--list --ignored`); only the second lists exactly the skipped
                // trials, so it alone ledgers them (both did: every skip twice).
                let counted = mine
                    && !args.is_filtered_out(&trial)
                    && if args.list {
                        nextest && args.ignored
                    } else {
                        true
                    };
                if counted {
                    skipped += 1;
                    if let Err(err) = run_log.record_skip(&spec.name, &reason) {
                        eprintln!("{label}: {err}");
                    }
                }
                trial
            }
        };
        trials.push(trial);
    }
    if skipped > 0 && !args.list {
        let why = gate_reason.unwrap_or("see each trial's reason");
        eprintln!(
            "{label}: {skipped} trial(s) skipped ({why}); reasons in {}",
            run_log.dir().join(crate::ledger::SKIP_LEDGER).display()
        );
    }
    if gate_reason.is_none() && !args.list && !nextest {
        // Long poles first: libtest-mimic hands trials to its threads in list
        // order, so a long trial listed last would run alone at the end. nextest
        // runs each trial as its own process and orders them itself; with the gate
        // closed every trial is a skip, so the receipts are not read at all.
        let durations = Durations::recorded();
        trials.sort_by_cached_key(|t| std::cmp::Reverse(durations.estimate(t.name())));
    }
    let code = libtest_mimic::run(args, trials).exit_code();
    if let Err(err) = super::junit::write(run_log.dir(), tier) {
        eprintln!("{label}: {err}");
    }
    code
}

/// `STUDYLOOP_ACC_RERUN_FAILED`: the earlier run, with `specs` cut to the
/// trials it failed (`None` when not asked, or while the gate is closed).
fn rerun_of(
    caller: &CallerEnv,
    open: bool,
    run_log: &RunLog,
    tier: Tier,
    specs: &mut Vec<TrialSpec>,
) -> Result<Option<Rerun>, RerunError> {
    let Some(value) = caller
        .var(ACC_RERUN_FAILED)
        .filter(|v| open && !v.trim().is_empty())
    else {
        return Ok(None);
    };
    let rerun = rerun::resolve(value.trim(), run_log.dir(), shard_record::tier_word(tier))?;
    let unknown: Vec<&str> = rerun
        .trials
        .keys()
        .filter(|name| !specs.iter().any(|s| &s.name == *name))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(RerunError::Unknown {
            of: rerun.of.clone(),
            names: unknown.join(", "),
        });
    }
    specs.retain(|s| rerun.trials.contains_key(&s.name));
    let label = label(tier);
    if specs.is_empty() {
        eprintln!(
            "{label}: nothing failed in {}; nothing to rerun",
            rerun.of.display()
        );
    } else {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        eprintln!(
            "{label}: rerunning {} trial(s) that failed in {} (run {}): {}",
            names.len(),
            rerun.of.display(),
            rerun.key,
            names.join(", ")
        );
    }
    Ok(Some(rerun))
}

/// A trial nextest was told to run that this runner's reckoning of the same
/// partition gives to another shard: a failure naming both, never a silent
/// double run.
fn foreign_trial(name: &str, sharding: Option<Sharding>, run_log: &RunLog) -> Trial {
    let partition = sharding.map_or_else(|| "unsharded".to_owned(), |s| s.partition.to_string());
    failing_trial(
        name,
        format!(
            "`{name}` is not in shard {partition} by this runner's reckoning of nextest's partitioning (nextest counts `count:` partitions after its name filters, which the runner cannot see): use hash:K/N, or the same filters via STUDYLOOP_ACC_HARNESS"
        ),
        run_log,
    )
}

/// A trial that, if run, records `message` as its failure and fails with it.
fn failing_trial(name: &str, message: String, run_log: &RunLog) -> Trial {
    let (name_owned, log) = (name.to_owned(), run_log.clone());
    Trial::test(name, move || {
        let _ = log.record_result(
            &name_owned,
            TrialOutcome::Failed,
            Some(&message),
            None,
            None,
        );
        Err(Failed::from(message))
    })
}

fn label(tier: Tier) -> &'static str {
    match tier {
        Tier::Acceptance => "studyloop-acceptance",
        Tier::Uat => "studyloop-uat",
    }
}

/// The gate first; then harness selection alone (an unselected harness needs
/// nothing else said); then every other unmet requirement, joined.
fn skip_reason(
    spec: &TrialSpec,
    gate_reason: Option<&str>,
    selection: &Selection,
    caller: &CallerEnv,
) -> Option<String> {
    if spec.gated
        && let Some(reason) = gate_reason
    {
        return Some(reason.to_owned());
    }
    let (selection_reqs, others): (Vec<&Requirement>, Vec<&Requirement>) = spec
        .requirements
        .iter()
        .partition(|r| matches!(r, Requirement::HarnessSelected(_)));
    for req in selection_reqs {
        if let Err(unmet) = req.check(selection, caller) {
            return Some(unmet.to_string());
        }
    }
    let unmet: Vec<String> = others
        .iter()
        .filter_map(|r| r.check(selection, caller).err())
        .map(|u| u.to_string())
        .collect();
    (!unmet.is_empty()).then(|| unmet.join("; "))
}

fn skipped_trial(name: &str, reason: &str, run_log: &RunLog, nextest: bool) -> Trial {
    if nextest {
        let message = format!("forced to run although it cannot: {reason}");
        failing_trial(name, message, run_log).with_ignored_flag(true)
    } else {
        let reason = reason.to_owned();
        Trial::ignorable_test(name, move || Ok(Completion::ignored_with(reason)))
    }
}

fn active_trial(
    spec: TrialSpec,
    more: Vec<Body>,
    ctx: TrialContext,
    nextest: bool,
    first: u32,
) -> Trial {
    let TrialSpec { name, body, .. } = spec;
    Trial::ignorable_test(name, move || {
        let attempts = 1 + more.len();
        let mut reports = Vec::with_capacity(attempts);
        for (i, body) in std::iter::once(body).chain(more).enumerate() {
            let started = std::time::Instant::now();
            let report = catch_unwind(AssertUnwindSafe(|| body(&ctx))).unwrap_or_else(|panic| {
                TrialReport::failed(format!("panicked: {}", panic_message(&panic)))
            });
            let elapsed = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let attempt = u32::try_from(i).unwrap_or(u32::MAX).saturating_add(first);
            record(&ctx, &report, attempt, elapsed);
            reports.push(report);
        }
        match combine(reports, attempts) {
            Verdict::Passed => Ok(Completion::Completed),
            Verdict::Failed(message) => Err(Failed::from(message)),
            Verdict::Skipped(reason) if nextest => Err(Failed::from(format!(
                "skipped at run time: {reason} (reported as a failure because nextest would show a runtime skip as PASS; the skip ledger has it)"
            ))),
            Verdict::Skipped(reason) => Ok(Completion::ignored_with(reason)),
        }
    })
}

/// One verdict for every attempt of a trial: it passes only when all pass
/// (pass^k); any failure fails it, naming each failed attempt and its bundle.
fn combine(reports: Vec<TrialReport>, attempts: usize) -> Verdict {
    let mut failures = Vec::new();
    let mut skipped = None;
    let mut passed = 0usize;
    for (i, report) in reports.into_iter().enumerate() {
        let bundle_note = report
            .bundle
            .as_ref()
            .map(|b| format!(" (evidence: {})", b.display()))
            .unwrap_or_default();
        match report.verdict {
            Verdict::Passed => passed += 1,
            Verdict::Failed(m) if attempts == 1 => failures.push(format!("{m}{bundle_note}")),
            Verdict::Failed(m) => {
                failures.push(format!("attempt {}/{attempts}: {m}{bundle_note}", i + 1))
            }
            Verdict::Skipped(r) => skipped = skipped.or(Some(r)),
        }
    }
    if !failures.is_empty() {
        let mut message = failures.join("; ");
        if attempts > 1 {
            let flaky = if passed > 0 { ", flaky" } else { "" };
            let _ = write!(
                message,
                " ({passed} of {attempts} attempts passed: pass^{attempts} failed{flaky})"
            );
        }
        return Verdict::Failed(message);
    }
    match skipped {
        Some(reason) => Verdict::Skipped(reason),
        None => Verdict::Passed,
    }
}

/// The extra attempts' bodies by trial name, when repeats were asked for.
struct Repeats(std::collections::BTreeMap<String, Vec<Body>>);

impl Repeats {
    fn build(
        catalogue: &impl Fn(&Selection) -> Vec<TrialSpec>,
        selection: &Selection,
        running: bool,
    ) -> Self {
        let mut map: std::collections::BTreeMap<String, Vec<Body>> = Default::default();
        if running {
            for _ in 1..selection.repeat {
                for spec in catalogue(selection) {
                    map.entry(spec.name).or_default().push(spec.body);
                }
            }
        }
        Self(map)
    }

    fn take(&mut self, name: &str) -> Vec<Body> {
        self.0.remove(name).unwrap_or_default()
    }
}

fn record(ctx: &TrialContext, report: &TrialReport, attempt: u32, elapsed_ms: u64) {
    let (outcome, message) = match &report.verdict {
        Verdict::Passed => (TrialOutcome::Passed, None),
        Verdict::Failed(m) => (TrialOutcome::Failed, Some(m.as_str())),
        Verdict::Skipped(r) => (TrialOutcome::Skipped, Some(r.as_str())),
    };
    let category = match &report.verdict {
        Verdict::Failed(m) => Some(FailureCategory::classify(
            m,
            m.contains("(outcome budget-exhausted)"),
        )),
        _ => None,
    };
    let log = &ctx.run_log;
    if let Verdict::Skipped(reason) = &report.verdict
        && let Err(err) = log.record_skip(&ctx.name, reason)
    {
        eprintln!("{}: {err}", label(ctx.tier));
    }
    let meta = ResultMeta {
        attempt: Some(attempt),
        elapsed_ms: Some(elapsed_ms),
        category,
    };
    if let Err(err) = log.record_result_meta(
        &ctx.name,
        outcome,
        message,
        report.bundle.as_deref(),
        report.fidelity.as_ref(),
        meta,
    ) {
        eprintln!("{}: {err}", label(ctx.tier));
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::GATE_OFF_REASON;
    use crate::selection::HarnessName;

    fn spec(gated: bool) -> TrialSpec {
        let spec = if gated {
            TrialSpec::gated("probe::pi", |_| TrialReport::passed())
        } else {
            TrialSpec::ungated("meta::x", |_| TrialReport::passed())
        };
        spec.requires(Requirement::HarnessSelected(HarnessName::Pi))
            .requires(Requirement::EnvVar {
                name: "A_KEY_HERE",
                why: "a",
            })
            .requires(Requirement::EnvVar {
                name: "B_KEY_HERE",
                why: "b",
            })
    }

    #[test]
    fn gate_first_then_selection_alone_then_every_other_requirement() {
        let caller = CallerEnv::default();
        let all = Selection::defaults();
        let reason = skip_reason(&spec(true), Some(GATE_OFF_REASON), &all, &caller);
        assert_eq!(reason.as_deref(), Some(GATE_OFF_REASON));
        // Ungated trials ignore the gate but not their requirements.
        let reason = skip_reason(&spec(false), Some(GATE_OFF_REASON), &all, &caller).unwrap();
        assert_eq!(
            reason,
            "A_KEY_HERE is not set (a); B_KEY_HERE is not set (b)"
        );
        let kiro_only = Selection {
            harnesses: vec![HarnessName::Kiro],
            ..Selection::defaults()
        };
        let reason = skip_reason(&spec(true), None, &kiro_only, &caller).unwrap();
        assert_eq!(
            reason,
            "pi not selected via STUDYLOOP_ACC_HARNESS (selected: kiro)"
        );
        let keyed = CallerEnv::from_pairs([("A_KEY_HERE", "x"), ("B_KEY_HERE", "y")]);
        assert_eq!(skip_reason(&spec(true), None, &all, &keyed), None);
    }
}
