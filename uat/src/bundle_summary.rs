//! The redacted summary of one bundle (what council seats are shown, and what a journey
//! writes inside its own bundle), built from allow-listed fields only and then scanned by
//! the redaction rules. The sign-off's summary, built from the same run facts, is
//! `signoff::summary`.

use serde_json::{Map, Value, json};
use studyloop_acceptance::evidence::Manifest;

use crate::bundle::Bundle;

/// The sign-off summary's format version.
pub(crate) const SUMMARY_SCHEMA: u32 = 1;

fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The facts about one cell's run that a reader may see: outcome, run outcome, surface,
/// harness, actor and auth mode, and which bundle it came from. Never a path.
pub(crate) fn run_facts(m: Option<&Manifest>) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert(
        "bundle".into(),
        m.map_or(Value::Null, |m| Value::from(m.run_id.clone())),
    );
    out.insert(
        "run_outcome".into(),
        m.map_or(Value::Null, |m| json_of(&m.outcome)),
    );
    out.insert(
        "surface".into(),
        m.map_or(Value::Null, |m| json_of(&m.surface)),
    );
    out.insert(
        "harness".into(),
        m.map_or(Value::Null, |m| json_of(&m.harness)),
    );
    out.insert(
        "harness_version".into(),
        m.map_or(Value::Null, |m| json_of(&m.harness_version)),
    );
    out.insert(
        "actor_backend".into(),
        m.map_or(Value::Null, |m| json_of(&m.actor_backend)),
    );
    out.insert(
        "actor_model".into(),
        m.map_or(Value::Null, |m| json_of(&m.actor_model)),
    );
    out.insert(
        "auth_mode".into(),
        m.map_or(Value::Null, |m| json_of(&m.auth_mode)),
    );
    out
}

/// The candidate summary of one bundle, as council seats see it (before redaction).
#[must_use]
pub fn bundle_summary(bundle: &Bundle) -> Value {
    manifest_summary(bundle.manifest())
}

/// As [`bundle_summary`], from a manifest still being written, plus the note on what
/// is and is not graded: the redacted summary a journey writes inside its own bundle.
#[must_use]
pub(crate) fn journey_summary(m: &Manifest, arbitration_note: &str) -> Value {
    let mut value = manifest_summary(m);
    if let Some(map) = value.as_object_mut() {
        map.insert("arbitration_note".into(), Value::from(arbitration_note));
    }
    value
}

fn manifest_summary(m: &Manifest) -> Value {
    let mut journeys = Map::new();
    journeys.insert(m.cell.clone(), Value::Object(run_facts(Some(m))));
    json!({
        "schema_version": SUMMARY_SCHEMA,
        "run_id": m.run_id,
        "date": m.date,
        "repo_sha": m.repo_sha,
        "dirty": m.dirty,
        "journeys": journeys,
        "rubric_version": m.rubric_version,
        "rubric_hash": m.rubric_hash,
        "redaction_version": m.redaction_version,
        "redaction_hash": m.redaction_hash,
    })
}

/// `value` with every string, and every key, rewritten by `redactor`: what a summary
/// holds before `Redactor::summary` proves nothing leaks. Keys are fixed words in a
/// bundle summary; in a sign-off summary some are run ids read from manifests.
#[must_use]
pub fn rewritten(value: Value, redactor: &studyloop_redaction::Redactor) -> Value {
    match value {
        Value::String(text) => Value::String(redactor.redact(&text)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| rewritten(v, redactor)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (redactor.redact(&k), rewritten(v, redactor)))
                .collect(),
        ),
        other => other,
    }
}
