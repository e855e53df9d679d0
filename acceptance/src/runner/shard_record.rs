//! This run's shard record (`shard-<tier>.json`, `ledger::ShardRecord`): which
//! cells the run answers for and which of them are this shard's.

use libtest_mimic::{Arguments, Trial};

use crate::caller_env::CallerEnv;
use crate::evidence::Tier;
use crate::ledger::{RunLog, ShardRecord};
use crate::runner::durations::Durations;
use crate::runner::partition::{PartitionKind, Sharding};
use crate::runner::trial::{Requirement, TrialSpec};
use crate::selection::Selection;

/// This run's `shard-<tier>.json`: the cells in scope (selected, and kept by the name
/// filters when the runner filters; under nextest it sees no filter) and this
/// shard's part of them.
#[expect(clippy::too_many_arguments, reason = "one call site; the run's facts")]
pub(crate) fn build(
    decided: &[(TrialSpec, Option<String>)],
    selection: &Selection,
    caller: &CallerEnv,
    args: &Arguments,
    nextest: bool,
    sharding: Option<Sharding>,
    run_log: &RunLog,
    tier: Tier,
) -> ShardRecord {
    let in_scope: Vec<(&str, bool)> = decided
        .iter()
        .filter(|(spec, _)| selected(spec, selection, caller))
        .filter(|(spec, _)| nextest || !args.is_filtered_out(&Trial::test(&spec.name, || Ok(()))))
        .map(|(spec, reason)| (spec.name.as_str(), reason.is_none()))
        .collect();
    let owned: Vec<String> = match sharding {
        Some(s) => s
            .partition
            .owned(&in_scope, &weights(s.partition.kind, Durations::recorded))
            .into_iter()
            .map(str::to_owned)
            .collect(),
        None => in_scope.iter().map(|(n, _)| (*n).to_owned()).collect(),
    };
    ShardRecord {
        run: run_log.key().to_owned(),
        tier: tier_word(tier).to_owned(),
        partition: sharding.map(|s| s.partition.to_string()),
        catalogue: in_scope.iter().map(|(n, _)| (*n).to_owned()).collect(),
        owned,
        rerun_of: None,
    }
}

/// The recorded durations as `time:` weighs them; the receipts (`load`) are read
/// only for that kind.
fn weights(kind: PartitionKind, load: impl FnOnce() -> Durations) -> impl Fn(&str) -> u64 {
    let durations = (kind == PartitionKind::Time).then(load);
    move |trial| durations.as_ref().map_or(1, |d| d.estimate(trial))
}

/// Whether the harness selection selects `spec` (a cell outside it belongs to
/// no shard of this run: another harness group runs it).
fn selected(spec: &TrialSpec, selection: &Selection, caller: &CallerEnv) -> bool {
    spec.requirements
        .iter()
        .filter(|r| matches!(r, Requirement::HarnessSelected(_)))
        .all(|r| r.check(selection, caller).is_ok())
}

pub(crate) fn tier_word(tier: Tier) -> &'static str {
    match tier {
        Tier::Acceptance => "acceptance",
        Tier::Uat => "uat",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::durations::Recorded;
    use crate::runner::trial::TrialReport;
    use crate::selection::HarnessName;

    #[test]
    fn only_time_reads_the_receipts_and_it_weighs_by_them() {
        for kind in [PartitionKind::Hash, PartitionKind::Count] {
            let w = weights(kind, || panic!("{kind:?} read the receipts"));
            assert_eq!(w("cli-tmux::codex"), 1, "{kind:?} weighs every trial alike");
        }
        let recorded = || {
            Durations::from_runs([Recorded {
                trial: "cli-tmux::codex".to_owned(),
                date: "2026-12-01".to_owned(),
                ms: 42_000,
                committed: true,
            }])
        };
        assert_eq!(
            weights(PartitionKind::Time, recorded)("cli-tmux::codex"),
            42_000
        );
    }

    #[test]
    fn a_cell_of_a_harness_not_selected_belongs_to_no_shard_of_this_run() {
        let caller = CallerEnv::from_pairs([("STUDYLOOP_ACC_HARNESS", "kiro")]);
        let selection = Selection::from_env(&caller).unwrap();
        let cell = |h| {
            TrialSpec::gated(format!("cli-tmux::{h}"), |_| TrialReport::passed())
                .requires(Requirement::HarnessSelected(h))
        };
        assert!(selected(&cell(HarnessName::Kiro), &selection, &caller));
        assert!(!selected(&cell(HarnessName::Pi), &selection, &caller));
        // A cell that names no harness is every selection's.
        let free = TrialSpec::gated("guards::tree".to_owned(), |_| TrialReport::passed());
        assert!(selected(&free, &selection, &caller));
    }
}
