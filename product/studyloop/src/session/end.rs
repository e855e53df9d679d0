//! Ending a session (reference §3.3). Every door (`study --end`, the agent
//! exiting, the web server) reaches [`end_session_common`], a journaled run of
//! idempotent steps (see [`super::journal`]):
//!
//! 1. `end:db`: the DB row closed with duration and counts, the progress rows
//!    and the search log, in ONE transaction (from the feeds, still on disk).
//! 2. `end:stop`: the recorded tmux session killed (only that one; the ender's
//!    own session comes last instead), a recorded web process signalled only
//!    if its pid + start time still match, and every process carrying the
//!    session's marker variable (children that left the process group with
//!    `setsid`/`nohup`) stopped.
//! 3. `end:teardown`: the adapter's files outside the session dir.
//! 4. `end:files`: the feeds and the persona, the latter only inside the
//!    session dir, never through a symlink.
//! 5. `end:state`: mode `ended` (the state file is kept).
//! 6. `end:tmux`: the recorded tmux session killed (again, or first when the
//!    ender runs inside it: killing it may kill this very process).
//!
//! So the state says `ended` only once nothing of the session runs, and a kill
//! at any instant leaves a journal the next command finishes. Closing the DB
//! row is the idempotency guard: only the ender that flips the row from
//! `active` writes progress, so two ends never double-count.

use std::path::Path;
use std::time::Duration;

use super::journal::{Journal, KillAt, Op, OpLock};
use super::{Loaded, SessionError};
use crate::adapters::{self, Harness};
use crate::context::{Ctx, now_rfc3339, seconds_since};
use crate::env;
use crate::feeds;
use crate::fsutil;
use crate::settings::SessionPaths;
use crate::state::{MODE_ENDED, SessionState, StateStore};
use crate::store::{EndRecord, Progress, Store};
use crate::tmux::Tmux;

/// How long marked processes get between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(1500);

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
    /// tmux sessions killed (at most the recorded one).
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
    let lock = OpLock::acquire(&session)?;
    super::journal::repair_locked(ctx, &session, &lock)?;
    let snapshot = StateStore::new(&session).read()?;
    let Some(snapshot) = snapshot.filter(|s| {
        s.is_active() && study_id.is_none_or(|id| s.study_session_id.as_deref() == Some(id))
    }) else {
        return Ok(EndOutcome::NothingActive);
    };
    let loaded = super::load(ctx)?;
    end_locked(ctx, &loaded, &snapshot, &lock).map(EndOutcome::Ended)
}

/// Close the session described by `snapshot` (waits for any start or end in
/// progress, and repairs an interrupted one first).
pub fn end_session_common(
    ctx: &Ctx,
    loaded: &Loaded,
    snapshot: &SessionState,
) -> Result<Ended, SessionError> {
    let lock = OpLock::acquire(&loaded.paths.session)?;
    super::journal::repair_locked(ctx, &loaded.paths.session, &lock)?;
    end_locked(ctx, loaded, snapshot, &lock)
}

fn duration_minutes(s: &SessionState) -> Option<i64> {
    let elapsed = s.started_at.as_deref().and_then(seconds_since)?;
    let paused = i64::try_from(s.total_paused_seconds.unwrap_or(0)).unwrap_or(0);
    Some(((elapsed - paused) / 60).max(0))
}

/// [`end_session_common`] under a held op lock.
pub(super) fn end_locked(
    ctx: &Ctx,
    loaded: &Loaded,
    snapshot: &SessionState,
    _lock: &OpLock,
) -> Result<Ended, SessionError> {
    let kill = KillAt::from_env(&ctx.env)?;
    let study_id = snapshot.study_session_id.clone().unwrap_or_default();
    // Pre-flight, nothing written yet: a tmux session can only be stopped
    // with tmux; ending the state without it would orphan the harness.
    if let Some(name) = snapshot.mux_session() {
        Tmux::new(&ctx.env).map_err(|source| SessionError::EndNeedsTmux {
            name: name.to_owned(),
            source,
        })?;
    }
    let paths = &loaded.paths;
    let mut j = Journal::new(Op::End, &study_id, &paths.db, &paths.home);
    j.tmux_session = snapshot.mux_session().map(str::to_owned);
    j.session_dir = snapshot.session_dir.as_deref().map(Into::into);
    j.snapshot = Some(snapshot.clone());
    j.inside = ctx.env.get_os(env::STUDYLOOP_SESSION_MARK) == Some(std::ffi::OsStr::new(&study_id));
    j.write(&paths.session)?;
    kill.point("end:intent");
    run_steps(ctx, &paths.session, &mut j, kill)
}

/// Run every step of `j` not yet done, then drop the journal. Used by the end
/// itself and by the repair of an interrupted one.
pub(super) fn run_steps(
    ctx: &Ctx,
    session: &SessionPaths,
    j: &mut Journal,
    kill: KillAt,
) -> Result<Ended, SessionError> {
    let snapshot = j.snapshot.clone().unwrap_or_default();
    let study_id = j.study_session_id.clone();
    let topic = snapshot.topic.clone().unwrap_or_default();
    let duration = duration_minutes(&snapshot);
    let mut warnings = Vec::new();
    let mut killed = Vec::new();
    let tmux = match &j.tmux_session {
        Some(name) => Some(
            Tmux::new(&ctx.env).map_err(|source| SessionError::EndNeedsTmux {
                name: name.clone(),
                source,
            })?,
        ),
        None => None,
    };
    let own = j.tmux_session.clone();
    // 1. The DB, from the feeds (removed only in step 4, after the commit).
    let summary = feeds::summarize(&feeds::read_topics(session), &feeds::read_parked(session));
    if !j.did("end:db") {
        let embedder = write_embedder(ctx, &mut warnings);
        close_row(j, &snapshot, &summary, duration, embedder, &mut warnings)?;
        j.step(session, kill, "end:db")?;
    }
    // 2. Stop what runs.
    if !j.did("end:stop") {
        if let (Some(t), false) = (&tmux, j.inside) {
            kill_named(t, own.as_deref(), &study_id, &mut warnings, &mut killed);
        }
        if let Some(pid) = snapshot.web_pid {
            let signalled = snapshot.web_process().is_some_and(|p| p.terminate());
            if !signalled && crate::procs::alive(pid) {
                warnings.push(format!(
                    "did not signal web process {pid}: it is not the process recorded at launch (pid and start time)"
                ));
            }
        }
        crate::procs::stop_marked(
            env::STUDYLOOP_SESSION_MARK,
            &study_id,
            &crate::procs::self_and_ancestors(),
            STOP_GRACE,
        );
        j.step(session, kill, "end:stop")?;
    }
    // 3. The adapter's own files.
    if !j.did("end:teardown") {
        if let (Some(h), Some(pf)) = (
            snapshot
                .agent
                .as_deref()
                .and_then(|a| Harness::parse(a).ok()),
            snapshot.persona_file.as_deref(),
        ) && let Err(e) = adapters::teardown(h, &ctx.env, &j.home, Path::new(pf))
        {
            warnings.push(format!("adapter teardown: {e}"));
        }
        j.step(session, kill, "end:teardown")?;
    }
    // 4. Files: the feeds, and the persona only inside the session dir.
    if !j.did("end:files") {
        for f in [session.oneline(), session.topics(), session.parking()] {
            if let Err(e) = fsutil::remove_if_exists(&f) {
                warnings.push(format!("cannot remove {}: {e}", f.display()));
            }
        }
        if let (Some(pf), Some(dir)) = (snapshot.persona_file.as_deref(), &j.session_dir) {
            match super::dir::remove_inside(&session.sessions_root(), dir, Path::new(pf)) {
                Ok(true) => {}
                Ok(false) => warnings.push(format!(
                    "left {pf} alone: it is not inside the session directory {}",
                    dir.display()
                )),
                Err(e) => warnings.push(format!("cannot remove {pf}: {e}")),
            }
        }
        j.step(session, kill, "end:files")?;
    }
    // 5. The state.
    if !j.did("end:state") {
        let now = now_rfc3339();
        StateStore::new(session).update(|s| {
            if let Some(s) = s
                .as_mut()
                .filter(|s| s.study_session_id.as_deref() == Some(study_id.as_str()))
            {
                s.mode = Some(MODE_ENDED.into());
                s.ended_at = Some(now.clone());
                s.pid = None;
                s.pid_start = None;
            }
        })?;
        j.step(session, kill, "end:state")?;
    }
    // 6. Last: killing our own session may kill this very process (end-on-exit).
    if let Some(t) = &tmux {
        kill_named(t, own.as_deref(), &study_id, &mut warnings, &mut killed);
    }
    kill.point("end:tmux");
    Journal::finish(session)?;
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

/// Kill exactly the recorded tmux session, and only while it carries this
/// study's mark (`@studyloop_id`, set at creation): the state names a session
/// by name only, and a session of the user's bearing that name (ours gone,
/// theirs made since, or a hand-edited state) is theirs, as in the rollback
/// ([`Tmux::kill_marked_session`]). A live session left alone is a warning.
fn kill_named(
    tmux: &Tmux,
    name: Option<&str>,
    study_id: &str,
    warnings: &mut Vec<String>,
    killed: &mut Vec<String>,
) {
    let Some(name) = name else {
        return;
    };
    let result = tmux.has_session(name).and_then(|live| {
        if !live {
            return Ok(());
        }
        if tmux.kill_marked_session(name, study_id)? {
            killed.push(name.to_owned());
        } else {
            warnings.push(format!(
                "left tmux session {name} running: it does not carry this study's mark (@studyloop_id {study_id}), so it is not the session this study started; stop it yourself if it is: tmux kill-session -t ={name}"
            ));
        }
        Ok(())
    });
    if let Err(e) = result {
        warnings.push(format!("cannot kill tmux session {name}: {e}"));
    }
}

/// The embedding model for the search log, when `STUDYLOOP_EMBED_MODEL` names
/// a usable one; a set but unusable one is a warning (the end goes on, the log
/// is found lexically and backfilled by a later end with the model).
fn write_embedder(
    ctx: &Ctx,
    warnings: &mut Vec<String>,
) -> Option<std::sync::Arc<crate::embed::Embedder>> {
    match crate::embed::Availability::from_env(&ctx.env) {
        Ok(crate::embed::Availability::Ready(e)) => Some(e),
        Ok(crate::embed::Availability::Lexical(why)) => {
            if ctx.env.get_os(env::STUDYLOOP_EMBED_MODEL).is_some() {
                warnings.push(format!("search log not embedded: {why}"));
            }
            None
        }
        Err(e) => {
            warnings.push(format!("search log not embedded: {e}"));
            None
        }
    }
}

/// Step 1: close the row, progress and search log in one transaction (with
/// its embeddings when a model is given; older rows are backfilled after).
fn close_row(
    j: &Journal,
    snapshot: &SessionState,
    summary: &feeds::Summary,
    duration: Option<i64>,
    embedder: Option<std::sync::Arc<crate::embed::Embedder>>,
    warnings: &mut Vec<String>,
) -> Result<bool, SessionError> {
    let study_id = j.study_session_id.as_str();
    let topic = snapshot.topic.clone().unwrap_or_default();
    let now = now_rfc3339();
    let progress_topic = topic.trim().to_lowercase();
    let progress: Vec<Progress<'_>> = summary
        .latest
        .iter()
        .filter_map(|t| {
            Some(Progress {
                topic: &progress_topic,
                concept: &t.name,
                confidence: t.status.confidence()?,
                note: &t.note,
            })
        })
        .collect();
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
    // The spec dir, bounded and never failing (session::spec); serialising
    // plain strings and numbers cannot fail, but if it did the end goes on.
    let specs = j
        .session_dir
        .as_deref()
        .map(super::spec::capture)
        .and_then(|c| {
            serde_json::to_string(&c)
                .inspect_err(|e| warnings.push(format!("spec captures not recorded: {e}")))
                .ok()
        });
    let mut db = Store::open(&j.db)?.with_embedder(embedder.clone());
    let closed = db.close_study_session(
        &EndRecord {
            id: study_id,
            ended_at: &now,
            duration_minutes: duration,
            notes: &summary.notes,
            win_count: summary.win_count,
            struggle_count: summary.struggle_count,
            spec_captures: specs.as_deref(),
        },
        &progress,
        snapshot.session_dir.as_deref().unwrap_or_default(),
        &log,
    )?;
    // Best effort: the session is closed; a failed backfill is retried by the
    // next end and only costs the older lines their semantic rank meanwhile.
    if let Some(e) = &embedder
        && let Err(err) = db.backfill_vectors(e)
    {
        warnings.push(format!("older search lines not embedded: {err}"));
    }
    Ok(closed)
}
