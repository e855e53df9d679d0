//! "What should I do now?": one engine behind `GET /api/now` and
//! `studyloop now`. Inputs: energy (low/medium/high or 1..10), minutes
//! available, modality, interleave. With no active plan the answer is a
//! fixed starter (the golden file `tests/golden/now_plan_no_active.json`);
//! with active plans the primary is the most urgent eligible plan's next
//! milestone (`source = study_plan:<id>:<index>`), every recommendation
//! carries `plan_refs`, and the plan-only keys appear.

use serde_json::{Value, json};

use super::doc::clip;
use super::{Plan, PlanError, PlanStatus};

/// The inputs, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NowInput {
    /// low, medium or high.
    pub energy: &'static str,
    /// Minutes available (5..=240).
    pub time_minutes: u32,
    /// read, practice, review or discuss (`None`: any).
    pub modality: Option<&'static str>,
    /// Mix plans rather than finish one first.
    pub interleave: bool,
}

impl Default for NowInput {
    fn default() -> Self {
        Self {
            energy: "medium",
            time_minutes: 25,
            modality: None,
            interleave: false,
        }
    }
}

const MODALITIES: [&str; 4] = ["read", "practice", "review", "discuss"];

impl NowInput {
    /// Parse raw door values (absent = default).
    ///
    /// # Errors
    /// [`PlanError::Invalid`] naming the value and the accepted set.
    pub fn parse(
        energy: Option<&str>,
        time: Option<&str>,
        modality: Option<&str>,
        interleave: Option<&str>,
    ) -> Result<Self, PlanError> {
        let mut out = Self::default();
        if let Some(e) = energy.map(str::trim).filter(|e| !e.is_empty()) {
            out.energy = match e {
                "low" => "low",
                "medium" => "medium",
                "high" => "high",
                n => crate::session::Energy::parse(n)
                    .map(crate::session::Energy::label)
                    .map_err(|_| {
                        PlanError::Invalid(format!(
                            "energy `{}` is not accepted; use low, medium, high or 1..10",
                            clip(n, 20)
                        ))
                    })?,
            };
        }
        if let Some(t) = time.map(str::trim).filter(|t| !t.is_empty()) {
            out.time_minutes = match t.parse::<u32>() {
                Ok(n @ 5..=240) => n,
                _ => {
                    return Err(PlanError::Invalid(format!(
                        "time `{}` is not accepted; give minutes from 5 to 240",
                        clip(t, 20)
                    )));
                }
            };
        }
        if let Some(m) = modality
            .map(str::trim)
            .filter(|m| !m.is_empty() && *m != "any")
        {
            out.modality = Some(MODALITIES.into_iter().find(|x| *x == m).ok_or_else(|| {
                PlanError::Invalid(format!(
                    "modality `{}` is not accepted; use any, read, practice, review or discuss",
                    clip(m, 20)
                ))
            })?);
        }
        if let Some(i) = interleave.map(str::trim).filter(|i| !i.is_empty()) {
            out.interleave = match i {
                "1" | "true" | "yes" => true,
                "0" | "false" | "no" => false,
                _ => {
                    return Err(PlanError::Invalid(format!(
                        "interleave `{}` is not accepted; use true or false",
                        clip(i, 20)
                    )));
                }
            };
        }
        Ok(out)
    }

    fn energy_value(&self) -> u8 {
        match self.energy {
            "low" => 3,
            "medium" => 6,
            _ => 9,
        }
    }

    /// Minutes for one block: what the energy sustains, within the time given.
    fn block(&self) -> u32 {
        let cap = match self.energy {
            "low" => 15,
            "medium" => 25,
            _ => 50,
        };
        self.time_minutes.min(cap)
    }
}

fn rec(
    kind: &str,
    title: &str,
    action: &str,
    minutes: u32,
    source: &str,
    reason: &str,
    refs: Value,
) -> Value {
    json!({"kind": kind, "title": title, "action": action, "minutes": minutes,
           "source": source, "reason": reason, "plan_refs": refs})
}

fn starters(input: &NowInput) -> Vec<Value> {
    let m = input.block();
    vec![
        rec(
            "starter",
            &format!("Start a {m}-minute focused study session"),
            "studyloop study TOPIC --agent NAME",
            m,
            "starter",
            "No active study plan: one focused session on what matters most today.",
            json!([]),
        ),
        rec(
            "plan",
            "Draft a study plan with the architect",
            "studyloop plan architect",
            m,
            "starter:plan",
            "A plan turns sessions into milestones; `now` then follows it.",
            json!([]),
        ),
        rec(
            "review",
            "Review what you studied last",
            "studyloop search WORDS",
            m.min(15),
            "starter:review",
            "Retrieval practice: recall before you reread.",
            json!([]),
        ),
    ]
}

fn days_until(target: Option<&str>, today: jiff::civil::Date) -> Option<i64> {
    let d: jiff::civil::Date = target?.parse().ok()?;
    let span = today.until(d).ok()?;
    Some(i64::from(span.get_days()))
}

fn urgency(days: Option<i64>) -> &'static str {
    match days {
        None => "none",
        Some(d) if d < 0 => "overdue",
        Some(0..=7) => "urgent",
        Some(8..=30) => "soon",
        Some(_) => "later",
    }
}

/// Build the answer from the plans (any status; only active ones count).
#[must_use]
pub fn build(
    plans: &[Plan],
    problems: &[String],
    input: &NowInput,
    today: jiff::civil::Date,
) -> Value {
    let mut out = json!({
        "primary": Value::Null,
        "alternates": [],
        "starter": true,
        "energy": input.energy,
        "time_minutes": input.time_minutes,
        "modality": input.modality,
        "interleave": input.interleave,
    });
    let active: Vec<&Plan> = plans
        .iter()
        .filter(|p| p.status == PlanStatus::Active)
        .collect();
    if active.is_empty() {
        let mut s = starters(input).into_iter();
        out["primary"] = s.next().unwrap_or(Value::Null);
        out["alternates"] = Value::Array(s.take(2).collect());
        return out;
    }
    let energy = input.energy_value();
    let m = input.block();
    let mut entries = Vec::new();
    let (mut deferred, mut repairs, mut completion, mut warnings) =
        (vec![], vec![], vec![], problems.to_vec());
    for p in &active {
        let days = days_until(p.target_date.as_deref(), today);
        let next = p.next_milestone();
        let floor_ok = p.energy_floor.is_none_or(|f| energy >= f);
        let ready = super::readiness(p).ready;
        if !ready {
            warnings.push(format!(
                "plan `{}` is active but not ready: {}",
                p.id,
                super::readiness(p).blockers.join("; ")
            ));
        }
        if !floor_ok {
            deferred.push(json!({"plan_id": p.id.as_str(), "energy_floor": p.energy_floor}));
            repairs.push(json!({"plan_id": p.id.as_str(),
                "action": format!("come back with energy {} or more, or lower its energy_floor", p.energy_floor.unwrap_or(1))}));
        }
        if next.is_none() && !p.milestones.is_empty() {
            completion.push(json!({"plan_id": p.id.as_str(), "action": format!("studyloop plan status {} complete", p.id)}));
        }
        entries.push((p, days, floor_ok && next.is_some()));
    }
    let active_json: Vec<Value> = entries
        .iter()
        .map(|(p, days, eligible)| {
            let next = p.next_milestone();
            json!({"plan_id": p.id.as_str(), "title": p.title, "target_urgency": urgency(*days),
                   "days_until_target": days, "energy_floor": p.energy_floor, "eligible": eligible,
                   "next_milestone": next.map(|(_, m)| m.title.clone()), "next_milestone_index": next.map(|(i, _)| i),
                   "milestone_done": p.milestone_done(), "milestone_total": p.milestones.len(),
                   "ready": super::readiness(p).ready})
        })
        .collect();
    // Most urgent first (no date last), then the listing order.
    let mut eligible: Vec<&(&&Plan, Option<i64>, bool)> = entries.iter().filter(|e| e.2).collect();
    eligible.sort_by_key(|(_, days, _)| days.unwrap_or(i64::MAX));
    let mut recs: Vec<Value> = eligible
        .iter()
        .filter_map(|(p, _, _)| {
            let (i, ms) = p.next_milestone()?;
            Some(rec(
                "milestone",
                &ms.title,
                &format!("studyloop study \"{}\"", ms.title.replace('"', "'")),
                m,
                &format!("study_plan:{}:{i}", p.id),
                &format!(
                    "Next milestone of `{}` ({}/{} done).",
                    p.title,
                    p.milestone_done(),
                    p.milestones.len()
                ),
                json!([{"plan_id": p.id.as_str(), "milestone_index": i}]),
            ))
        })
        .collect();
    if !input.interleave && recs.len() > 1 {
        recs.truncate(1);
    }
    let reviewed = eligible.first().map_or(active[0], |e| *e.0);
    recs.push(rec(
        "review",
        &format!("Evaluate progress on {}", reviewed.title),
        &format!("studyloop plan evaluate {} --phase mid", reviewed.id),
        m.min(15),
        &format!("study_plan:{}:review", reviewed.id),
        "A short checkpoint keeps the plan honest.",
        json!([{"plan_id": reviewed.id.as_str(), "milestone_index": Value::Null}]),
    ));
    recs.extend(starters(input).into_iter().skip(2));
    let mut it = recs.into_iter();
    out["primary"] = it.next().unwrap_or(Value::Null);
    out["alternates"] = Value::Array(it.take(2).collect());
    out["starter"] = json!(false);
    out["active_plans"] = Value::Array(active_json);
    out["energy_deferred"] = Value::Array(deferred);
    out["energy_deferred_repairs"] = Value::Array(repairs);
    out["completion_actions"] = Value::Array(completion);
    out["warnings"] = json!(warnings);
    out
}

/// Today's date (UTC).
#[must_use]
pub fn today() -> jiff::civil::Date {
    jiff::tz::Offset::UTC
        .to_datetime(crate::clock::now())
        .date()
}

/// Read the plans through `app` and build the answer.
///
/// # Errors
/// The plans directory cannot be listed.
pub fn now(app: &super::PlanApp, input: &NowInput) -> Result<Value, PlanError> {
    let (plans, problems) = app.list(Some(PlanStatus::Active))?;
    Ok(build(&plans, &problems, input, today()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plans::{CreateRequest, IfRevision, PlanApp};

    const GOLDEN: &str = include_str!("../../tests/golden/now_plan_no_active.json");

    #[test]
    fn no_active_plan_equals_the_golden_file() {
        let draft = {
            let d = tempfile::tempdir().unwrap();
            let app = PlanApp::new(d.path().join("p"), d.path().join("db"));
            app.create(&CreateRequest {
                title: "Draft only".into(),
                answers: serde_json::json!({}),
                plan_id: None,
                status: None,
                request_id: None,
            })
            .unwrap()
        };
        // A draft (not active) plan changes nothing.
        let v = build(
            &[draft],
            &["a problem".into()],
            &NowInput::default(),
            today(),
        );
        assert_eq!(serde_json::to_string_pretty(&v).unwrap() + "\n", GOLDEN);
    }

    #[test]
    fn the_active_plans_next_milestone_leads() {
        let d = tempfile::tempdir().unwrap();
        let app = PlanApp::new(d.path().join("p"), d.path().join("db"));
        let mk = |id: &str, target: Option<&str>, floor: Option<i64>| {
            let mut answers = serde_json::json!({"why": "w", "success": ["s"], "milestones": ["OVER clause", "Frames", "Ranking"]});
            if let Some(t) = target {
                answers["target_date"] = serde_json::json!(t);
            }
            if let Some(f) = floor {
                answers["energy_floor"] = serde_json::json!(f);
            }
            app.create(&CreateRequest {
                title: format!("Plan {id}"),
                answers,
                plan_id: Some(id.into()),
                status: Some("active".into()),
                request_id: None,
            })
            .unwrap();
        };
        mk("sql-windows", Some("2026-12-10"), None);
        mk("later", Some("2027-06-01"), None);
        mk("tiring", Some("2026-12-01"), Some(9));
        app.set_milestone("sql-windows", IfRevision::Unchecked, 0, true)
            .unwrap();
        let day: jiff::civil::Date = "2026-12-01".parse().unwrap();
        let (plans, problems) = app.list(Some(PlanStatus::Active)).unwrap();
        let v = build(&plans, &problems, &NowInput::default(), day);
        assert_eq!(v["starter"], serde_json::json!(false));
        assert_eq!(
            v["primary"]["plan_refs"][0],
            serde_json::json!({"plan_id": "sql-windows", "milestone_index": 1})
        );
        assert_eq!(
            v["primary"]["source"],
            serde_json::json!("study_plan:sql-windows:1")
        );
        assert_eq!(v["alternates"].as_array().unwrap().len(), 2);
        assert!(
            v["alternates"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["plan_refs"].is_array())
        );
        let ids: Vec<&str> = v["active_plans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["plan_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 3);
        let tiring = v["active_plans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["plan_id"] == "tiring")
            .unwrap();
        assert_eq!(
            (tiring["eligible"].clone(), tiring["target_urgency"].clone()),
            (serde_json::json!(false), serde_json::json!("urgent"))
        );
        assert_eq!(
            v["energy_deferred"][0]["plan_id"],
            serde_json::json!("tiring")
        );
        // With high energy the most urgent plan (due today) leads.
        let high = NowInput::parse(Some("high"), None, None, None).unwrap();
        let v = build(&plans, &problems, &high, day);
        assert_eq!(
            v["primary"]["source"],
            serde_json::json!("study_plan:tiring:0")
        );
        assert_eq!(v["energy_deferred"], serde_json::json!([]));
    }

    #[test]
    fn bad_inputs_name_the_value() {
        for (e, t, m, i) in [
            (Some("sleepy"), None, None, None),
            (Some("11"), None, None, None),
            (None, Some("4"), None, None),
            (None, Some("241"), None, None),
            (None, Some("ten"), None, None),
            (None, None, Some("dance"), None),
            (None, None, None, Some("maybe")),
        ] {
            let err = NowInput::parse(e, t, m, i).unwrap_err().to_string();
            assert!(err.starts_with("invalid:"), "{err}");
        }
        assert_eq!(
            NowInput::parse(Some("2"), Some("90"), Some("any"), Some("1")).unwrap(),
            NowInput {
                energy: "low",
                time_minutes: 90,
                modality: None,
                interleave: true
            }
        );
    }
}
