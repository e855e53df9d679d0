//! The tool inventory and the calls behind it: the nine plan tools in the
//! reference order (`PLAN_TOOL_NAMES`), then `record_plan_learning`,
//! `log_topic`, `end_session` and `session_search`. The server checks each
//! call's arguments against the tool's schema first ([`crate::schema`]);
//! each call then goes through the product's
//! own layers ([`studyloop::plans::PlanApp`], the session feeds, the store),
//! so the MCP door refuses exactly like the CLI and web doors.
//!
//! A refusal is `Err(failure)`, the envelope's [`Failure`] built by the product's
//! one mapping ([`PlanError::failure`], the CLI's for session and store errors), so
//! the MCP door refuses with the code, message and details the CLI and web give for
//! the same failure. Its message starts with the plan layer's refusal word
//! (`not_found:`, `invalid_id:`, `conflict:`, `stale_revision:`, `invalid:`,
//! `not_ready:`, `invalid_milestone:`, `plan_error:`), which is also
//! `details.plan_code`.

use serde_json::{Map, Value, json};
use studyloop::context::Ctx;
use studyloop::envelope::Failure;

use crate::outputs;
use crate::refusal::invalid;
use studyloop::plans::{
    CreateRequest, IfRevision, PlanApp, PlanError, PlanPatch, PlanStatus, evaluation_revision,
    required_request_id, required_revision,
};

/// The plan tools, in the reference order (the product's one list).
pub use studyloop::plans::PLAN_TOOL_NAMES;

/// The other tools, after the plan tools.
pub const OTHER_TOOL_NAMES: [&str; 4] = [
    "record_plan_learning",
    "log_topic",
    "end_session",
    "session_search",
];

/// What a call does to the world, as MCP's tool annotations say it, so a
/// client can ask before `delete_study_plan` or `end_session` and not before a read.
#[derive(Clone, Copy)]
pub struct Hints {
    /// Changes nothing.
    pub read_only: bool,
    /// May remove or replace what is there (meaningful when not read-only).
    pub destructive: bool,
    /// The same call again changes nothing more.
    pub idempotent: bool,
}

const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
};
/// Adds (a checkpoint, a feed line, a new plan): a repeat adds again or is refused.
const ADD: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
};
/// Sets a value that can be set back (status, a milestone, a record by title).
const SET: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: true,
};
/// Removes or replaces what is there (a plan's fields, the plan, the live session).
const DESTROY: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: true,
};

/// One tool: name, title, description, effect, JSON Schema of its arguments.
pub struct ToolSpec {
    /// The name.
    pub name: &'static str,
    /// The envelope's `command` of its success (the words of the CLI command or
    /// web route doing the same; docs/using-studyloop.md "The JSON envelope").
    pub command: &'static str,
    /// The human title (`title` and `annotations.title`).
    pub title: &'static str,
    /// What a call does to the world.
    pub hints: Hints,
    /// What it does.
    pub description: &'static str,
    /// The input schema (an object schema).
    pub schema: Value,
    /// The `outputSchema`: the success envelope around the result [`crate::outputs`]
    /// describes, or the failure envelope ([`studyloop::envelope_schema::tool_output`]).
    pub output: Value,
}

fn s(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}
fn b(desc: &str) -> Value {
    json!({"type": "boolean", "description": desc})
}
fn int(desc: &str, lo: i64, hi: i64) -> Value {
    json!({"type": "integer", "minimum": lo, "maximum": hi, "description": desc})
}
fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// Every tool, in order.
#[must_use]
pub fn specs() -> Vec<ToolSpec> {
    let status =
        json!({"type": "string", "enum": ["draft", "active", "paused", "complete", "abandoned"]});
    let id = s("The plan id (lowercase letters, digits, `-`).");
    // Issue 30 item 2: a create names its request, a change the revision it read.
    let request_id = s(
        "A new id for this create (e.g. a UUID: lowercase a-z, 0-9, `.`, `_`, `:`, `-`); send the same one only to retry this same create, which then returns the plan it made and creates nothing.",
    );
    let if_revision = s(
        "The plan's `revision` as you last read it (get_study_plan, list_study_plans or the last change's result); a plan changed since is refused with its current revision.",
    );
    let list = |d: &str| json!({"type": "array", "items": {"type": "string"}, "description": d});
    let milestones = json!({"type": "array", "description": "Milestones in order: titles or {title, concepts?, done?}.",
        "items": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"title": {"type": "string"}, "concepts": {"type": "array", "items": {"type": "string"}}, "done": {"type": "boolean"}}, "required": ["title"]}]}});
    let tools = vec![
        ToolSpec {
            name: "list_study_plans",
            command: "plan.list",
            title: "List study plans",
            hints: READ,
            description: "List study plans (active first, then oldest updated first).",
            schema: obj(json!({"status": status}), &[]),
            output: outputs::plan_list(),
        },
        ToolSpec {
            name: "get_study_plan",
            command: "plan.show",
            title: "Show a study plan",
            hints: READ,
            description: "One plan: summary, mission, milestones, records, readiness; markdown and checkpoint history on request.",
            schema: obj(
                json!({"plan_id": id, "include_markdown": b("Include the document."), "include_history": b("Include logged checkpoints."),
                "history_limit": int("Checkpoints to include.", 1, 200)}),
                &["plan_id"],
            ),
            output: outputs::plan_detail(),
        },
        ToolSpec {
            name: "get_planning_interview",
            command: "plan.interview",
            title: "Planning interview",
            hints: READ,
            description: "The planning interview: questions, a seed and the existing plans.",
            schema: obj(json!({}), &[]),
            output: outputs::interview(),
        },
        ToolSpec {
            name: "create_study_plan",
            command: "plan.new",
            title: "Create a study plan",
            hints: ADD,
            description: "Create a plan from interview answers (why, success, topics, constraints, out_of_scope, milestones, target_date, resources). An existing id is a conflict; status active is gated on readiness.",
            schema: obj(
                json!({"title": s("The plan title."), "answers": {"type": "object", "description": "The interview answers."},
                "plan_id": id, "status": status, "request_id": request_id}),
                &["title", "answers", "request_id"],
            ),
            output: outputs::plan_detail(),
        },
        ToolSpec {
            name: "update_study_plan",
            command: "plan.update",
            title: "Update a study plan",
            hints: DESTROY,
            description: "Apply every given field together and save once.",
            schema: obj(
                json!({"plan_id": id, "if_revision": if_revision, "title": s("Title."), "topics": list("Topics."), "target_date": s("YYYY-MM-DD."),
                "energy_floor": int("Lowest energy for this plan.", 1, 10), "review_cadence_days": int("Days between reviews.", 1, 90),
                "notes": s("Notes."), "milestones": milestones, "status": status, "why": s("Why."), "success": list("Success criteria."),
                "constraints": s("Constraints."), "out_of_scope": s("Out of scope."), "resources": list("Resources.")}),
                &["plan_id", "if_revision"],
            ),
            output: outputs::plan_detail(),
        },
        ToolSpec {
            name: "set_study_plan_status",
            command: "plan.status",
            title: "Set a plan's status",
            hints: SET,
            description: "Set the status; activation needs a why, a success criterion and a milestone.",
            schema: obj(
                json!({"plan_id": id, "if_revision": if_revision, "status": status}),
                &["plan_id", "if_revision", "status"],
            ),
            output: outputs::plan_detail(),
        },
        ToolSpec {
            name: "set_study_plan_milestone",
            command: "plan.milestone",
            title: "Mark a milestone done or not done",
            hints: SET,
            description: "Set milestone `index` (0-based) done or not done (a set, never a toggle).",
            schema: obj(
                json!({"plan_id": id, "if_revision": if_revision, "index": int("0-based milestone index.", 0, 10_000), "done": b("Done?")}),
                &["plan_id", "if_revision", "index", "done"],
            ),
            output: outputs::plan_detail(),
        },
        ToolSpec {
            name: "evaluate_study_plan",
            command: "plan.evaluate",
            title: "Evaluate a study plan",
            hints: ADD,
            description: "Evaluate progress at a phase; record=true writes the checkpoint to the document and the database (and then needs if_revision).",
            schema: obj(
                json!({"plan_id": id, "phase": {"type": "string", "enum": ["start", "mid", "end"]}, "study_id": s("The study session."),
                "record": b("Write the checkpoint."), "if_revision": if_revision}),
                &["plan_id", "phase"],
            ),
            output: outputs::evaluation(),
        },
        ToolSpec {
            name: "delete_study_plan",
            command: "plan.delete",
            title: "Delete a study plan",
            hints: DESTROY,
            description: "Delete a plan document; refuses unless confirmed.",
            schema: obj(
                json!({"plan_id": id, "if_revision": if_revision, "confirmed": b("Confirm the deletion.")}),
                &["plan_id", "if_revision"],
            ),
            output: outputs::deletion(),
        },
        ToolSpec {
            name: "record_plan_learning",
            command: "plan.record",
            title: "Record a learning on a plan",
            hints: SET,
            description: "Add or update (by title) a learning record on a plan; idempotent.",
            schema: obj(
                json!({"plan_id": id, "if_revision": if_revision, "title": s("Record title."), "body": s("Body."), "status": s("Status word (default active).")}),
                &["plan_id", "if_revision", "title"],
            ),
            output: outputs::learning(),
        },
        ToolSpec {
            name: "log_topic",
            command: "topic",
            title: "Log a topic to the live session",
            hints: ADD,
            description: "Log a topic to the live study session (feed and database).",
            schema: obj(
                json!({"topic": s("The topic or concept."), "status": {"type": "string", "enum": ["learning", "struggling", "insight", "win", "parked"]},
                "note": s("A short note.")}),
                &["topic"],
            ),
            output: outputs::topic(),
        },
        ToolSpec {
            name: "end_session",
            command: "session.end",
            title: "End the live study session",
            hints: DESTROY,
            description: "End the live study session (notes, progress rows, teardown).",
            schema: obj(json!({}), &[]),
            output: outputs::session_end(),
        },
        ToolSpec {
            name: "session_search",
            command: "search",
            title: "Search recorded sessions",
            hints: READ,
            description: "Lexical search over recorded sessions (FTS5, best match first).",
            schema: obj(
                json!({"query": s("Words to look for."), "limit": int("At most this many hits.", 1, 100)}),
                &["query"],
            ),
            output: outputs::search(),
        },
    ];
    // structuredContent is the envelope (issue 30 item 1): the listed schema is its
    // success around the result, or its failure (which a client validates too).
    tools
        .into_iter()
        .map(|mut t| {
            t.output = studyloop::envelope_schema::tool_output(t.command, t.output);
            t
        })
        .collect()
}

/// The arguments of one call, checked against the tool's schema keys.
struct Args<'a>(&'a Map<String, Value>);

type Refusal = Failure;

impl Args<'_> {
    fn str(&self, k: &str) -> Result<Option<&str>, Refusal> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(format!("`{k}` must be a string"))),
        }
    }
    fn req(&self, k: &str) -> Result<&str, Refusal> {
        self.str(k)?
            .ok_or_else(|| invalid(format!("`{k}` is required")))
    }
    fn bool(&self, k: &str, default: bool) -> Result<bool, Refusal> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(format!("`{k}` must be true or false"))),
        }
    }
    fn int(&self, k: &str, default: Option<i64>, lo: i64, hi: i64) -> Result<Option<i64>, Refusal> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => match v.as_i64() {
                Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
                _ => Err(invalid(format!(
                    "`{k}` = {v} is out of range; use an integer from {lo} to {hi}"
                ))),
            },
        }
    }
}

fn refuse(e: &PlanError) -> Refusal {
    e.failure()
}

/// The required `if_revision` of a change to plan `id`.
fn revision<'a>(a: &'a Args<'_>, id: &str) -> Result<IfRevision<'a>, Refusal> {
    required_revision(a.str("if_revision")?, id).map_err(|e| refuse(&e))
}

fn plan_app(ctx: &Ctx) -> Result<PlanApp, Refusal> {
    PlanApp::from_ctx(ctx).map_err(|e| refuse(&e))
}

/// Whether `name` is one of the tools (an unknown name is a protocol error, not a tool error).
#[must_use]
pub fn is_known(name: &str) -> bool {
    PLAN_TOOL_NAMES.contains(&name) || OTHER_TOOL_NAMES.contains(&name)
}

/// What an unknown tool name is told: the name (cut to 60 characters) and every tool.
#[must_use]
pub fn unknown_tool(name: &str) -> String {
    format!(
        "unknown tool `{}`; tools: {}, {}",
        name.chars().take(60).collect::<String>(),
        PLAN_TOOL_NAMES.join(", "),
        OTHER_TOOL_NAMES.join(", ")
    )
}

/// Call tool `name` with `args`.
///
/// # Errors
/// The refusal, as the envelope's failure.
pub fn call(ctx: &Ctx, name: &str, args: &Map<String, Value>) -> Result<Value, Refusal> {
    // Unknown tools and arguments the schema forbids never get here: the
    // server checks both first (`schema::Checker`). The typed reads below
    // still refuse a wrong type, should a caller bypass the server.
    if !is_known(name) {
        return Err(invalid(unknown_tool(name)));
    }
    let a = Args(args);
    let p = |r: Result<Value, PlanError>| r.map_err(|e| refuse(&e));
    match name {
        "list_study_plans" => {
            let status = a
                .str("status")?
                .map(PlanStatus::parse)
                .transpose()
                .map_err(|e| refuse(&e))?;
            let app = plan_app(ctx)?;
            let (plans, problems) = app.list(status).map_err(|e| refuse(&e))?;
            let list: Vec<Value> = plans.iter().map(studyloop::plans::summary).collect();
            Ok(json!({"plans": list, "count": list.len(), "problems": problems}))
        }
        "get_study_plan" => {
            let (id, md, hist) = (
                a.req("plan_id")?,
                a.bool("include_markdown", false)?,
                a.bool("include_history", false)?,
            );
            let limit = a.int("history_limit", Some(20), 1, 200)?;
            p(plan_app(ctx)?.detail(id, md, if hist { limit } else { None }))
        }
        "get_planning_interview" => p(plan_app(ctx)?.interview()),
        "create_study_plan" => {
            let answers = match args.get("answers") {
                Some(v @ Value::Object(_)) => v.clone(),
                None | Some(Value::Null) => {
                    return Err(invalid(
                        "`answers` is required (an object of interview answers)",
                    ));
                }
                Some(_) => return Err(invalid("`answers` must be an object")),
            };
            let request_id = required_request_id(a.str("request_id")?).map_err(|e| refuse(&e))?;
            let req = CreateRequest {
                title: a.req("title")?.to_owned(),
                answers,
                plan_id: a.str("plan_id")?.map(str::to_owned),
                status: a.str("status")?.map(str::to_owned),
                request_id: Some(request_id.to_owned()),
            };
            let app = plan_app(ctx)?;
            let plan = app.create(&req).map_err(|e| refuse(&e))?;
            p(app.detail(plan.id.as_str(), false, None))
        }
        "update_study_plan" => {
            let id = a.req("plan_id")?.to_owned();
            let expect = revision(&a, &id)?;
            let mut fields = args.clone();
            fields.remove("plan_id");
            fields.remove("if_revision");
            let app = plan_app(ctx)?;
            let plan = app
                .update(&id, expect, &PlanPatch(Value::Object(fields)))
                .map_err(|e| refuse(&e))?;
            p(app.detail(plan.id.as_str(), false, None))
        }
        "set_study_plan_status" => {
            let id = a.req("plan_id")?;
            let expect = revision(&a, id)?;
            let app = plan_app(ctx)?;
            let plan = app
                .set_status(id, expect, a.req("status")?)
                .map_err(|e| refuse(&e))?;
            p(app.detail(plan.id.as_str(), false, None))
        }
        "set_study_plan_milestone" => {
            let id = a.req("plan_id")?;
            let index = match args.get("index") {
                Some(v) => v
                    .as_i64()
                    .ok_or_else(|| invalid(format!("`index` {v} is not an integer")))?,
                None => return Err(invalid("`index` is required (0-based)")),
            };
            let done = match args.get("done") {
                Some(Value::Bool(b)) => *b,
                _ => return Err(invalid("`done` is required: true or false")),
            };
            let expect = revision(&a, id)?;
            let app = plan_app(ctx)?;
            let plan = app
                .set_milestone(id, expect, index, done)
                .map_err(|e| refuse(&e))?;
            p(app.detail(plan.id.as_str(), false, None))
        }
        "evaluate_study_plan" => {
            let (id, phase) = (a.req("plan_id")?, a.req("phase")?);
            let (study, record) = (a.str("study_id")?.unwrap_or(""), a.bool("record", false)?);
            let expect =
                evaluation_revision(record, a.str("if_revision")?, id).map_err(|e| refuse(&e))?;
            p(plan_app(ctx)?.evaluate(id, phase, study, record, expect))
        }
        "delete_study_plan" => {
            let (id, confirmed) = (a.req("plan_id")?, a.bool("confirmed", false)?);
            let expect = revision(&a, id)?;
            p(plan_app(ctx)?.delete(id, expect, confirmed))
        }
        "record_plan_learning" => {
            let (id, title) = (a.req("plan_id")?, a.req("title")?);
            let expect = revision(&a, id)?;
            let (body, status) = (
                a.str("body")?.unwrap_or(""),
                a.str("status")?.unwrap_or("active"),
            );
            p(plan_app(ctx)?.record_learning(id, expect, title, body, status))
        }
        "log_topic" => crate::session_tools::log_topic(
            ctx,
            a.req("topic")?,
            a.str("status")?.unwrap_or("learning"),
            a.str("note")?.unwrap_or(""),
        ),
        "end_session" => crate::session_tools::end_session(ctx),
        "session_search" => {
            let limit = a.int("limit", Some(10), 1, 100)?.unwrap_or(10);
            crate::session_tools::session_search(
                ctx,
                a.req("query")?,
                u32::try_from(limit).unwrap_or(10),
            )
        }
        _ => Err(invalid(format!(
            "tool `{name}` is listed but not implemented"
        ))),
    }
}
