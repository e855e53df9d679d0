//! `journey::now_with_active_plan` (ungraded): an active plan created through the
//! product's API, then `GET /api/now` must recommend its next milestone
//! (`starter: false`, the plan in `active_plans`, `primary.plan_refs[0]` naming the next
//! milestone, `primary.source` starting `study_plan:<id>:`), and the SPA's Today card in
//! real Chromium must say which plan it advances. No agent and no model take part.

use std::time::Duration;

use serde_json::{Value, json};
use studyloop_acceptance::case::{Case, Checks, Destination, Finished, StepFailure, Steps};
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::scratch::Scratch;
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_acceptance::web_acp::http;
use studyloop_actors::ActorKind;

use super::browser::{self, shot, text_of};
use super::web::{self, HTTP_TIMEOUT, errored};

/// The label every artefact of this cell carries.
pub const LABEL: &str =
    "plan door check: grades nothing (no agent, no model: the now engine and the Today card)";
/// The plan this cell creates.
pub const PLAN_ID: &str = "sql-windows";
/// Its title.
pub const TITLE: &str = "SQL windows";
/// Its milestones; none done, so the first is next.
pub const MILESTONES: [&str; 3] = ["OVER clause", "Frames", "Ranking"];
/// Nominal harness for the case record (no agent is started).
const NOMINAL: HarnessName = HarnessName::Pi;
const T: Duration = Duration::from_secs(30);

/// The Today card's line for the plan.
#[must_use]
pub fn advances_line() -> String {
    format!("Advances plan: {TITLE} — next: {}", MILESTONES[0])
}

/// Runs the cell as a case into `dest`.
pub fn run(ctx: &TrialContext, dest: &dyn Destination) -> Finished {
    let mut case = Case::new(ctx, NOMINAL, Surface::Journey);
    case.actor = ActorKind::Scripted;
    let facts = &mut case.record.facts;
    facts.harness = None;
    facts.auth_mode = None;
    facts.actor_backend = None;
    case.record.notes.push(LABEL.to_owned());
    case.run(dest, drive)
}

/// A scrubbed scratch world with its config initialised and `studyloop web` started:
/// the steps both plan journeys without an agent open with.
///
/// # Errors
/// Whichever step failed.
pub fn world_and_server(c: &mut Case<'_>) -> Result<(), StepFailure> {
    c.step_doing("scratch", "a scrubbed scratch world", |c| {
        let scratch =
            Scratch::create_with(c.ctx.caller.clone(), AuthMode::Scrubbed).map_err(errored)?;
        c.env = scratch.env();
        c.slots.put_scratch(scratch);
        Ok(())
    })?;
    c.step_doing("config-init", "studyloop config init --force", |c| {
        studyloop_acceptance::door::studyloop(c, "config-init", &["config", "init", "--force"])
            .map(drop)
    })?;
    c.step_doing(
        "server-start",
        "studyloop web --port 0 in the scratch world",
        web::start_server,
    )
}

/// `method path` on the case's server; the answer goes to the bundle as `product/<tag>.json`.
///
/// # Errors
/// A transport failure.
pub fn api(
    c: &mut Case<'_>,
    tag: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<http::Response, StepFailure> {
    let addr = c.server()?.addr.clone();
    let r = http::request(&addr, method, path, body, HTTP_TIMEOUT).map_err(errored)?;
    c.record
        .attach(format!("product/{tag}.json"), r.text.clone());
    Ok(r)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    world_and_server(c)?;
    c.step_doing(
        "create-plan",
        "POST /api/plans: an active plan with three milestones",
        |c| {
            let plan = json!({"title": TITLE, "plan_id": PLAN_ID, "status": "active", "request_id": "uat-now-create",
                "answers": {"why": "reports", "success": ["running totals"], "milestones": MILESTONES}});
            let r = api(c, "plan-create", "POST", "/api/plans", Some(&plan))?;
            if r.status == 201 {
                Ok(())
            } else {
                Err(errored(format!("POST /api/plans answered {}: {}", r.status, r.text)))
            }
        },
    )?;
    let now = c.step_doing("api-now", "GET /api/now", |c| {
        let r = api(c, "now", "GET", "/api/now", None)?;
        if r.status == 200 {
            Ok(r.result().clone())
        } else {
            Err(errored(format!(
                "GET /api/now answered {}: {}",
                r.status, r.text
            )))
        }
    })?;
    c.verify(
        "now-recommends-the-plan",
        Checks::new()
            .check("starter is false", |_: &mut Case<'_>| {
                if now["starter"] == false {
                    Ok(())
                } else {
                    Err(format!("starter is {}", now["starter"]))
                }
            })
            .check(
                "the plan is in active_plans with its next milestone",
                |_| active_plan(&now),
            )
            .check("primary.plan_refs[0] names the next milestone", |_| {
                plan_ref(&now)
            })
            .check("primary.source starts study_plan:<id>:", |_| {
                let want = format!("study_plan:{PLAN_ID}:");
                match now["primary"]["source"].as_str() {
                    Some(s) if s.starts_with(&want) => Ok(()),
                    other => Err(format!(
                        "primary.source is {other:?}, expected it to start {want:?}"
                    )),
                }
            }),
    )?;
    browser::launch(c)?;
    browser::with_browser(c, |c, chrome, shots| {
        c.step_doing(
            "today-card",
            "open #today; the card's line names the plan and its next milestone",
            |c| {
                let base = format!("http://{}", c.server()?.addr);
                chrome.goto(&format!("{base}/#today")).map_err(errored)?;
                let shown = chrome.wait_for("body[data-today-ready] .today-card .today-plan", T);
                shot(chrome, shots, "today")?;
                shown.map_err(errored)?;
                let line = text_of(chrome, ".today-card .today-plan")?;
                c.record.detail(json!({"advances_line": line}));
                if line.as_deref() == Some(advances_line().as_str()) {
                    Ok(())
                } else {
                    Err(errored(format!(
                        "the Today card says {line:?}, expected {:?}",
                        advances_line()
                    )))
                }
            },
        )
    })
}

fn active_plan(now: &Value) -> Result<(), String> {
    let plans = now["active_plans"]
        .as_array()
        .ok_or("active_plans is not a list")?;
    let plan = plans
        .iter()
        .find(|p| p["plan_id"] == PLAN_ID)
        .ok_or_else(|| format!("{PLAN_ID} is not in active_plans: {plans:?}"))?;
    if plan["next_milestone"] == MILESTONES[0] && plan["next_milestone_index"] == 0 {
        Ok(())
    } else {
        Err(format!(
            "active_plans[{PLAN_ID}] is {plan}, expected next milestone 0 {:?}",
            MILESTONES[0]
        ))
    }
}

fn plan_ref(now: &Value) -> Result<(), String> {
    let r = &now["primary"]["plan_refs"][0];
    let title = &now["primary"]["title"];
    if r["plan_id"] == PLAN_ID && r["milestone_index"] == 0 && title == MILESTONES[0] {
        Ok(())
    } else {
        Err(format!(
            "primary.plan_refs[0] is {r} (title {title}), expected plan {PLAN_ID} milestone 0 {:?}",
            MILESTONES[0]
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_accept_the_engines_shape_and_name_what_is_off() {
        let good = json!({"starter": false,
            "active_plans": [{"plan_id": PLAN_ID, "next_milestone": "OVER clause", "next_milestone_index": 0}],
            "primary": {"title": "OVER clause", "source": "study_plan:sql-windows:0",
                        "plan_refs": [{"plan_id": PLAN_ID, "milestone_index": 0}]}});
        assert_eq!(active_plan(&good), Ok(()));
        assert_eq!(plan_ref(&good), Ok(()));
        let mut off = good.clone();
        off["primary"]["plan_refs"][0]["milestone_index"] = json!(1);
        assert!(plan_ref(&off).unwrap_err().contains("milestone 0"));
        off["active_plans"] = json!([]);
        assert!(
            active_plan(&off)
                .unwrap_err()
                .contains("not in active_plans")
        );
        assert_eq!(
            advances_line(),
            "Advances plan: SQL windows — next: OVER clause"
        );
    }
}
