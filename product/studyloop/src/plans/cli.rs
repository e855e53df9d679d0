//! `studyloop plan …` and `studyloop now`: clap definitions and one runner
//! each, over [`PlanApp`] and the `now` engine (the same calls the web API
//! and `studyloop-mcp` make).

use std::fmt::Write as _;

use clap::Subcommand;
use serde_json::{Value, json};

use super::now::{self, NowInput};
use super::{CreateRequest, IfRevision, PlanApp, PlanError, PlanStatus};
use crate::context::Ctx;

/// The interactive CLI's expectation: the given revision, else the plan as it is now
/// (the person typing just read it; scripts pass `--if-revision`, or `--json`).
fn expect(given: Option<&str>) -> IfRevision<'_> {
    given.map_or(IfRevision::Unchecked, IfRevision::Given)
}

/// `studyloop plan …`.
#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// List plans (active first).
    List {
        /// Only this status: draft, active, paused, complete or abandoned.
        #[arg(long)]
        status: Option<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Show one plan (detail, readiness; --markdown for the document).
    Show {
        /// The plan id.
        plan_id: String,
        /// Print the document itself.
        #[arg(long)]
        markdown: bool,
        /// Include up to this many logged checkpoints (1..200).
        #[arg(long)]
        history: Option<i64>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Create a plan (draft unless --status active, which needs readiness).
    New {
        /// The title.
        #[arg(required_unless_present = "json")]
        title: Option<String>,
        /// The id (default: derived from the title).
        #[arg(long = "id")]
        plan_id: Option<String>,
        /// Why you are learning this.
        #[arg(long)]
        why: Option<String>,
        /// A success criterion (repeatable).
        #[arg(long)]
        success: Vec<String>,
        /// A milestone title (repeatable, in order).
        #[arg(long)]
        milestone: Vec<String>,
        /// A topic (repeatable).
        #[arg(long)]
        topic: Vec<String>,
        /// Target date, YYYY-MM-DD.
        #[arg(long)]
        target_date: Option<String>,
        /// Initial status.
        #[arg(long)]
        status: Option<String>,
        /// Create from a whole plan document instead (`-` for stdin).
        #[arg(long, conflicts_with_all = ["why", "success", "milestone", "topic", "target_date", "status", "plan_id"])]
        from_file: Option<std::path::PathBuf>,
        /// A request id for this create (e.g. a UUID): the same id again returns the
        /// plan it made and creates nothing (for scripts that retry).
        #[arg(long)]
        request_id: Option<String>,
        /// Script mode: the fields as one JSON object (inline, `-` for stdin or `@PATH`),
        /// `request_id` required; prints the JSON envelope (docs/using-studyloop.md).
        #[arg(long, value_name = "JSON|-|@PATH", conflicts_with_all = ["title", "plan_id", "why", "success", "milestone", "topic", "target_date", "status", "from_file", "request_id"])]
        json: Option<String>,
    },
    /// The planning interview (questions the architect asks).
    Interview {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Set a plan's status (active needs readiness).
    Status {
        /// The plan id.
        #[arg(required_unless_present = "json")]
        plan_id: Option<String>,
        /// draft, active, paused, complete or abandoned.
        #[arg(required_unless_present = "json")]
        status: Option<String>,
        /// Apply only if the plan is still at this revision (`plan show --json` shows it);
        /// without it the change applies to the plan as it is now.
        #[arg(long)]
        if_revision: Option<String>,
        /// Script mode: the fields as one JSON object (inline, `-` for stdin or `@PATH`),
        /// `if_revision` required; prints the JSON envelope (docs/using-studyloop.md).
        #[arg(long, value_name = "JSON|-|@PATH", conflicts_with_all = ["plan_id", "status", "if_revision"])]
        json: Option<String>,
    },
    /// Mark milestone INDEX (0-based) done, or not done with --undone.
    Milestone {
        /// The plan id.
        #[arg(required_unless_present = "json")]
        plan_id: Option<String>,
        /// The 0-based index.
        #[arg(required_unless_present = "json")]
        index: Option<i64>,
        /// Mark it not done.
        #[arg(long)]
        undone: bool,
        /// Apply only if the plan is still at this revision (`plan show --json` shows it);
        /// without it the change applies to the plan as it is now.
        #[arg(long)]
        if_revision: Option<String>,
        /// Script mode: the fields as one JSON object (inline, `-` for stdin or `@PATH`),
        /// `if_revision` required; prints the JSON envelope (docs/using-studyloop.md).
        #[arg(long, value_name = "JSON|-|@PATH", conflicts_with_all = ["plan_id", "index", "undone", "if_revision"])]
        json: Option<String>,
    },
    /// Evaluate progress; --record writes the checkpoint to the document and DB.
    Evaluate {
        /// The plan id.
        #[arg(required_unless_present = "json")]
        plan_id: Option<String>,
        /// start, mid or end.
        #[arg(long, default_value = "mid")]
        phase: String,
        /// The study session this belongs to.
        #[arg(long, default_value = "")]
        study_id: String,
        /// Write the checkpoint (default: preview only).
        #[arg(long)]
        record: bool,
        /// Apply only if the plan is still at this revision (`plan show --json` shows it);
        /// without it the change applies to the plan as it is now.
        #[arg(long)]
        if_revision: Option<String>,
        /// Script mode: the fields as one JSON object (inline, `-` for stdin or `@PATH`),
        /// `if_revision` (with `record`) required; prints the JSON envelope (docs/using-studyloop.md).
        #[arg(long, value_name = "JSON|-|@PATH", conflicts_with_all = ["plan_id", "phase", "study_id", "record", "if_revision"])]
        json: Option<String>,
    },
    /// Add or update (by title) a learning record.
    Record {
        /// The plan id.
        #[arg(required_unless_present = "json")]
        plan_id: Option<String>,
        /// The record's title.
        #[arg(required_unless_present = "json")]
        title: Option<String>,
        /// The body.
        #[arg(long, default_value = "")]
        body: String,
        /// Its status word.
        #[arg(long, default_value = "active")]
        status: String,
        /// Apply only if the plan is still at this revision (`plan show --json` shows it);
        /// without it the change applies to the plan as it is now.
        #[arg(long)]
        if_revision: Option<String>,
        /// Script mode: the fields as one JSON object (inline, `-` for stdin or `@PATH`),
        /// `if_revision` required; prints the JSON envelope (docs/using-studyloop.md).
        #[arg(long, value_name = "JSON|-|@PATH", conflicts_with_all = ["plan_id", "title", "body", "status", "if_revision"])]
        json: Option<String>,
    },
    /// Rebuild the SQLite index from the documents.
    Reindex,
    /// Print the plans directory, or one plan's document path.
    Path {
        /// The plan id.
        plan_id: Option<String>,
    },
    /// Start a planning session with the study-plan architect persona.
    Architect {
        /// What to plan (default "Study plan").
        subject: Option<String>,
        /// Harness (default: detected).
        #[arg(short, long)]
        agent: Option<String>,
    },
    /// Delete a plan document (its checkpoint log stays).
    Delete {
        /// The plan id.
        #[arg(required_unless_present = "json")]
        plan_id: Option<String>,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
        /// Apply only if the plan is still at this revision (`plan show --json` shows it);
        /// without it the change applies to the plan as it is now.
        #[arg(long)]
        if_revision: Option<String>,
        /// Script mode: the fields as one JSON object (inline, `-` for stdin or `@PATH`),
        /// `if_revision` required; prints the JSON envelope (docs/using-studyloop.md).
        #[arg(long, value_name = "JSON|-|@PATH", conflicts_with_all = ["plan_id", "yes", "if_revision"])]
        json: Option<String>,
    },
}

/// `studyloop now` options.
#[derive(Debug, clap::Args)]
pub struct NowArgs {
    /// low, medium, high or 1..10.
    #[arg(long)]
    pub energy: Option<String>,
    /// Minutes available (5..240).
    #[arg(long)]
    pub time: Option<String>,
    /// any, read, practice, review or discuss.
    #[arg(long)]
    pub modality: Option<String>,
    /// Mix plans rather than finish one first.
    #[arg(long)]
    pub interleave: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

fn pretty(v: &Value) -> String {
    // A `Value` always serialises (string keys only): `{:#}` is its pretty form.
    format!("{v:#}\n")
}

fn summary_line(p: &super::Plan) -> String {
    format!(
        "{:<24} {:<9} {}/{} {}\n",
        p.id,
        p.status.as_str(),
        p.milestone_done(),
        p.milestones.len(),
        p.title
    )
}

/// Run `studyloop plan …`; returns the text to print.
///
/// # Errors
/// The operation's refusal.
pub fn run_plan(ctx: &Ctx, cmd: PlanCommand) -> Result<String, PlanError> {
    let app = PlanApp::from_ctx(ctx)?;
    if let Some((sub, input)) = cmd.json_input() {
        let text = super::cli_json::read(input, &ctx.cwd)?;
        let (command, result) = super::cli_json::run(&app, sub, &text)?;
        return Ok(crate::envelope::success_text(&command, &result));
    }
    Ok(match cmd {
        PlanCommand::List { status, json } => {
            let status = status.as_deref().map(PlanStatus::parse).transpose()?;
            let (plans, problems) = app.list(status)?;
            if json {
                let list: Vec<Value> = plans.iter().map(super::views::summary).collect();
                let v = json!({"plans": list, "count": list.len(), "problems": problems});
                crate::envelope::success_text("plan.list", &v)
            } else if plans.is_empty() && problems.is_empty() {
                "No study plans yet; `studyloop plan new TITLE` or `studyloop plan architect`.\n"
                    .into()
            } else {
                let mut s: String = plans.iter().map(summary_line).collect();
                for p in &problems {
                    let _ = writeln!(s, "! {p}");
                }
                s
            }
        }
        PlanCommand::Show {
            plan_id,
            markdown,
            history,
            json,
        } => {
            if markdown && !json {
                app.markdown(&plan_id)?
            } else if json {
                crate::envelope::success_text(
                    "plan.show",
                    &app.detail(&plan_id, markdown, history)?,
                )
            } else {
                pretty(&app.detail(&plan_id, markdown, history)?)
            }
        }
        PlanCommand::New {
            title,
            plan_id,
            why,
            success,
            milestone,
            topic,
            target_date,
            status,
            from_file,
            request_id,
            json: _,
        } => {
            let title = title.unwrap_or_default();
            let plan = match from_file {
                Some(path) => {
                    let limit = super::doc::limits::DOC_BYTES as u64;
                    let text = super::cli_json::read_source(
                        &path,
                        &ctx.cwd,
                        limit,
                        "the --from-file document",
                    )?;
                    app.create_from_markdown(&text, request_id.as_deref())?
                }
                None => {
                    let mut answers =
                        json!({"success": success, "milestones": milestone, "topics": topic});
                    if let Some(w) = why {
                        answers["why"] = json!(w);
                    }
                    if let Some(d) = target_date {
                        answers["target_date"] = json!(d);
                    }
                    app.create(&CreateRequest {
                        title,
                        answers,
                        plan_id,
                        status,
                        request_id,
                    })?
                }
            };
            format!(
                "Created plan {} ({}, revision {}) at {}\n",
                plan.id,
                plan.status.as_str(),
                plan.revision(),
                app.doc_path(&plan.id).display()
            )
        }
        PlanCommand::Interview { json: true } => {
            crate::envelope::success_text("plan.interview", &app.interview()?)
        }
        PlanCommand::Interview { json: false } => pretty(&app.interview()?),
        PlanCommand::Status {
            plan_id,
            status,
            if_revision,
            json: _,
        } => {
            let (plan_id, status) = (plan_id.unwrap_or_default(), status.unwrap_or_default());
            let p = app.set_status(&plan_id, expect(if_revision.as_deref()), &status)?;
            format!(
                "Plan {} is now {} (revision {}).\n",
                p.id,
                p.status.as_str(),
                p.revision()
            )
        }
        PlanCommand::Milestone {
            plan_id,
            index,
            undone,
            if_revision,
            json: _,
        } => {
            let (plan_id, index) = (plan_id.unwrap_or_default(), index.unwrap_or(-1));
            let p = app.set_milestone(&plan_id, expect(if_revision.as_deref()), index, !undone)?;
            format!(
                "Plan {}: {}/{} milestones done (revision {}).\n",
                p.id,
                p.milestone_done(),
                p.milestones.len(),
                p.revision()
            )
        }
        PlanCommand::Evaluate {
            plan_id,
            phase,
            study_id,
            record,
            if_revision,
            json: _,
        } => pretty(&app.evaluate(
            &plan_id.unwrap_or_default(),
            &phase,
            &study_id,
            record,
            expect(if_revision.as_deref()),
        )?),
        PlanCommand::Record {
            plan_id,
            title,
            body,
            status,
            if_revision,
            json: _,
        } => pretty(&app.record_learning(
            &plan_id.unwrap_or_default(),
            expect(if_revision.as_deref()),
            &title.unwrap_or_default(),
            &body,
            &status,
        )?),
        PlanCommand::Reindex => {
            let (n, problems) = app.reindex()?;
            let mut s = format!("Indexed {n} plans from {}.\n", app.dir().display());
            for p in &problems {
                let _ = writeln!(s, "! {p}");
            }
            s
        }
        PlanCommand::Path { plan_id } => match plan_id {
            Some(id) => format!("{}\n", app.doc_path(&super::PlanId::parse(&id)?).display()),
            None => format!("{}\n", app.dir().display()),
        },
        PlanCommand::Delete {
            plan_id,
            yes,
            if_revision,
            json: _,
        } => pretty(&app.delete(
            &plan_id.unwrap_or_default(),
            expect(if_revision.as_deref()),
            yes,
        )?),
        PlanCommand::Architect { subject, agent } => architect(ctx, subject, agent)?,
    })
}

impl PlanCommand {
    /// The subcommand's name and its `--json` input, when it was given one (the
    /// commands that change something; the read commands' `--json` is a switch).
    #[must_use]
    pub fn json_input(&self) -> Option<(&'static str, &str)> {
        let (sub, json) = match self {
            Self::New { json, .. } => ("new", json),
            Self::Status { json, .. } => ("status", json),
            Self::Milestone { json, .. } => ("milestone", json),
            Self::Evaluate { json, .. } => ("evaluate", json),
            Self::Record { json, .. } => ("record", json),
            Self::Delete { json, .. } => ("delete", json),
            _ => return None,
        };
        json.as_deref().map(|j| (sub, j))
    }
}

fn architect(
    ctx: &Ctx,
    subject: Option<String>,
    agent: Option<String>,
) -> Result<String, PlanError> {
    let topic = subject
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "Study plan".into());
    let agent = agent
        .as_deref()
        .map(crate::adapters::Harness::parse)
        .transpose()
        .map_err(|e| PlanError::Invalid(e.to_string()))?;
    let started = crate::session::start(
        ctx,
        &crate::session::StartRequest {
            topic,
            agent,
            energy: crate::session::Energy::DEFAULT,
            mode: crate::persona::Mode::PlanArchitect,
            scrub_env: false,
        },
    )
    .map_err(|e| match e {
        crate::session::SessionError::Scope(s) => PlanError::Scope(s.to_string()),
        other => PlanError::Storage(other.to_string()),
    })?;
    let name = started.state.mux_session().unwrap_or_default().to_owned();
    started
        .warnings
        .iter()
        .for_each(|w| eprintln!("studyloop: warning: {}", crate::term::text(w)));
    if !started.tmux.attach(&name).unwrap_or(false) {
        return Ok(format!(
            "Started a planning session in tmux session {name}; attach with: tmux attach -t {name}\n"
        ));
    }
    Ok(String::new())
}

/// Run `studyloop now`; returns the text to print.
///
/// # Errors
/// Bad inputs or an unreadable plans directory.
pub fn run_now(ctx: &Ctx, args: &NowArgs) -> Result<String, PlanError> {
    let input = NowInput::parse(
        args.energy.as_deref(),
        args.time.as_deref(),
        args.modality.as_deref(),
        args.interleave.then_some("true"),
    )?;
    let app = PlanApp::from_ctx(ctx)?;
    let v = now::now(&app, &input)?;
    if args.json {
        return Ok(crate::envelope::success_text("now", &v));
    }
    let line = |r: &Value| {
        format!(
            "{} ({} min) — {}\n    {}\n",
            r["title"].as_str().unwrap_or("?"),
            r["minutes"],
            r["reason"].as_str().unwrap_or(""),
            r["action"].as_str().unwrap_or("")
        )
    };
    let mut s = format!("Now: {}", line(&v["primary"]));
    if let Some(refs) = v["primary"]["plan_refs"].as_array().and_then(|r| r.first()) {
        let title = v["active_plans"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["plan_id"] == refs["plan_id"]))
            .and_then(|p| p["title"].as_str())
            .unwrap_or_default();
        let _ = writeln!(s, "    Advances plan: {title}");
    }
    for a in v["alternates"].as_array().into_iter().flatten() {
        let _ = write!(s, "Or:  {}", line(a));
    }
    Ok(s)
}
