//! Turning door input (CLI flags, web JSON, MCP arguments, all as JSON
//! values) into checked plan fields: strings one line and bounded, lists
//! bounded, ranges checked, dates real. Every refusal names the field, the
//! value and what is accepted.

use serde_json::Value;

use super::PlanError;
use super::doc::{Milestone, Plan, clip, limits, one_line, title_text};

/// A string field (`None` when absent or null).
pub(crate) fn opt_str(v: &Value, key: &str) -> Result<Option<String>, PlanError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => one_line(key, s, limits::TEXT).map(Some),
        Some(other) => Err(PlanError::Invalid(format!(
            "`{key}` must be a string, not {}",
            clip(&other.to_string(), 60)
        ))),
    }
}

/// A list of one-line strings; a single string is a one-item list (or, for
/// comma lists such as topics, split on commas).
pub(crate) fn opt_list(
    v: &Value,
    key: &str,
    split_commas: bool,
) -> Result<Option<Vec<String>>, PlanError> {
    let items: Vec<String> = match v.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if split_commas => s.split(',').map(str::to_owned).collect(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str().map(str::to_owned).ok_or_else(|| {
                    PlanError::Invalid(format!(
                        "`{key}` must be a list of strings; got {}",
                        clip(&x.to_string(), 60)
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(PlanError::Invalid(format!(
                "`{key}` must be a list of strings, not {}",
                clip(&other.to_string(), 60)
            )));
        }
    };
    bounded(key, items.len())?;
    let mut out = Vec::with_capacity(items.len());
    for i in items {
        let t = one_line(key, &i, limits::TEXT)?;
        if !t.is_empty() {
            out.push(t);
        }
    }
    Ok(Some(out))
}

fn bounded(key: &str, n: usize) -> Result<(), PlanError> {
    if n > limits::ITEMS {
        return Err(PlanError::Invalid(format!(
            "`{key}` has {n} items; at most {} are accepted",
            limits::ITEMS
        )));
    }
    Ok(())
}

/// An integer in `lo..=hi`.
pub(crate) fn opt_int(v: &Value, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, PlanError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_i64() {
            Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
            _ => Err(PlanError::Invalid(format!(
                "`{key}` = {} is out of range; use an integer from {lo} to {hi}",
                clip(&x.to_string(), 40)
            ))),
        },
    }
}

/// A `YYYY-MM-DD` date that exists.
pub(crate) fn date(key: &str, raw: &str) -> Result<String, PlanError> {
    let raw = raw.trim();
    if raw.len() == 10 && raw.parse::<jiff::civil::Date>().is_ok() {
        Ok(raw.to_owned())
    } else {
        Err(PlanError::Invalid(format!(
            "`{key}` = `{}` is not a date; write YYYY-MM-DD (e.g. 2026-12-24)",
            clip(raw, 40)
        )))
    }
}

/// A concept: one line without the `,` that separates concepts.
fn concept(raw: &str) -> Result<String, PlanError> {
    Ok(one_line("concepts", raw, 200)?.replace(',', ";"))
}

/// Milestones: strings or `{title, concepts?, done?}` objects. A milestone
/// whose title matches one in `keep` keeps its `done` unless given.
pub(crate) fn milestones(
    v: &Value,
    key: &str,
    keep: &[Milestone],
) -> Result<Option<Vec<Milestone>>, PlanError> {
    let items = match v.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(a)) => a,
        Some(Value::String(s)) => {
            return milestones(
                &serde_json::json!({ key: s.split(';').collect::<Vec<_>>() }),
                key,
                keep,
            );
        }
        Some(other) => {
            return Err(PlanError::Invalid(format!(
                "`{key}` must be a list of titles or {{title, concepts}} objects, not {}",
                clip(&other.to_string(), 60)
            )));
        }
    };
    bounded(key, items.len())?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let (title, concepts, done) = match item {
            Value::String(s) => (s.as_str(), Vec::new(), None),
            Value::Object(o) => {
                let title = o.get("title").and_then(Value::as_str).ok_or_else(|| {
                    PlanError::Invalid(format!(
                        "each milestone needs a `title` string; got {}",
                        clip(&item.to_string(), 60)
                    ))
                })?;
                let concepts = opt_list(item, "concepts", true)?.unwrap_or_default();
                let done = match o.get("done") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(x) => {
                        return Err(PlanError::Invalid(format!(
                            "milestone `done` must be true or false, not {}",
                            clip(&x.to_string(), 20)
                        )));
                    }
                };
                (title, concepts, done)
            }
            other => {
                return Err(PlanError::Invalid(format!(
                    "each milestone is a title or a {{title, concepts}} object, not {}",
                    clip(&other.to_string(), 60)
                )));
            }
        };
        let title = title_text("milestone title", title, limits::TITLE)?;
        let concepts = concepts
            .iter()
            .map(|c| concept(c))
            .collect::<Result<Vec<_>, _>>()?;
        let done = done.unwrap_or_else(|| keep.iter().any(|m| m.title == title && m.done));
        out.push(Milestone {
            title,
            done,
            concepts,
        });
    }
    Ok(Some(out))
}

/// Refuse keys outside `accepted` (a typo must not be silently dropped).
pub(crate) fn known_keys(v: &Value, what: &str, accepted: &[&str]) -> Result<(), PlanError> {
    let Some(o) = v.as_object() else {
        return Err(PlanError::Invalid(format!(
            "`{what}` must be a JSON object"
        )));
    };
    if let Some(k) = o.keys().find(|k| !accepted.contains(&k.as_str())) {
        return Err(PlanError::Invalid(format!(
            "`{what}` has an unknown key `{}`; accepted: {}",
            clip(k, 40),
            accepted.join(", ")
        )));
    }
    Ok(())
}

/// Apply the shared answer/patch fields present in `v`.
pub(crate) fn apply_fields(plan: &mut Plan, v: &Value) -> Result<(), PlanError> {
    if let Some(s) = opt_str(v, "why")? {
        plan.why = s;
    }
    if let Some(l) = opt_list(v, "success", false)? {
        plan.success = l;
    }
    if let Some(l) = opt_list(v, "topics", true)? {
        plan.topics = l;
    }
    if let Some(s) = opt_str(v, "constraints")? {
        plan.constraints = s;
    }
    if let Some(s) = opt_str(v, "out_of_scope")? {
        plan.out_of_scope = s;
    }
    if let Some(l) = opt_list(v, "resources", false)? {
        plan.resources = l;
    }
    if let Some(s) = opt_str(v, "notes")? {
        plan.notes = s;
    }
    if let Some(s) = opt_str(v, "target_date")? {
        plan.target_date = if s.is_empty() {
            None
        } else {
            Some(date("target_date", &s)?)
        };
    }
    if let Some(n) = opt_int(v, "energy_floor", 1, 10)? {
        plan.energy_floor = u8::try_from(n).ok();
    }
    if let Some(n) = opt_int(v, "review_cadence_days", 1, 90)? {
        plan.review_cadence_days = u16::try_from(n).ok();
    }
    if let Some(m) = milestones(v, "milestones", &plan.milestones)? {
        plan.milestones = m;
    }
    Ok(())
}
