//! The graded journey's calls into the product's own CLI, in the cell's scratch env:
//! logging the topic and the struggle (`studyloop topic`), the wind-down status, the
//! database path (`studyloop config show`), the learner record read back read-only,
//! and the search that must find the session's note. Each call's output goes to
//! `product/<tag>.txt` in the bundle.

use std::path::PathBuf;

use serde_json::{Value, json};
use studyloop_acceptance::case::{Case, StepFailure};
use studyloop_acceptance::door::{self, ProductDb, studyloop as cli};

use super::web::{Started, errored};

/// What the journey logs through `studyloop topic`: (concept, status, note).
pub const LOGGED: [(&str, &str, &str); 2] = [
    (
        "closures",
        "struggling",
        "mixed up captured variables and arguments",
    ),
    ("decorators", "win", "wrote a working decorator"),
];
pub(super) fn log_topics(j: &mut Case<'_>) -> Result<(), StepFailure> {
    for (concept, status, note) in LOGGED {
        cli(
            j,
            &format!("topic-{concept}"),
            &["topic", concept, "--status", status, "--note", note],
        )?;
    }
    j.record.detail(json!({"logged": LOGGED.iter().map(|(c, s, _)| json!({"concept": c, "status": s})).collect::<Vec<_>>()}));
    Ok(())
}

pub(super) fn status(j: &mut Case<'_>) -> Result<(), StepFailure> {
    let st = door::status(j, "status")?;
    j.record.detail(st.summary());
    if st.active() == Some(true) && st.topics_logged() == u64::try_from(LOGGED.len()).ok() {
        Ok(())
    } else {
        Err(errored(format!(
            "status shows active {} with {} topic(s), expected true and {}",
            st.summary()["active"],
            st.summary()["topics_logged"],
            LOGGED.len()
        )))
    }
}

pub(super) fn database(j: &mut Case<'_>) -> Result<PathBuf, StepFailure> {
    let out = cli(j, "config-show", &["config", "show"])?;
    out.lines()
        .find_map(|l| l.strip_prefix("database:"))
        .map(|p| PathBuf::from(p.trim()))
        .ok_or_else(|| errored("`studyloop config show` names no database"))
}

pub(super) fn learner_record(j: &mut Case<'_>, started: &Started) -> Result<(), StepFailure> {
    let path = database(j)?;
    let record = ProductDb::open(&path)
        .and_then(|db| db.session_record(&started.id))
        .map_err(errored)?;
    for (table, rows) in record.tables() {
        j.record.attach_json(&format!("db/{table}.json"), rows)?;
    }
    let concepts: Vec<&str> = LOGGED.iter().map(|(c, _, _)| *c).collect();
    let problems = record.problems(&started.persona_hash, &concepts);
    j.record.detail(json!({"rows": record.tables().iter().map(|(t, rows)| (t.to_string(), rows.len())).collect::<std::collections::BTreeMap<_, _>>(), "problems": problems}));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(errored(problems.join("; ")))
    }
}

pub(super) fn search(j: &mut Case<'_>, id: &str) -> Result<(), StepFailure> {
    let out = cli(j, "search", &["search", "closures", "--json"])?;
    let hits: Value = door::json_result(&out, "search").map_err(errored)?;
    // `{"mode", "notice", "results": [...], ...}`: hybrid or lexical, said.
    let results = hits["results"].as_array();
    let found = results.is_some_and(|a| a.iter().any(|h| h["session_id"] == id));
    j.record.detail(
        json!({"hits": results.map_or(0, Vec::len), "found_session": found,
        "mode": hits["mode"], "notice": hits["notice"]}),
    );
    if found {
        Ok(())
    } else {
        Err(errored(format!("no search hit for session {id}: {out}")))
    }
}
