//! What each tool returns: the JSON Schema of a success's `result`, as the
//! product's own views build it
//! (`studyloop::plans::views`, the session feeds, `store::search_db`). Every
//! listed key is required and typed; what can be unknown is `null`, never a
//! made-up 0. Extra keys are allowed (a newer server may add some), so an
//! old client keeps validating. `tools::specs` wraps each in the envelope
//! (`studyloop::envelope_schema::tool_output`: the tool's `outputSchema`), which
//! `schema::Checker` compiles with the input schemas; the tests validate every
//! tool's real results with it.

use serde_json::{Map, Value, json};

fn t(ty: &str) -> Value {
    json!({"type": ty})
}
fn nullable(ty: &str) -> Value {
    json!({"type": [ty, "null"]})
}
fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}
fn list_of(item: Value) -> Value {
    json!({"type": "array", "items": item})
}
fn one_of_words(words: &[&str]) -> Value {
    json!({"type": "string", "enum": words})
}

/// An object schema whose every property is required.
fn all_required(props: Value) -> Value {
    let keys: Vec<String> = props
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": props, "required": keys})
}

/// `props` plus `more`, all required (`more` wins on a shared key).
fn extend(props: &Value, more: Value) -> Value {
    let mut o: Map<String, Value> = props.as_object().cloned().unwrap_or_default();
    if let Value::Object(m) = more {
        o.extend(m);
    }
    Value::Object(o)
}

fn status() -> Value {
    one_of_words(&["draft", "active", "paused", "complete", "abandoned"])
}

/// A plan's revision (`Plan::revision`): what a change sends back as `if_revision`.
fn revision() -> Value {
    json!({"type": "string", "pattern": "^r[0-9a-f]{16}$"})
}

fn readiness() -> Value {
    all_required(json!({"ready": t("boolean"), "blockers": strings(), "nudges": strings()}))
}

/// The summary's properties (`views::summary`).
fn summary_props() -> Value {
    json!({
        "plan_id": t("string"), "revision": revision(), "title": t("string"), "status": status(),
        "created": t("string"), "updated": t("string"), "target_date": nullable("string"),
        "energy_floor": nullable("integer"), "review_cadence_days": nullable("integer"),
        "topics": strings(), "milestone_done": t("integer"), "milestone_total": t("integer"),
        "next_milestone": nullable("string"), "next_milestone_index": nullable("integer"),
        "ready": t("boolean"),
    })
}

/// A plan's detail (`views::detail`), with `markdown` and `checkpoints` when asked for.
pub fn plan_detail() -> Value {
    let checkpoint_row = all_required(json!({"date": t("string"), "phase": t("string"),
        "study_id": t("string"), "milestone_done": t("integer"), "milestone_total": t("integer"),
        "note": t("string")}));
    let checkpoint_record = all_required(json!({"id": t("integer"), "plan_id": t("string"),
        "phase": t("string"), "study_id": t("string"), "recorded_at": t("string"),
        "milestone_done": t("integer"), "milestone_total": t("integer"), "note": t("string")}));
    let props = extend(
        &summary_props(),
        json!({
            "plan": all_required(summary_props()),
            "mission": all_required(json!({"why": t("string"), "success": strings(),
                "constraints": t("string"), "out_of_scope": t("string"), "resources": strings()})),
            "milestones": list_of(all_required(json!({"index": t("integer"), "title": t("string"),
                "done": t("boolean"), "concepts": strings()}))),
            "records": list_of(all_required(json!({"title": t("string"), "status": t("string"),
                "body": t("string")}))),
            "document_checkpoints": list_of(checkpoint_row),
            "notes": t("string"),
            "readiness": readiness(),
        }),
    );
    let mut s = all_required(props);
    // Only on request (`include_markdown`, `include_history`): typed, not required.
    s["properties"]["markdown"] = t("string");
    s["properties"]["checkpoints"] = list_of(checkpoint_record);
    s
}

/// `list_study_plans`.
pub fn plan_list() -> Value {
    all_required(json!({"plans": list_of(all_required(summary_props())),
        "count": t("integer"), "problems": strings()}))
}

/// `get_planning_interview`.
pub fn interview() -> Value {
    all_required(json!({
        "questions": list_of(all_required(json!({"key": t("string"), "prompt": t("string"),
            "why": t("string"), "required": t("boolean"), "multi": t("boolean")}))),
        "seed": all_required(json!({"title": t("string"), "answers": t("object"), "status": status()})),
        "existing_plans": list_of(all_required(json!({"plan_id": t("string"),
            "title": t("string"), "status": status()}))),
    }))
}

/// `evaluate_study_plan` (a preview, or the recorded checkpoint with each sink's outcome).
pub fn evaluation() -> Value {
    let write = one_of_words(&["saved", "failed", "not_requested"]);
    let mut s = all_required(json!({
        "plan_id": t("string"), "phase": one_of_words(&["start", "mid", "end"]),
        "study_id": t("string"), "milestone_done": t("integer"), "milestone_total": t("integer"),
        // No milestones: progress is unknown, so null (never 0).
        "progress": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "next_milestone": nullable("string"), "next_milestone_index": nullable("integer"),
        "readiness": readiness(), "summary": t("string"),
        "db_write": write.clone(), "document_write": write,
        "recording_complete": t("boolean"), "warnings": strings(),
    }));
    // Only when `record` is true: the document as saved and its revision, null when
    // saving failed.
    s["properties"]["markdown"] = nullable("string");
    s["properties"]["revision"] = json!({"type": ["string", "null"], "pattern": "^r[0-9a-f]{16}$"});
    s
}

/// `delete_study_plan`.
pub fn deletion() -> Value {
    all_required(json!({"deleted": t("boolean"), "plan_id": t("string"), "warnings": strings()}))
}

/// `record_plan_learning`.
pub fn learning() -> Value {
    all_required(
        json!({"plan_id": t("string"), "revision": revision(), "title": t("string"), "status": t("string"),
        "created": t("boolean"), "records": t("integer")}),
    )
}

/// `log_topic`.
pub fn topic() -> Value {
    all_required(json!({"logged": t("boolean"), "topic": t("string"),
        "status": one_of_words(&["learning", "struggling", "insight", "win", "parked"]),
        "study_session_id": t("string"),
        "db_write": one_of_words(&["saved", "failed", "not_applicable"])}))
}

/// `end_session`: nothing was live (`ended: false`, a message) or the end's summary.
pub fn session_end() -> Value {
    let ended = all_required(
        json!({"ended": {"const": true}, "study_session_id": t("string"),
        "topic": t("string"), "duration_minutes": nullable("integer"),
        "win_count": t("integer"), "struggle_count": t("integer"), "warnings": strings()}),
    );
    let idle = all_required(json!({"ended": {"const": false}, "message": t("string")}));
    json!({"type": "object", "anyOf": [ended, idle]})
}

/// `session_search` (`store::SearchOutcome`): a hit is a note or a
/// conversation turn, and names its turn id (null for a note).
pub fn search() -> Value {
    let hit = all_required(json!({"kind": one_of_words(&["note", "turn"]),
        "turn_id": nullable("string"), "session_id": t("string"), "source": t("string"),
        "project_path": nullable("string"), "updated_at": t("string"), "role": t("string"),
        "timestamp": t("string"), "preview": t("string"), "score": t("number"),
        "lexical_rank": nullable("integer"), "semantic_rank": nullable("integer")}));
    all_required(json!({"mode": one_of_words(&["lexical", "hybrid"]),
        "model": nullable("string"), "notice": nullable("string"), "results": list_of(hit),
        "count": t("integer"), "unembedded": t("integer")}))
}
