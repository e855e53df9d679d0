//! The run directory's layout: the file names the writer creates and the reader and the
//! shard merge open, in a leaf both import (so neither names the other for a constant).

/// The skip ledger's file name.
pub const SKIP_LEDGER: &str = "skip-ledger.jsonl";
/// The results log's file name.
pub const RESULTS_LOG: &str = "results.jsonl";
/// The run marker's file name: which run the directory belongs to.
pub const RUN_MARKER: &str = "run.json";
/// The tiers whose runners write a shard record: one nextest invocation runs both
/// runners with one run id, so one run directory may hold a record of each.
pub const SHARD_TIERS: [&str; 2] = ["acceptance", "uat"];

/// The shard record's file name for `tier` (`shard-acceptance.json`,
/// `shard-uat.json`): which cells that tier's runner answers for in this run.
pub fn shard_record_file(tier: &str) -> String {
    format!("shard-{tier}.json")
}
