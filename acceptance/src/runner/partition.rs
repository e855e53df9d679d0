//! Sharding a runner's trials across machines: `hash:K/N` and `count:K/N`, with
//! cargo-nextest's meaning, so `--partition` on the runner and `cargo nextest run
//! --partition` pick the same trials; and `time:K/N`, the runner's own, which
//! balances the shards by the trials' recorded durations.
//!
//! - `hash:K/N`: a trial is in shard K when `xxh64(name, seed 0) % N == K - 1`
//!   (nextest fixes xxhash64 for its whole 0.9 series). Stateless: adding a trial
//!   moves no other.
//! - `count:K/N`: round-robin over the trials in name order, after filters; as in
//!   nextest, the trials that run are counted, and the skipped ones (statically
//!   ignored under nextest) are dealt round-robin among themselves, so each is
//!   ledgered by exactly one shard.
//! - `time:K/N`: the trials that run, longest first by their recorded duration
//!   (`runner::durations`, from the committed receipts; the name breaks ties),
//!   each onto the shard with the least time so far (the lowest shard on a tie);
//!   the skipped ones round-robin among themselves as in `count`. Deterministic
//!   for the same receipts, so every shard computes the same deal. nextest has no
//!   such kind: the runner deals these itself (`just shard` gives nextest no
//!   `--partition` for them), so a nextest-started binary only lists its own.
//!
//! Where the partition comes from (every source given must agree, else the run
//! is refused): the runner's own `--partition SPEC`, `STUDYLOOP_ACC_PARTITION`,
//! and under nextest the `--partition` nextest itself was started with (read from
//! the parent's command line, because nextest lists every trial and partitions
//! after listing, telling the binary nothing). When nextest partitions, the
//! runner still lists every trial (nextest deals them) and only keeps its skip
//! ledger and shard record to its own shard; otherwise the runner drops other
//! shards' trials itself.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::caller_env::CallerEnv;
use crate::selection::ACC_PARTITION;

/// How trials are dealt to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKind {
    /// `hash:K/N`.
    Hash,
    /// `count:K/N`.
    Count,
    /// `time:K/N`.
    Time,
}

/// One shard of a partitioned run: `kind:shard/total`, `1 ≤ shard ≤ total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// Hash or count.
    pub kind: PartitionKind,
    /// This shard, from 1.
    pub shard: u64,
    /// How many shards.
    pub total: u64,
}

/// A partition that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// The text is not `hash:K/N` or `count:K/N` with `1 ≤ K ≤ N`.
    #[error(
        "partition `{value}` (from {source_name}) is not valid: {why}; accepted: hash:K/N, count:K/N or time:K/N with 1 ≤ K ≤ N (e.g. time:1/3)"
    )]
    Invalid {
        /// The text given.
        value: String,
        /// Where it came from.
        source_name: &'static str,
        /// What is wrong.
        why: String,
    },
    /// Two sources name different partitions.
    #[error(
        "the partition is ambiguous: {first} gives `{a}` but {second} gives `{b}`; give the same partition to both (the just recipes pass one value to both)"
    )]
    Disagree {
        /// First source.
        first: &'static str,
        /// Its value.
        a: String,
        /// Second source.
        second: &'static str,
        /// Its value.
        b: String,
    },
    /// `--partition` without a value.
    #[error("--partition needs a value (hash:K/N, count:K/N or time:K/N)")]
    MissingValue,
    /// `--partition` given more than once (the last one would silently win).
    #[error(
        "--partition is given twice, as `{first}` and as `{second}`; accepted: one --partition hash:K/N, count:K/N or time:K/N; give it once"
    )]
    Repeated {
        /// The first value.
        first: String,
        /// The later value.
        second: String,
    },
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PartitionKind::Hash => "hash",
            PartitionKind::Count => "count",
            PartitionKind::Time => "time",
        };
        write!(f, "{kind}:{}/{}", self.shard, self.total)
    }
}

impl FromStr for Partition {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (kind, rest) = match s.split_once(':') {
            Some(("hash", rest)) => (PartitionKind::Hash, rest),
            Some(("count", rest)) => (PartitionKind::Count, rest),
            Some(("time", rest)) => (PartitionKind::Time, rest),
            _ => return Err("it must begin with `hash:`, `count:` or `time:`".into()),
        };
        let (k, n) = rest
            .split_once('/')
            .ok_or_else(|| format!("`{rest}` is not K/N"))?;
        // Only the canonical spelling: `01` or `+1` would parse as 1, so one shard
        // could be written two ways and a merge would count it as two shards.
        let parse = |t: &str, what: &str| {
            let n = t
                .parse::<u64>()
                .map_err(|e| format!("{what} `{t}` is not a whole number ({e})"))?;
            if n.to_string() != t {
                return Err(format!(
                    "{what} `{t}` is not written plainly; write `{n}` (digits only, no sign, no leading zero)"
                ));
            }
            Ok(n)
        };
        let (shard, total) = (parse(k, "shard")?, parse(n, "total")?);
        if !(1..=total).contains(&shard) {
            return Err(format!("shard {shard} is not between 1 and {total}"));
        }
        Ok(Self { kind, shard, total })
    }
}

impl Partition {
    fn parse_from(value: &str, source_name: &'static str) -> Result<Self, PartitionError> {
        value.parse().map_err(|why| PartitionError::Invalid {
            value: value.to_owned(),
            source_name,
            why,
        })
    }

    /// The trials of `trials` (name, runs) this shard owns. `trials` is in name
    /// order; `runs` is false for a trial that is skipped (see the module doc).
    /// `weigh` gives a trial's recorded duration; only `time:` reads it.
    pub fn owned<'a>(
        &self,
        trials: &[(&'a str, bool)],
        weigh: &dyn Fn(&str) -> u64,
    ) -> BTreeSet<&'a str> {
        let mine = |i: u64| i % self.total == self.shard - 1;
        let deal = |runs: bool| {
            trials
                .iter()
                .filter(move |(_, r)| *r == runs)
                .zip(0u64..)
                .filter(|(_, i)| mine(*i))
                .map(|((name, _), _)| *name)
        };
        match self.kind {
            PartitionKind::Hash => trials
                .iter()
                .filter(|(name, _)| mine(xxh64(name.as_bytes())))
                .map(|(name, _)| *name)
                .collect(),
            PartitionKind::Count => deal(true).chain(deal(false)).collect(),
            PartitionKind::Time => {
                let mut running: Vec<(u64, &'a str)> = trials
                    .iter()
                    .filter(|(_, runs)| *runs)
                    .map(|(name, _)| (weigh(name), *name))
                    .collect();
                running.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
                let mut loads = vec![0u64; usize::try_from(self.total).unwrap_or(1).max(1)];
                let me = usize::try_from(self.shard - 1).unwrap_or(0);
                let mut owned = BTreeSet::new();
                for (ms, name) in running {
                    // The least-loaded shard, the lowest on a tie.
                    let (least, _) = loads
                        .iter()
                        .enumerate()
                        .min_by_key(|(i, load)| (**load, *i))
                        .unwrap_or((0, &0));
                    loads[least] = loads[least].saturating_add(ms);
                    if least == me {
                        owned.insert(name);
                    }
                }
                owned.extend(deal(false));
                owned
            }
        }
    }
}

/// The partition of this run and who applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sharding {
    /// The shard.
    pub partition: Partition,
    /// nextest deals the trials itself (it was started with `--partition`): the
    /// runner lists every trial and keeps only its ledger to its shard.
    pub(crate) by_nextest: bool,
}

/// Splits the runner's own `--partition SPEC` / `--partition=SPEC` out of its
/// arguments (libtest does not know it); given twice, even alike, it is refused.
pub(crate) fn split_flag(
    words: &[String],
) -> Result<(Option<String>, Vec<String>), PartitionError> {
    let mut flag = None;
    let mut rest = Vec::with_capacity(words.len());
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let value = if w == "--partition" {
            it.next().ok_or(PartitionError::MissingValue)?.clone()
        } else if let Some(v) = w.strip_prefix("--partition=") {
            v.to_owned()
        } else {
            rest.push(w.clone());
            continue;
        };
        if let Some(first) = flag.replace(value.clone()) {
            return Err(PartitionError::Repeated {
                first,
                second: value,
            });
        }
    }
    Ok((flag, rest))
}

/// This run's sharding from the flag, `STUDYLOOP_ACC_PARTITION` and (under
/// nextest) nextest's own `--partition`; `None` = unsharded.
pub fn resolve(
    flag: Option<&str>,
    caller: &CallerEnv,
    nextest: bool,
) -> Result<Option<Sharding>, PartitionError> {
    let env = caller.var(ACC_PARTITION).filter(|v| !v.trim().is_empty());
    let from_nextest = if nextest { nextest_partition() } else { None };
    let mut found: Option<(&'static str, String, Partition)> = None;
    let sources = [
        ("--partition", flag.map(str::to_owned)),
        (ACC_PARTITION, env.map(|v| v.trim().to_owned())),
        ("nextest's --partition", from_nextest.clone()),
    ];
    for (name, value) in sources {
        let Some(value) = value else { continue };
        let p = Partition::parse_from(&value, name)?;
        match &found {
            Some((first, a, q)) if *q != p => {
                return Err(PartitionError::Disagree {
                    first,
                    a: a.clone(),
                    second: name,
                    b: value,
                });
            }
            Some(_) => {}
            None => found = Some((name, value, p)),
        }
    }
    Ok(found.map(|(_, _, partition)| Sharding {
        partition,
        by_nextest: from_nextest.is_some(),
    }))
}

/// The `--partition` value of the cargo-nextest process that started this one:
/// nextest runs test binaries as its direct children (list and run phases).
fn nextest_partition() -> Option<String> {
    let ppid = rustix::process::getppid()?;
    let raw = std::fs::read(format!("/proc/{}/cmdline", ppid.as_raw_nonzero())).ok()?;
    nextest_flag(&raw)
}

/// The `--partition` value in a NUL-separated command line (`/proc/PID/cmdline`)
/// when it is cargo-nextest's; `None` for any other program's, or with no flag.
fn nextest_flag(raw: &[u8]) -> Option<String> {
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    if !words.iter().any(|w| w == "nextest") {
        return None;
    }
    split_flag(&words).ok()?.0
}

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

fn merge_round(acc: u64, v: u64) -> u64 {
    (acc ^ round(0, v)).wrapping_mul(P1).wrapping_add(P4)
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]))
}

fn le32(b: &[u8]) -> u64 {
    u64::from(u32::from_le_bytes(b[..4].try_into().unwrap_or([0; 4])))
}

/// XXH64 with seed 0 (the published algorithm; nextest's shard hash).
pub(crate) fn xxh64(input: &[u8]) -> u64 {
    let len = input.len() as u64;
    let mut rest = input;
    let mut h = if input.len() >= 32 {
        let mut v = [P1.wrapping_add(P2), P2, 0, 0u64.wrapping_sub(P1)];
        while rest.len() >= 32 {
            for (i, lane) in v.iter_mut().enumerate() {
                *lane = round(*lane, le64(&rest[i * 8..]));
            }
            rest = &rest[32..];
        }
        let h = v[0]
            .rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18));
        v.iter().fold(h, |h, lane| merge_round(h, *lane))
    } else {
        P5
    };
    h = h.wrapping_add(len);
    while rest.len() >= 8 {
        h = (h ^ round(0, le64(rest)))
            .rotate_left(27)
            .wrapping_mul(P1)
            .wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        h = (h ^ le32(rest).wrapping_mul(P1))
            .rotate_left(23)
            .wrapping_mul(P2)
            .wrapping_add(P3);
        rest = &rest[4..];
    }
    for b in rest {
        h = (h ^ u64::from(*b).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

#[cfg(test)]
#[path = "partition_tests.rs"]
mod tests;
