//! The run directory's two append-only logs, and reading them back.
//!
//! `skip-ledger.jsonl` holds `{"trial","reason","time"}` per skip (written when a
//! trial is built ignored and when one skips at run time); `results.jsonl` holds
//! `{"trial","outcome","time","message","bundle"}` per finished trial. Each line
//! is one `write` on an `O_APPEND` fd, so concurrent nextest processes never
//! interleave. Readers take the last line per trial; a results line beats a
//! skip-ledger line of the same run; across merged runs (one per nextest shard)
//! the worse outcome wins: failed, then skipped, then passed. A skip is never
//! inferred from an exit code. This module records and reads; it does not
//! decide verdicts (the UAT sign-off does).

mod reader;
mod records;
mod writer;

pub use reader::{LedgerError, RunRecords, TrialStatus};
pub use records::{ResultRecord, SkipRecord, TrialOutcome};
pub use writer::{RESULTS_LOG, RunLog, SKIP_LEDGER, results_dir};
