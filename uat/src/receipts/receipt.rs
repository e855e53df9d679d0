//! One receipt: the allow-listed, redacted facts of a live lane bundle, how it is
//! read from a bundle (`from_bundle`), where it is kept (`receipt_path`), and the
//! collection of a run's bundles into the receipts directory.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use studyloop_acceptance::fidelity::CellFidelity;
use studyloop_redaction::Redactor;

/// Clean runs per cell the release contract asks for.
pub(crate) const REQUIRED_CLEAN_RUNS: usize = 3;
/// The generated matrix, relative to the receipts dir.
pub const COVERAGE_FILE: &str = "COVERAGE.md";

/// Surfaces whose bundles become receipts (probes are not lanes).
const LANE_SURFACES: [&str; 4] = ["cli-tmux", "web-acp", "web-acp-browser", "mcp"];

/// One step of a lane, as kept in a receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptStep {
    /// Step or check name.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Wall time.
    pub elapsed_ms: Option<u64>,
}

/// A redacted summary of one bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    /// The bundle's run id (`YYYYmmddTHHMMSSZ-xxxxxxxx`).
    pub run_id: String,
    /// The bundle's date.
    pub date: String,
    /// The trial name.
    pub cell: String,
    /// `cli-tmux`, `web-acp`, …
    pub surface: String,
    /// The harness.
    pub harness: String,
    /// Its `--version` line.
    pub harness_version: Option<String>,
    /// stub-provider, scrubbed or real-auth.
    pub auth_mode: Option<String>,
    /// The learner actor backend.
    pub actor_backend: Option<String>,
    /// completed, budget-exhausted, errored, …
    pub outcome: String,
    /// Repo commit the run was built from.
    pub repo_sha: Option<String>,
    /// Whether the tree had uncommitted changes.
    pub dirty: Option<bool>,
    /// OS and arch.
    pub platform: Option<String>,
    /// Steps and checks with timings (from steps.json, when present).
    pub steps: Vec<ReceiptStep>,
    /// The manifest's `finding:` notes (e.g. grok has no resume), redacted; other
    /// notes stay in the private bundle.
    pub notes: Vec<String>,
    /// The cell's reply fidelity from the manifest (ratio, floor, sources);
    /// `null` for a bundle that recorded none (written before fidelity was
    /// measured): unknown, never 0.
    #[serde(default)]
    pub fidelity: Option<CellFidelity>,
    /// Which attempt of its trial the bundle was (`STUDYLOOP_ACC_REPEAT`), from
    /// the run's results line; absent when unknown (older receipts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// `sha256:<hex>` of the bundle's `manifest.json` as collected: committed to git,
    /// out of reach of whoever edits the bundle later, so `verify` and the sign-off
    /// can compare a manifest with it; absent in receipts written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
}

/// What one `collect` did: receipts added, and lane bundles refused with why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// New receipts written.
    pub added: usize,
    /// Lane bundles that got no receipt: (bundle, reason).
    pub refused: Vec<(PathBuf, String)>,
}

/// Why receipts could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// A lane bundle's manifest records no commit (`repo_sha`).
    #[error(
        "{} records no commit (repo_sha is null): a receipt must name the commit it proves; run the lanes from a git checkout",
        bundle.display()
    )]
    NoCommit {
        /// The bundle.
        bundle: PathBuf,
    },
    /// A lane bundle was replayed from a cassette: no model answered it live.
    #[error(
        "{} was replayed from cassette (sha256 {sha256}): a receipt proves a live run; run the lane live (unset STUDYLOOP_ACC_CASSETTE)",
        bundle.display()
    )]
    Replayed {
        /// The bundle.
        bundle: PathBuf,
        /// The cassette's sha256 (`unknown` when the manifest records none).
        sha256: String,
    },
    /// A real-auth bundle of a dirty or unknown tree: a certification proves one
    /// commit, so it gets no receipt.
    #[error(
        "{} is a real-auth run on a {} tree: a certification receipt must prove one commit; commit or stash your changes (`git status` names them), then re-run `studyloop-uat certify`",
        bundle.display(),
        match dirty { Some(true) => "dirty", _ => "unknown" }
    )]
    DirtyTree {
        /// The bundle.
        bundle: PathBuf,
        /// Its manifest's `dirty` (`true`, or unknown).
        dirty: Option<bool>,
    },
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file is not what it should be.
    #[error(
        "{path} is not a valid {what}: {detail}; fix or remove it, then re-run `just receipts`"
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Manifest, steps or receipt.
        what: &'static str,
        /// The parse error.
        detail: String,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ReceiptError {
    let path = path.to_owned();
    move |source| ReceiptError::Io {
        action,
        path,
        source,
    }
}

fn read_json(path: &Path, what: &'static str) -> Result<Value, ReceiptError> {
    read_json_bytes(path, what).map(|(_, v)| v)
}

/// The exact bytes of `path` and their parse.
fn read_json_bytes(path: &Path, what: &'static str) -> Result<(Vec<u8>, Value), ReceiptError> {
    // A regular file only (never a FIFO or symlink), no larger than any manifest.
    let bytes = studyloop_acceptance::private_fs::read_regular(
        path,
        studyloop_acceptance::evidence::MAX_MANIFEST_BYTES,
    )
    .map_err(io("read", path))?;
    let value = serde_json::from_slice(&bytes).map_err(|e| ReceiptError::Invalid {
        path: path.to_owned(),
        what,
        detail: e.to_string(),
    })?;
    Ok((bytes, value))
}

/// The receipt for one bundle, or `None` when the bundle is not a lane run
/// (a probe, a UAT journey, a skipped trial).
pub(crate) fn from_bundle(
    bundle: &Path,
    redactor: &Redactor,
) -> Result<Option<Receipt>, ReceiptError> {
    let (bytes, m) = read_json_bytes(&bundle.join("manifest.json"), "manifest")?;
    let s = |k: &str| m.get(k).and_then(Value::as_str).map(|v| redactor.redact(v));
    let surface = s("surface").unwrap_or_default();
    let outcome = s("outcome").unwrap_or_default();
    if s("tier").as_deref() != Some("acceptance")
        || !LANE_SURFACES.contains(&surface.as_str())
        || outcome == "skipped"
    {
        return Ok(None);
    }
    let steps_path = bundle.join("steps.json");
    let steps = if steps_path.exists() {
        serde_json::from_value(read_json(&steps_path, "steps file")?).map_err(|e| {
            ReceiptError::Invalid {
                path: steps_path,
                what: "steps file",
                detail: e.to_string(),
            }
        })?
    } else {
        Vec::new()
    };
    let steps: Vec<ReceiptStep> = steps
        .into_iter()
        .map(|st: ReceiptStep| ReceiptStep {
            name: redactor.redact(&st.name),
            ..st
        })
        .collect();
    // Only findings leave the bundle: other notes carry local paths, process
    // command lines and persona text.
    let notes = m
        .get("notes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|n| n.starts_with("finding:"))
                .map(|n| redactor.redact(n))
                .collect()
        })
        .unwrap_or_default();
    // A replayed bundle proves the cassette, not the lane: no receipt.
    if let Some(c) = m
        .get("cassette")
        .filter(|c| c.get("mode").and_then(Value::as_str) == Some("replay"))
    {
        return Err(ReceiptError::Replayed {
            bundle: bundle.to_owned(),
            sha256: c
                .get("sha256")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
        });
    }
    // A receipt names the commit it proves (the clean streak counts runs of
    // one commit): a bundle that recorded none gets no receipt.
    let Some(repo_sha) = s("repo_sha").filter(|sha| !sha.trim().is_empty()) else {
        return Err(ReceiptError::NoCommit {
            bundle: bundle.to_owned(),
        });
    };
    let dirty = m.get("dirty").and_then(Value::as_bool);
    if s("auth_mode").as_deref()
        == Some(studyloop_acceptance::selection::AuthMode::RealAuth.as_str())
        && dirty != Some(false)
    {
        return Err(ReceiptError::DirtyTree {
            bundle: bundle.to_owned(),
            dirty,
        });
    }
    Ok(Some(Receipt {
        attempt: None,
        run_id: s("run_id").unwrap_or_default(),
        date: s("date").unwrap_or_default(),
        cell: s("cell").unwrap_or_default(),
        surface,
        harness: s("harness").unwrap_or_default(),
        harness_version: s("harness_version"),
        auth_mode: s("auth_mode"),
        actor_backend: s("actor_backend"),
        outcome,
        repo_sha: Some(repo_sha),
        dirty,
        platform: s("platform"),
        steps,
        notes,
        fidelity: manifest_fidelity(&m, bundle)?,
        manifest_sha256: Some(studyloop_acceptance::evidence::manifest_sha256(&bytes)),
    }))
}

/// The manifest's `fidelity` (numbers and source names only, nothing to
/// redact); `None` when absent.
fn manifest_fidelity(m: &Value, bundle: &Path) -> Result<Option<CellFidelity>, ReceiptError> {
    match m.get("fidelity") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| ReceiptError::Invalid {
            path: bundle.join("manifest.json"),
            what: "manifest",
            detail: format!("fidelity: {e}"),
        }),
    }
}

/// Where a receipt lives under the receipts dir.
pub(crate) fn receipt_path(r: &Receipt) -> PathBuf {
    let day = r.date.get(..10).unwrap_or("unknown-date");
    let mode = r.auth_mode.as_deref().unwrap_or("unknown-auth");
    PathBuf::from(day)
        .join(&r.harness)
        .join(format!("{}-{mode}-{}.json", r.surface, r.run_id))
}

/// Every receipt under `dir`, oldest first (run ids start with their time).
pub fn load_all(dir: &Path) -> Result<Vec<Receipt>, ReceiptError> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io("list", &d)(e)),
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                let v = read_json(&p, "receipt")?;
                out.push(
                    serde_json::from_value(v).map_err(|e| ReceiptError::Invalid {
                        path: p.clone(),
                        what: "receipt",
                        detail: e.to_string(),
                    })?,
                );
            }
        }
    }
    out.sort_by(|a: &Receipt, b: &Receipt| a.run_id.cmp(&b.run_id));
    Ok(out)
}

/// Copies a receipt of every lane bundle under `evidence_dirs` not yet in
/// `out`; returns how many were added (see [`collect_all`] for the refusals).
/// Idempotent across shards: a run id is added at most once, however many
/// evidence directories hold its bundle.
pub fn collect(
    evidence_dirs: &[PathBuf],
    out: &Path,
    redactor: &Redactor,
) -> Result<usize, ReceiptError> {
    collect_all(evidence_dirs, out, redactor).map(|c| c.added)
}

/// As [`collect`], also naming every lane bundle refused a receipt (no
/// commit recorded, or a real-auth run of a dirty or unknown tree) and why. Each receipt records its attempt from the run
/// directory's results log (the evidence dir's parent) when it names one.
pub fn collect_all(
    evidence_dirs: &[PathBuf],
    out: &Path,
    redactor: &Redactor,
) -> Result<Collected, ReceiptError> {
    // Every run id already kept, and every one added below: a bundle that two
    // shards' downloads both hold (or a run directory given twice) is one run,
    // counted and written once, so merging shards again adds nothing.
    let mut known: std::collections::BTreeSet<String> =
        load_all(out)?.into_iter().map(|r| r.run_id).collect();
    let mut collected = Collected::default();
    for dir in evidence_dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let attempts = attempts_of(dir);
        for bundle in entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("manifest.json").is_file())
        {
            let receipt = match from_bundle(&bundle, redactor) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(
                    e @ (ReceiptError::NoCommit { .. }
                    | ReceiptError::DirtyTree { .. }
                    | ReceiptError::Replayed { .. }),
                ) => {
                    collected.refused.push((bundle, e.to_string()));
                    continue;
                }
                Err(e) => return Err(e),
            };
            if !known.insert(receipt.run_id.clone()) {
                continue;
            }
            let receipt = Receipt {
                attempt: attempts.get(&bundle.display().to_string()).copied(),
                ..receipt
            };
            let path = out.join(receipt_path(&receipt));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io("create", parent))?;
            }
            // An unserialisable receipt is an error, never an empty file.
            let mut text = serde_json::to_string_pretty(&receipt)
                .map_err(|e| io("serialise", &path)(e.into()))?;
            text.push('\n');
            crate::atomic::write(&path, text.as_bytes(), 0o644).map_err(io("write", &path))?;
            collected.added += 1;
        }
    }
    Ok(collected)
}

/// Bundle path → attempt, from the results log of the run directory that
/// holds `evidence_dir` (empty when it has none or it cannot be read).
fn attempts_of(evidence_dir: &Path) -> std::collections::BTreeMap<String, u32> {
    let Some(run) = evidence_dir.parent() else {
        return Default::default();
    };
    let Ok(records) = studyloop_acceptance::ledger::RunRecords::read(run) else {
        return Default::default();
    };
    records
        .trials()
        .values()
        .flat_map(|t| &t.records)
        .filter_map(|r| Some((r.bundle.clone()?, r.meta.attempt?)))
        .collect()
}
