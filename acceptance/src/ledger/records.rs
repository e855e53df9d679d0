//! The two line formats.

use serde::{Deserialize, Serialize};

/// How a trial ended, as recorded in `results.jsonl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrialOutcome {
    /// It ran and passed.
    Passed,
    /// It did not run (or stopped itself); the reason says why.
    Skipped,
    /// It ran and failed.
    Failed,
}

impl TrialOutcome {
    /// Rank for merging runs: the worse outcome wins.
    pub(crate) fn severity(self) -> u8 {
        match self {
            TrialOutcome::Passed => 0,
            TrialOutcome::Skipped => 1,
            TrialOutcome::Failed => 2,
        }
    }

    /// The word used in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            TrialOutcome::Passed => "passed",
            TrialOutcome::Skipped => "skipped",
            TrialOutcome::Failed => "failed",
        }
    }
}

/// One `skip-ledger.jsonl` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkipRecord {
    /// Trial name.
    pub trial: String,
    /// The named reason.
    pub reason: String,
    /// RFC 3339 UTC.
    pub time: String,
    /// The run key of the run that wrote it (absent in lines written before run keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// One `results.jsonl` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultRecord {
    /// Trial name.
    pub trial: String,
    /// How it ended.
    pub outcome: TrialOutcome,
    /// RFC 3339 UTC.
    pub time: String,
    /// The failure message or skip reason.
    pub message: Option<String>,
    /// The evidence bundle it wrote, if any.
    pub bundle: Option<String>,
    /// `sha256:<hex>` of the bundle's `manifest.json` exactly as it was on disk when
    /// this line was written: verify and the sign-off compare it, so a manifest
    /// edited (and re-sealed) later no longer matches. Absent without a bundle and
    /// in lines written before it; a bundle the sign-off relies on needs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
    /// The run key of the run that wrote it (absent in lines written before run keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The cell's reply fidelity (ratio `null` when unknown); absent for a
    /// trial that recorded no mentor reply and in lines written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<crate::fidelity::CellFidelity>,
    /// Which attempt of the trial this line records (1-based) when
    /// `STUDYLOOP_ACC_REPEAT` asked for repeats; absent in older lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The trial body's wall time; absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// A failure's category from the fixed taxonomy; absent for a pass or skip.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<crate::ledger::FailureCategory>,
}

/// What a results line may record beyond its outcome: the attempt, the wall
/// time and a failure's category (`None` = not known / not applicable).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResultMeta {
    /// 1-based attempt number.
    pub attempt: Option<u32>,
    /// Wall time of the trial body.
    pub elapsed_ms: Option<u64>,
    /// A failure's category.
    pub category: Option<crate::ledger::FailureCategory>,
}

/// `run.json`: which run a run directory belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunMarker {
    /// The run key (`NEXTEST_RUN_ID`, or the run id of the one process).
    pub run: String,
    /// When the directory was first opened (RFC 3339 UTC).
    pub time: String,
}

/// `shard-<tier>.json`: which cells a run directory answers for. Written once per run
/// (the first process of a nextest run writes it; the others must agree), so
/// merging shards can name the cells a missing or cut-short shard never ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardRecord {
    /// The run key (as in `run.json`).
    pub run: String,
    /// `acceptance` or `uat`: which runner wrote it.
    pub tier: String,
    /// `hash:K/N` / `count:K/N` / `time:K/N`, or `None` for an unsharded run.
    pub partition: Option<String>,
    /// Every cell the whole partitioned run answers for, in name order: the
    /// trials of the runner's catalogue its harness selection selects (and, when
    /// the runner itself filters, its name filters keep).
    pub catalogue: Vec<String>,
    /// This shard's part of `catalogue`.
    pub owned: Vec<String>,
    /// The run key of the earlier run this one reruns the failed trials of
    /// (`STUDYLOOP_ACC_RERUN_FAILED`): its results are later attempts of that
    /// run's trials, not another shard's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<String>,
}
