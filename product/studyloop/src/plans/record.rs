//! Recording on a plan: `evaluate` (a preview, or with `record` a
//! checkpoint written to both sinks, each reported) and idempotent learning
//! records. Split from `app` to keep each file to one concern.

use serde_json::{Value, json};

use super::doc::{CheckpointRow, LearningRecord, Plan, clip, limits, one_line, title_text};
use super::revision::IfRevision;
use super::views::readiness;
use super::{PlanApp, PlanError};
use crate::store::CheckpointRecord;

impl PlanApp {
    /// Evaluate progress at a phase; with `record` write the checkpoint to the
    /// document and the DB log and report each sink.
    ///
    /// # Errors
    /// `invalid` (phase), `not_found`, a malformed document.
    pub fn evaluate(
        &self,
        id: &str,
        phase: &str,
        study_id: &str,
        record: bool,
        expect: IfRevision<'_>,
    ) -> Result<Value, PlanError> {
        if !matches!(phase, "start" | "mid" | "end") {
            return Err(PlanError::Invalid(format!(
                "phase `{}` is not accepted; use start, mid or end",
                clip(phase, 40)
            )));
        }
        let study_id = one_line("study_id", study_id, 100)?.replace('|', "/");
        let preview = self.get(id)?;
        let mut out = evaluation(&preview, phase, &study_id);
        if !record {
            out["db_write"] = json!("not_requested");
            out["document_write"] = json!("not_requested");
            out["recording_complete"] = json!(false);
            out["warnings"] = json!([]);
            return Ok(out);
        }
        // A stale revision writes to neither sink: checked here for the DB log, and
        // again under the document's lock by `mutate`.
        expect.check(&preview)?;
        let mut warnings = Vec::new();
        let note = out["summary"].as_str().unwrap_or_default().to_owned();
        let mut row = None;
        let doc = self.mutate(id, expect, |plan| {
            let r = CheckpointRow {
                date: crate::context::now_rfc3339(),
                phase: phase.to_owned(),
                study_id: study_id.clone(),
                milestone_done: plan.milestone_done(),
                milestone_total: plan.milestones.len(),
                note: note.replace('|', "/"),
            };
            plan.checkpoints.push(r.clone());
            let excess = plan.checkpoints.len().saturating_sub(limits::LOG);
            plan.checkpoints.drain(..excess);
            row = Some(r);
            Ok(())
        });
        if let Err(e @ PlanError::StaleRevision { .. }) = doc {
            return Err(e);
        }
        let document_write = match &doc {
            Ok(_) => "saved",
            Err(e) => {
                warnings.push(format!("document: {e}"));
                "failed"
            }
        };
        let r = row.unwrap_or_else(|| CheckpointRow {
            date: crate::context::now_rfc3339(),
            phase: phase.to_owned(),
            study_id: study_id.clone(),
            milestone_done: preview.milestone_done(),
            milestone_total: preview.milestones.len(),
            note: note.clone(),
        });
        let rec = CheckpointRecord {
            id: 0,
            plan_id: preview.id.to_string(),
            phase: r.phase,
            study_id: r.study_id,
            recorded_at: r.date,
            milestone_done: r.milestone_done,
            milestone_total: r.milestone_total,
            note: r.note,
        };
        let db_write = match self.with_store(|s| s.add_checkpoint(&rec)) {
            Ok(_) => "saved",
            Err(e) => {
                warnings.push(format!("database: {e}"));
                "failed"
            }
        };
        out["db_write"] = json!(db_write);
        out["document_write"] = json!(document_write);
        out["recording_complete"] = json!(db_write == "saved" && document_write == "saved");
        out["warnings"] = json!(warnings);
        (out["markdown"], out["revision"]) = match doc {
            Ok(p) => (json!(p.render()), json!(p.revision())),
            Err(_) => (Value::Null, Value::Null),
        };
        Ok(out)
    }

    /// Add or update (by title) a learning record; idempotent.
    ///
    /// # Errors
    /// `invalid`, `not_found`.
    pub fn record_learning(
        &self,
        id: &str,
        expect: IfRevision<'_>,
        title: &str,
        body: &str,
        status: &str,
    ) -> Result<Value, PlanError> {
        let title = title_text("title", title, limits::TITLE)?;
        let body = one_line("body", body, limits::TEXT)?;
        if status.is_empty()
            || status.len() > 20
            || !status
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
        {
            return Err(PlanError::Invalid(format!(
                "record status `{}` is not accepted; use one lowercase word such as active, resolved or parked",
                clip(status, 40)
            )));
        }
        let mut created = false;
        let plan = self.mutate(id, expect, |plan| {
            let rec = LearningRecord {
                title: title.clone(),
                status: status.to_owned(),
                body: body.clone(),
            };
            match plan.records.iter_mut().find(|r| r.title == title) {
                Some(r) => *r = rec,
                None => {
                    if plan.records.len() >= limits::LOG {
                        return Err(PlanError::Invalid(format!(
                            "the plan already has {} learning records",
                            limits::LOG
                        )));
                    }
                    plan.records.push(rec);
                    created = true;
                }
            }
            Ok(())
        })?;
        Ok(
            json!({"plan_id": plan.id.as_str(), "revision": plan.revision(), "title": title, "status": status, "created": created, "records": plan.records.len()}),
        )
    }
}

/// The evaluation of a plan at a phase (no writes).
fn evaluation(p: &Plan, phase: &str, study_id: &str) -> Value {
    let (done, total) = (p.milestone_done(), p.milestones.len());
    let next = p.next_milestone();
    let summary = match next {
        Some((i, m)) => format!(
            "{phase}: {done}/{total} milestones done; next: #{i} {}",
            m.title
        ),
        None if total > 0 => format!("{phase}: all {total} milestones done"),
        None => format!("{phase}: no milestones yet"),
    };
    json!({
        "plan_id": p.id.as_str(),
        "phase": phase,
        "study_id": study_id,
        "milestone_done": done,
        "milestone_total": total,
        "progress": if total == 0 { Value::Null } else { json!(done as f64 / total as f64) },
        "next_milestone": next.map(|(_, m)| m.title.clone()),
        "next_milestone_index": next.map(|(i, _)| i),
        "readiness": readiness(p),
        "summary": summary,
    })
}
