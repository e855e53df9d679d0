//! The conversation of one bundle as the exports read it: the manifest's
//! identity (run id, cell, harness and its version, when opened) and each
//! turn's learner message, mentor reply and wall time, from `transcript.json`
//! (an acceptance bundle) or `transcript.jsonl` (a UAT journey bundle).

use std::path::{Path, PathBuf};

use serde_json::Value;
use studyloop_redaction::Redactor;

use crate::bundle::{Bundle, BundleError};

/// The most bytes of a transcript read (a bound on a planted file).
const MAX_TRANSCRIPT: u64 = 64 << 20;

/// Why a bundle's conversation could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The directory is not a readable bundle.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// The bundle's files do not match its inventory: an export of it would
    /// not be the evidence.
    #[error("`{}` fails its own inventory ({}); re-run the trial or export a bundle that `studyloop-evidence verify` passes", dir.display(), problems.join("; "))]
    Unverified {
        /// The bundle.
        dir: PathBuf,
        /// What the verifier found.
        problems: Vec<String>,
    },
    /// Neither transcript file is there.
    #[error("`{}` holds no transcript.json or transcript.jsonl: a probe or a paste trial has no conversation to export", dir.display())]
    NoTranscript {
        /// The bundle.
        dir: PathBuf,
    },
    /// The transcript does not read as turns.
    #[error("`{}` is not a transcript of turns ({detail}); it was edited or written by another tool", path.display())]
    BadTranscript {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
}

/// One turn, redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportTurn {
    /// The learner's message.
    pub learner: String,
    /// The mentor's reply.
    pub reply: String,
    /// Wall time of the turn, when recorded.
    pub elapsed_ms: Option<u64>,
}

/// A bundle's conversation, redacted, ready to export.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The run id (the session both formats name).
    pub run_id: String,
    /// The cell, e.g. `cli-tmux::codex`.
    pub cell: String,
    /// The tier and surface, as the manifest spells them.
    pub tier: String,
    /// The surface.
    pub surface: String,
    /// The harness driven, when one was.
    pub harness: Option<String>,
    /// Its version, when recorded.
    pub harness_version: Option<String>,
    /// When the bundle was opened (RFC 3339 UTC).
    pub started: String,
    /// The manifest's digest: which evidence this export is of.
    pub manifest_sha256: String,
    /// The turns in order.
    pub turns: Vec<ExportTurn>,
}

impl Conversation {
    /// Reads the bundle at `dir`; every text passes `redactor` first.
    ///
    /// # Errors
    /// [`ExportError`] naming the bundle and what is wrong with it.
    pub fn read(dir: &Path, redactor: &Redactor) -> Result<Self, ExportError> {
        Self::read_with(dir, |t| redactor.redact(t))
    }

    /// [`Self::read`] with `redact` applied to every text (the report asks,
    /// unredacted, only whether a cell has a conversation to export).
    pub(crate) fn read_with(
        dir: &Path,
        redact: impl Fn(&str) -> String,
    ) -> Result<Self, ExportError> {
        let bundle = Bundle::open(dir)?;
        if !bundle.problems().is_empty() {
            return Err(ExportError::Unverified {
                dir: dir.to_owned(),
                problems: bundle.problems().to_vec(),
            });
        }
        let m = bundle.manifest();
        let turns = read_turns(dir)?
            .into_iter()
            .map(|t| ExportTurn {
                learner: redact(&t.learner),
                reply: redact(&t.reply),
                elapsed_ms: t.elapsed_ms,
            })
            .collect();
        Ok(Self {
            run_id: m.run_id.clone(),
            cell: redact(&m.cell),
            tier: serde_name(&m.tier),
            surface: serde_name(&m.surface),
            harness: m.harness.clone(),
            harness_version: m.harness_version.as_deref().map(&redact),
            started: m.date.clone(),
            manifest_sha256: bundle.digest(),
            turns,
        })
    }
}

/// The serde name of a manifest enum (`acceptance`, `cli-tmux`), as written.
fn serde_name(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn read_turns(dir: &Path) -> Result<Vec<ExportTurn>, ExportError> {
    let json = dir.join("transcript.json");
    let jsonl = dir.join("transcript.jsonl");
    let read = |p: &Path| -> Result<Option<Vec<u8>>, ExportError> {
        if std::fs::symlink_metadata(p).is_err() {
            return Ok(None);
        }
        studyloop_acceptance::private_fs::read_regular(p, MAX_TRANSCRIPT)
            .map(Some)
            .map_err(|e| ExportError::BadTranscript {
                path: p.to_owned(),
                detail: e.to_string(),
            })
    };
    let bad = |p: &Path, detail: String| ExportError::BadTranscript {
        path: p.to_owned(),
        detail,
    };
    let values: Vec<Value> = if let Some(bytes) = read(&json)? {
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| bad(&json, e.to_string()))?;
        v.get("turns")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| bad(&json, "no `turns` array".into()))?
    } else if let Some(bytes) = read(&jsonl)? {
        let text = String::from_utf8(bytes).map_err(|e| bad(&jsonl, e.to_string()))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| bad(&jsonl, format!("line {}: {e}", i + 1)))
            })
            .collect::<Result<_, _>>()?
    } else {
        return Err(ExportError::NoTranscript {
            dir: dir.to_owned(),
        });
    };
    let path = if json.exists() { json } else { jsonl };
    values
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let s = |k: &str| {
                t.get(k)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| bad(&path, format!("turn {} has no string `{k}`", i + 1)))
            };
            Ok(ExportTurn {
                learner: s("learner")?,
                reply: s("mentor_reply")?,
                elapsed_ms: t.get("elapsed_ms").and_then(Value::as_u64),
            })
        })
        .collect()
}
