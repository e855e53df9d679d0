//! `inputs.json`: every input that shaped a case, in its own bundle (issue 30 item 7,
//! seed 003's "a run can be replayed and audited from its bundle"): the selection, the
//! trial's definition, the budget, the turn script (name, version, sha256 and text),
//! the persona the product built (its hash *and* its redacted text, for every surface)
//! and the pinned files a destination graded or redacted against.
//!
//! Capture is bounded and never fails the case: a text over [`TEXT_CAP`] is kept cut
//! with its full size and hash, and an input that could not be read is `null` with the
//! reason in `problems`. The persona text is redacted with the current rules before it
//! is kept (it holds the learner's paths and notes); its sha256 is of the text the
//! product sent, and `matches_product_hash` says whether that agrees with the
//! `persona_hash` the product recorded (a positive cross-check, `null` when either is
//! unknown).

use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::evidence::Surface;
use crate::hex;
use crate::runner::TrialContext;
use crate::selection::{HarnessName, TurnBudget};

/// The bundle file.
pub(crate) const INPUTS_FILE: &str = "inputs.json";
/// Its schema version.
pub(crate) const INPUTS_SCHEMA_VERSION: u32 = 1;
/// The most bytes of one captured text kept in the bundle (seed 004's bound).
pub(crate) const TEXT_CAP: usize = 64 * 1024;
/// The most bytes read of a persona file before it is refused as not a persona.
const PERSONA_READ_LIMIT: u64 = 1024 * 1024;

/// The persona a case's product built, as the case saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PersonaSeen {
    /// The `persona_hash` the product reported (state or start response).
    pub product_hash: Option<String>,
    /// The text the product sent or wrote, when the case could read it.
    pub text: Option<String>,
    /// Why the text is missing, when it is.
    pub text_missing: Option<String>,
}

impl PersonaSeen {
    /// What the case read from the product's persona file at `path` (a regular file
    /// only: never a link, FIFO or device; bounded).
    #[must_use]
    pub fn from_file(product_hash: Option<&str>, path: &Path) -> Self {
        let (text, text_missing) =
            match studyloop_regular_file::read_regular(path, PERSONA_READ_LIMIT) {
                Ok(bytes) => match String::from_utf8(bytes) {
                    Ok(t) => (Some(t), None),
                    Err(_) => (None, Some(format!("{} is not UTF-8 text", path.display()))),
                },
                Err(e) => (None, Some(format!("reading {}: {e}", path.display()))),
            };
        Self {
            product_hash: product_hash.map(str::to_owned),
            text,
            text_missing,
        }
    }
}

/// One pinned file a destination applied (a rubric, a sign-off definition, the
/// redaction rules): its kind, version and pinned sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedInput {
    /// `rubric`, `signoff-definition`, `redaction-rules`.
    pub kind: &'static str,
    /// Its version.
    pub version: String,
    /// Its pinned sha256.
    pub sha256: String,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes))
}

/// A captured text: its size and hash always, the text itself up to [`TEXT_CAP`]
/// (cut on a character boundary, `truncated` saying so).
fn text_value(text: &str) -> Value {
    let mut end = text.len().min(TEXT_CAP);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    json!({
        "sha256": sha256_hex(text.as_bytes()),
        "bytes": text.len(),
        "text": &text[..end],
        "truncated": end < text.len(),
    })
}

/// The current redaction rules' redactor, built once per process (or why it could
/// not be: then no persona text is kept, only its hash).
fn redactor() -> &'static Result<studyloop_redaction::Redactor, String> {
    static REDACTOR: OnceLock<Result<studyloop_redaction::Redactor, String>> = OnceLock::new();
    REDACTOR.get_or_init(|| {
        studyloop_redaction::RedactionRules::load_default()
            .map(|rules| studyloop_redaction::Redactor::new(&rules))
            .map_err(|e| e.to_string())
    })
}

/// sha256 of the running test binary: the trial definitions as compiled (with the
/// manifest's `repo_sha` and `patch_identity`, which source they came from). Read
/// once per process, bounded by the file itself.
fn runner_sha256() -> &'static Result<String, String> {
    static RUNNER: OnceLock<Result<String, String>> = OnceLock::new();
    RUNNER.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let mut file = studyloop_regular_file::open_regular(&exe)
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match std::io::Read::read(&mut file, &mut buf) {
                Ok(0) => break,
                Ok(n) => hasher.update(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("{}: {e}", exe.display())),
            }
        }
        Ok(hex::encode(&hasher.finalize()))
    })
}

fn persona_value(seen: Option<&PersonaSeen>, problems: &mut Vec<String>) -> Value {
    let Some(seen) = seen else {
        return Value::Null;
    };
    let mut value = json!({
        "product_hash": seen.product_hash,
        "sha256": null,
        "matches_product_hash": null,
        "redacted": null,
    });
    match (&seen.text, redactor()) {
        (Some(text), Ok(redactor)) => {
            let sha = sha256_hex(text.as_bytes());
            // The product's hash is the first 16 hex digits of the text's sha256
            // (`product/studyloop/src/persona.rs`).
            value["matches_product_hash"] = seen.product_hash.as_deref().map_or(Value::Null, |h| {
                Value::Bool(!h.is_empty() && sha.starts_with(h))
            });
            value["sha256"] = Value::String(sha);
            value["redacted"] = text_value(&redactor.redact(text));
        }
        (Some(text), Err(e)) => {
            value["sha256"] = Value::String(sha256_hex(text.as_bytes()));
            problems.push(format!(
                "persona text not kept: the redaction rules did not load ({e})"
            ));
        }
        (None, _) => problems.push(format!(
            "persona text not captured: {}",
            seen.text_missing
                .as_deref()
                .unwrap_or("the case never read it")
        )),
    }
    value
}

fn turn_script_value(name: Option<&str>, problems: &mut Vec<String>) -> Value {
    let Some(name) = name else {
        return Value::Null;
    };
    let Some((_, text)) = crate::turn_scripts::TURN_SCRIPTS
        .iter()
        .find(|(n, _)| *n == name)
    else {
        problems.push(format!("turn script `{name}` is not a shipped one"));
        return json!({"name": name, "version": null, "text": null});
    };
    let version = crate::turn_scripts::named_turn_script(name)
        .map(|s| Value::from(s.version))
        .unwrap_or(Value::Null);
    let mut value = text_value(text);
    value["name"] = Value::String(name.to_owned());
    value["version"] = version;
    value
}

/// What a case was, as [`inputs`] records it: a leaf of the case engine, so the
/// engine's files pass their parts here rather than the `Case` itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaseInputs<'a> {
    pub ctx: &'a TrialContext,
    pub surface: Surface,
    pub harness: HarnessName,
    pub spec: &'a crate::harness_spec::HarnessSpec,
    pub budget: TurnBudget,
    pub persona: Option<&'a PersonaSeen>,
    pub turn_script: Option<&'a str>,
}

/// `inputs.json` of `case`, with the destination's `pinned` files.
pub(crate) fn inputs(case: CaseInputs<'_>, pinned: &[PinnedInput]) -> Value {
    let mut problems = Vec::new();
    let s = &case.ctx.selection;
    let selection = json!({
        "harnesses": s.harnesses.iter().map(|h| h.as_str()).collect::<Vec<_>>(),
        "actor": s.actor.as_str(),
        "auth_mode": s.auth_mode,
        "repeat": s.repeat,
        "cassette": s.cassette.as_ref().map(|c| json!({
            "mode": c.mode,
            "file": c.file.as_ref().map(|f| f.display().to_string()),
        })),
        "stub_fault": s.stub_fault,
        "approvals": s.approvals.in_force(),
    });
    let selection_sha256 = sha256_hex(
        serde_json::to_string(&crate::evidence::sorted(selection.clone()))
            .unwrap_or_default()
            .as_bytes(),
    );
    let runner = match runner_sha256() {
        Ok(sha) => Value::String(sha.clone()),
        Err(e) => {
            problems.push(format!("the runner binary could not be hashed: {e}"));
            Value::Null
        }
    };
    let definition = json!({
        "trial": case.ctx.name,
        "surface": case.surface,
        "harness": case.harness.as_str(),
        // The harness table row the case ran under, as compiled.
        "harness_row_sha256": sha256_hex(format!("{:?}", case.spec).as_bytes()),
        "runner_sha256": runner,
    });
    let budget = json!({
        "max_turns": case.budget.max_turns,
        "max_output_tokens": case.budget.max_output_tokens,
        "note": case.budget.note(),
    });
    let pinned: Vec<Value> = pinned
        .iter()
        .map(|p| json!({"kind": p.kind, "version": p.version, "sha256": p.sha256}))
        .collect();
    let persona = persona_value(case.persona, &mut problems);
    let turn_script = turn_script_value(case.turn_script, &mut problems);
    json!({
        "schema_version": INPUTS_SCHEMA_VERSION,
        "selection": selection,
        "selection_sha256": selection_sha256,
        "definition": definition,
        "budget": budget,
        "turn_script": turn_script,
        "persona": persona,
        "pinned": pinned,
        "problems": problems,
    })
}

#[cfg(test)]
#[path = "inputs_tests.rs"]
mod tests;
