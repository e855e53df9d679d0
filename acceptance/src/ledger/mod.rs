//! The run directory's two append-only logs, and reading them back.
//!
//! `skip-ledger.jsonl` holds `{"trial","reason","time"}` per skip (written when a
//! trial is built ignored and when one skips at run time); `results.jsonl` holds
//! `{"trial","outcome","time","message","bundle"}` per finished trial. Each line
//! is one `write` on an `O_APPEND` fd, so concurrent nextest processes never
//! interleave. `run.json` marks which run the directory belongs to (written on
//! the first open; another run opening it is refused) and every line carries
//! that run key. Readers keep every line with its `file:line` (the sign-off
//! must see all of them, and names the sources that disagree); a trial's
//! summary outcome is the worst of all its lines, in one run or merged across
//! runs (one per nextest shard): failed, then skipped, then passed. `shard-<tier>.json`
//! says which cells a run directory answers for; `shards` merges shards and
//! names missing and contradicting cells. A skip is
//! never inferred from an exit code. This module records and reads; it does
//! not decide verdicts (the UAT sign-off does).

mod category;
mod error;
mod layout;
mod reader;
mod records;
mod shards;
mod writer;

pub use category::{FAILURE_CATEGORIES, FailureCategory};
pub use error::LedgerError;
pub use layout::{RESULTS_LOG, RUN_MARKER, SHARD_TIERS, SKIP_LEDGER, shard_record_file};
pub(crate) use reader::read_marker;
pub use reader::{LedgerDir, LogLine, MAX_LOG_BYTES, Origin, RunRecords, TrialStatus};
pub use records::{ResultMeta, ResultRecord, RunMarker, ShardRecord, SkipRecord, TrialOutcome};
pub use shards::{MergedCells, merge as merge_shards};
pub use writer::{RunLog, open_run, results_dir, run_key};
