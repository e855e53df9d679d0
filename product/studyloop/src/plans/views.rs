//! The JSON shapes every door returns: a plan summary, the detail, the
//! readiness report and the planning interview.

use serde::Serialize;
use serde_json::{Value, json};

use super::{Plan, PlanError, PlanStatus};

/// Whether a plan may become active, and what would make it better.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Readiness {
    /// No blockers.
    pub ready: bool,
    /// What must be fixed before activation.
    pub blockers: Vec<String>,
    /// What would help but is not required.
    pub nudges: Vec<String>,
}

/// The readiness gate: a why, a success criterion and a milestone are required.
#[must_use]
pub fn readiness(p: &Plan) -> Readiness {
    let mut blockers = Vec::new();
    if p.why.trim().is_empty() {
        blockers.push("mission: add a `why` (what studying this is for)".to_owned());
    }
    if p.success.is_empty() {
        blockers.push("mission: add at least one success criterion".to_owned());
    }
    if p.milestones.is_empty() {
        blockers.push("milestones: add at least one milestone".to_owned());
    }
    let mut nudges = Vec::new();
    if p.target_date.is_none() {
        nudges.push("set a target_date so `now` can weigh urgency".to_owned());
    }
    if p.topics.is_empty() {
        nudges.push("list the topics the plan covers".to_owned());
    }
    if p.out_of_scope.is_empty() {
        nudges.push("say what is out of scope".to_owned());
    }
    if !p.milestones.is_empty() && p.milestones.iter().all(|m| m.concepts.is_empty()) {
        nudges.push("name the concepts of each milestone".to_owned());
    }
    Readiness {
        ready: blockers.is_empty(),
        blockers,
        nudges,
    }
}

/// The one-line summary of a plan (list rows, `plan` in the detail).
#[must_use]
pub fn summary(p: &Plan) -> Value {
    let next = p.next_milestone();
    json!({
        "plan_id": p.id.as_str(),
        "revision": p.revision(),
        "title": p.title,
        "status": p.status.as_str(),
        "created": p.created,
        "updated": p.updated,
        "target_date": p.target_date,
        "energy_floor": p.energy_floor,
        "review_cadence_days": p.review_cadence_days,
        "topics": p.topics,
        "milestone_done": p.milestone_done(),
        "milestone_total": p.milestones.len(),
        "next_milestone": next.map(|(_, m)| m.title.clone()),
        "next_milestone_index": next.map(|(i, _)| i),
        "ready": readiness(p).ready,
    })
}

/// The detail: summary, mission, milestones, records, readiness.
#[must_use]
pub fn detail(p: &Plan) -> Value {
    let milestones: Vec<Value> = p
        .milestones
        .iter()
        .enumerate()
        .map(|(i, m)| json!({"index": i, "title": m.title, "done": m.done, "concepts": m.concepts}))
        .collect();
    // One summary (it renders and hashes the document for the revision), twice.
    let mut d = summary(p);
    let s = d.clone();
    if let Some(o) = d.as_object_mut() {
        o.insert("plan".into(), s);
        o.insert(
            "mission".into(),
            json!({"why": p.why, "success": p.success, "constraints": p.constraints,
                   "out_of_scope": p.out_of_scope, "resources": p.resources}),
        );
        o.insert("milestones".into(), Value::Array(milestones));
        o.insert("records".into(), json!(p.records));
        o.insert("document_checkpoints".into(), json!(p.checkpoints));
        o.insert("notes".into(), json!(p.notes));
        o.insert("readiness".into(), json!(readiness(p)));
    }
    d
}

/// The planning interview's questions (the architect persona asks these).
#[must_use]
pub fn interview_questions() -> Value {
    let q = |key: &str, prompt: &str, why: &str, required: bool, multi: bool| json!({"key": key, "prompt": prompt, "why": why, "required": required, "multi": multi});
    json!([
        q(
            "why",
            "Why do you want to learn this now?",
            "A plan without a reason stalls; activation needs it.",
            true,
            false
        ),
        q(
            "success",
            "How will you know you have succeeded?",
            "Success criteria make checkpoints honest; activation needs one.",
            true,
            true
        ),
        q(
            "topics",
            "Which topics does it cover?",
            "Topics link sessions to the plan.",
            false,
            true
        ),
        q(
            "milestones",
            "What are the steps, in order?",
            "Milestones drive `now`; activation needs one.",
            true,
            true
        ),
        q(
            "constraints",
            "What limits your time or energy?",
            "Constraints shape the pace.",
            false,
            false
        ),
        q(
            "out_of_scope",
            "What are you deliberately not learning?",
            "Scope keeps the plan finishable.",
            false,
            false
        ),
        q(
            "target_date",
            "By when (YYYY-MM-DD)?",
            "A date lets `now` weigh urgency.",
            false,
            false
        ),
        q(
            "resources",
            "Which books, courses or docs will you use?",
            "Resources anchor sessions.",
            false,
            true
        ),
    ])
}

/// Activation needs readiness.
pub(crate) fn gate(plan: &Plan, to: PlanStatus) -> Result<(), PlanError> {
    let r = readiness(plan);
    if to == PlanStatus::Active && !r.ready {
        return Err(PlanError::NotReady {
            blockers: r.blockers,
            nudges: r.nudges,
        });
    }
    Ok(())
}
