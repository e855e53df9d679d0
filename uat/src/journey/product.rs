//! The graded journey's calls into the product's own CLI, in the cell's scratch env:
//! logging the topic and the struggle (`studyloop topic`), the wind-down status, the
//! database path (`studyloop config show`), the learner record read back read-only,
//! and the search that must find the session's note. Each call's output goes to
//! `product/<tag>.txt` in the bundle.

use std::path::PathBuf;

use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::lane::LaneFailure;
use studyloop_acceptance::scratch::{Env, Scratch};

use super::db;
use super::record::Journey;
use super::study::CLI_TIMEOUT;
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
/// Runs `studyloop <args>` in the cell's env; its output goes to `product/<tag>.txt`.
pub(super) fn cli(
    env: &Env,
    j: &mut Journey,
    scratch: &Scratch,
    tag: &str,
    args: &[&str],
) -> Result<String, LaneFailure> {
    let studyloop = bins::path("studyloop").map_err(errored)?;
    let mut cmd = scratch.command(&studyloop);
    env.apply(&mut cmd).args(args);
    let done = scratch.run(&mut cmd, CLI_TIMEOUT).map_err(errored)?;
    let (out, err) = (done.stdout_text(), done.stderr_text());
    j.attach(
        format!("product/{tag}.txt"),
        format!(
            "$ studyloop {}\nexit: {}\n--- stdout\n{out}--- stderr\n{err}",
            args.join(" "),
            done.status
        ),
    );
    if done.status.success() {
        Ok(out)
    } else {
        Err(errored(format!(
            "`studyloop {}` exited {}: {}",
            args.join(" "),
            done.status,
            err.trim()
        )))
    }
}

pub(super) fn log_topics(env: &Env, j: &mut Journey, scratch: &Scratch) -> Result<(), LaneFailure> {
    for (concept, status, note) in LOGGED {
        cli(
            env,
            j,
            scratch,
            &format!("topic-{concept}"),
            &["topic", concept, "--status", status, "--note", note],
        )?;
    }
    j.detail(json!({"logged": LOGGED.iter().map(|(c, s, _)| json!({"concept": c, "status": s})).collect::<Vec<_>>()}));
    Ok(())
}

pub(super) fn status(env: &Env, j: &mut Journey, scratch: &Scratch) -> Result<(), LaneFailure> {
    let out = cli(env, j, scratch, "status", &["status", "--json"])?;
    let st: Value = serde_json::from_str(&out)
        .map_err(|e| errored(format!("status --json is not JSON ({e})")))?;
    j.detail(json!({"active": st["active"], "topics_logged": st["topics_logged"], "elapsed_seconds": st["elapsed_seconds"]}));
    if st["active"] == true && st["topics_logged"] == LOGGED.len() {
        Ok(())
    } else {
        Err(errored(format!(
            "status shows active {} with {} topic(s), expected true and {}",
            st["active"],
            st["topics_logged"],
            LOGGED.len()
        )))
    }
}

pub(super) fn database(
    env: &Env,
    j: &mut Journey,
    scratch: &Scratch,
) -> Result<PathBuf, LaneFailure> {
    let out = cli(env, j, scratch, "config-show", &["config", "show"])?;
    out.lines()
        .find_map(|l| l.strip_prefix("database:"))
        .map(|p| PathBuf::from(p.trim()))
        .ok_or_else(|| errored("`studyloop config show` names no database"))
}

pub(super) fn learner_record(
    env: &Env,
    j: &mut Journey,
    scratch: &Scratch,
    started: &Started,
) -> Result<(), LaneFailure> {
    let path = database(env, j, scratch)?;
    let tables = db::read(&path, &started.id).map_err(errored)?;
    for (table, rows) in &tables {
        j.attach(
            format!("db/{table}.json"),
            serde_json::to_vec_pretty(rows).unwrap_or_default(),
        );
    }
    let concepts: Vec<&str> = LOGGED.iter().map(|(c, _, _)| *c).collect();
    let problems = db::problems(&tables, &started.persona_hash, &concepts);
    j.detail(json!({"rows": tables.iter().map(|(t, rows)| (t.to_string(), rows.len())).collect::<std::collections::BTreeMap<_, _>>(), "problems": problems}));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(errored(problems.join("; ")))
    }
}

pub(super) fn search(
    env: &Env,
    j: &mut Journey,
    scratch: &Scratch,
    id: &str,
) -> Result<(), LaneFailure> {
    let out = cli(env, j, scratch, "search", &["search", "closures", "--json"])?;
    let hits: Value = serde_json::from_str(&out)
        .map_err(|e| errored(format!("search --json is not JSON ({e})")))?;
    let found = hits
        .as_array()
        .is_some_and(|a| a.iter().any(|h| h["session_id"] == id));
    j.detail(json!({"hits": hits.as_array().map_or(0, Vec::len), "found_session": found}));
    if found {
        Ok(())
    } else {
        Err(errored(format!("no search hit for session {id}: {out}")))
    }
}
