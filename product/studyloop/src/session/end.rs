//! Ending a session (reference §3.3). Every door (`study --end`, the agent
//! exiting, and later the web and MCP) reaches [`end_session_common`]:
//! notes from the feeds, the DB row closed with duration and counts, progress
//! rows, mode `ended`, adapter teardown, feeds removed, every `study-*` tmux
//! session killed (the session's own last). The state file is kept.
//!
//! Closing the DB row is the idempotency guard: only the ender that flips the
//! row from `active` writes progress, so two racing ends never double-count.

use std::path::Path;

use super::{Loaded, SessionError, load};
use crate::adapters::{self, Harness};
use crate::context::{Ctx, now_rfc3339, seconds_since};
use crate::feeds;
use crate::fsutil;
use crate::state::{MODE_ENDED, SessionState, StateStore};
use crate::store::{EndRecord, Store};
use crate::tmux::Tmux;

/// What an end did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The study id.
    pub study_id: String,
    /// The topic.
    pub topic: String,
    /// Minutes studied; `None` when the start time is unknown.
    pub duration_minutes: Option<i64>,
    /// Win count.
    pub win_count: i64,
    /// Struggle count.
    pub struggle_count: i64,
    /// The notes written to the DB.
    pub notes: String,
    /// tmux sessions killed.
    pub killed: Vec<String>,
    /// Non-fatal problems (teardown, kills).
    pub warnings: Vec<String>,
}

/// Result of an end request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndOutcome {
    /// There was no active session (or not the one asked for).
    NothingActive,
    /// The session was ended.
    Ended(Ended),
}

/// `studyloop study --end`: end whatever session is active.
pub fn end(ctx: &Ctx) -> Result<EndOutcome, SessionError> {
    end_matching(ctx, None)
}

/// The pane hook: end the session only if `study_id` is still the active one
/// (a resumed session reuses the tmux name; the old pane must not end it).
pub fn end_if_current(ctx: &Ctx, study_id: &str) -> Result<EndOutcome, SessionError> {
    end_matching(ctx, Some(study_id))
}

fn end_matching(ctx: &Ctx, study_id: Option<&str>) -> Result<EndOutcome, SessionError> {
    // Cheap check first: ending nothing must not need a config or a DB.
    let session = crate::settings::session_paths(&ctx.env)?;
    let snapshot = StateStore::new(&session).read()?;
    let Some(snapshot) = snapshot.filter(|s| {
        s.is_active() && study_id.is_none_or(|id| s.study_session_id.as_deref() == Some(id))
    }) else {
        return Ok(EndOutcome::NothingActive);
    };
    let loaded = load(ctx)?;
    end_session_common(ctx, &loaded, &snapshot).map(EndOutcome::Ended)
}

fn duration_minutes(s: &SessionState) -> Option<i64> {
    let elapsed = s.started_at.as_deref().and_then(seconds_since)?;
    let paused = i64::try_from(s.total_paused_seconds.unwrap_or(0)).unwrap_or(0);
    Some(((elapsed - paused) / 60).max(0))
}

/// Close the session described by `snapshot`.
pub fn end_session_common(
    ctx: &Ctx,
    loaded: &Loaded,
    snapshot: &SessionState,
) -> Result<Ended, SessionError> {
    let paths = &loaded.paths;
    let study_id = snapshot.study_session_id.clone().unwrap_or_default();
    let topic = snapshot.topic.clone().unwrap_or_default();
    let now = now_rfc3339();
    let summary = feeds::summarize(
        &feeds::read_topics(&paths.session),
        &feeds::read_parked(&paths.session),
    );
    let duration = duration_minutes(snapshot);

    let mut db = Store::open(&paths.db)?;
    let closed = db.end_study_session(&EndRecord {
        id: &study_id,
        ended_at: &now,
        duration_minutes: duration,
        notes: &summary.notes,
        win_count: summary.win_count,
        struggle_count: summary.struggle_count,
    })?;
    if closed {
        let progress_topic = topic.trim().to_lowercase();
        for t in &summary.latest {
            if let Some(conf) = t.status.confidence() {
                db.record_progress(&progress_topic, &t.name, conf, &t.note, &study_id, &now)?;
            }
        }
        let mut log: Vec<(&str, String)> = summary
            .latest
            .iter()
            .map(|t| {
                (
                    "note",
                    format!("{} — {}: {} {}", topic, t.status.as_str(), t.name, t.note)
                        .trim_end()
                        .to_owned(),
                )
            })
            .collect();
        log.extend(
            summary
                .parked
                .iter()
                .map(|q| ("note", format!("{topic} — parked: {q}"))),
        );
        if !log.is_empty() {
            db.index_study_log(
                &study_id,
                snapshot.session_dir.as_deref().unwrap_or_default(),
                &now,
                &log,
            )?;
        }
    }

    let store = StateStore::new(&paths.session);
    store.update(|s| {
        if let Some(s) = s
            .as_mut()
            .filter(|s| s.study_session_id.as_deref() == Some(study_id.as_str()))
        {
            s.mode = Some(MODE_ENDED.into());
            s.ended_at = Some(now.clone());
            s.pid = None;
        }
    })?;

    let mut warnings = Vec::new();
    if let (Some(h), Some(pf)) = (
        snapshot
            .agent
            .as_deref()
            .and_then(|a| Harness::parse(a).ok()),
        snapshot.persona_file.as_deref(),
    ) && let Err(e) = adapters::teardown(h, &ctx.env, &paths.home, Path::new(pf))
    {
        warnings.push(format!("adapter teardown: {e}"));
    }
    if let Some(pid) = snapshot
        .web_pid
        .filter(|p| crate::procs::cmdline(*p).is_some_and(|c| c.contains("studyloop")))
    {
        crate::procs::terminate(pid);
    }
    let mut files = vec![
        paths.session.oneline(),
        paths.session.topics(),
        paths.session.parking(),
    ];
    files.extend(snapshot.persona_file.as_deref().map(Into::into));
    for f in files {
        if let Err(e) = fsutil::remove_if_exists(&f) {
            warnings.push(format!("cannot remove {}: {e}", f.display()));
        }
    }

    // Last: killing our own session may kill this very process (end-on-exit).
    let killed = match Tmux::new(&ctx.env) {
        Ok(tmux) => kill_study_sessions(&tmux, snapshot.mux_session(), &mut warnings),
        Err(e) => {
            warnings.push(format!("cannot kill tmux sessions: {e}"));
            Vec::new()
        }
    };
    Ok(Ended {
        study_id,
        topic,
        duration_minutes: duration,
        win_count: summary.win_count,
        struggle_count: summary.struggle_count,
        notes: summary.notes,
        killed,
        warnings,
    })
}

fn kill_study_sessions(tmux: &Tmux, own: Option<&str>, warnings: &mut Vec<String>) -> Vec<String> {
    let mut names: Vec<String> = match tmux.list_sessions() {
        Ok(n) => n.into_iter().filter(|n| n.starts_with("study-")).collect(),
        Err(e) => {
            warnings.push(format!("cannot list tmux sessions: {e}"));
            Vec::new()
        }
    };
    names.sort_by_key(|n| Some(n.as_str()) == own);
    for n in &names {
        if let Err(e) = tmux.kill_session(n) {
            warnings.push(format!("cannot kill tmux session {n}: {e}"));
        }
    }
    names
}
