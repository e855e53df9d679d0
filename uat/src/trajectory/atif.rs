//! The conversation as an ATIF trajectory (Harbor's Agent Trajectory
//! Interchange Format): one `user` step per learner message and one `agent`
//! step per mentor reply, `step_id` counting from 1. The agent is the harness
//! that drove the mentor. Fields the bundle does not record (per-step
//! timestamps, model names, token counts) are left out, never guessed; the
//! StudyLoop identity (cell, tier, surface, manifest digest) goes in `extra`.

use serde_json::{Value, json};

use super::Conversation;

/// The ATIF version written; the pinned validator (`just deps-trajectory`) knows it.
pub const SCHEMA_VERSION: &str = "ATIF-v1.6";

/// The trajectory document.
#[must_use]
pub fn trajectory(c: &Conversation) -> Value {
    let mut steps = Vec::new();
    for t in &c.turns {
        steps.push(json!({
            "step_id": steps.len() + 1,
            "source": "user",
            "message": t.learner,
        }));
        let mut agent = json!({
            "step_id": steps.len() + 1,
            "source": "agent",
            "message": t.reply,
        });
        if let Some(ms) = t.elapsed_ms {
            // The turn's wall time (learner generation plus mentor reply).
            agent["extra"] = json!({"turn_elapsed_ms": ms});
        }
        steps.push(agent);
    }
    json!({
        "schema_version": SCHEMA_VERSION,
        "session_id": c.run_id,
        "agent": {
            "name": c.harness.as_deref().unwrap_or("studyloop"),
            // ATIF requires a version string; an unrecorded one says so.
            "version": c.harness_version.as_deref().unwrap_or("unrecorded"),
            "extra": {"role": "StudyLoop mentor, driven through this harness"},
        },
        "steps": steps,
        "extra": {
            "studyloop": {
                "cell": c.cell,
                "tier": c.tier,
                "surface": c.surface,
                "started": c.started,
                "manifest_sha256": c.manifest_sha256,
                "redacted": true,
            }
        },
    })
}
