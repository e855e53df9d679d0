//! `studyloop study --resume` (reference §3.4): reattach when the agent is
//! still running; otherwise rebuild the session in the same tmux name and
//! directory with the harness's resume arguments and a new study id, carrying
//! the previous session's notes into the persona.

use std::path::PathBuf;

use super::journal::OpLock;
use super::start::{ResumeOf, start_locked};
use super::{Energy, SessionError, StartRequest, Started, load};
use crate::adapters::Harness;
use crate::context::Ctx;
use crate::persona::Mode;
use crate::state::StateStore;
use crate::store::Store;
use crate::tmux::Tmux;

/// What a resume did.
#[derive(Debug, Clone)]
pub enum ResumeOutcome {
    /// The agent is still running in this session; nothing was rebuilt.
    StillRunning {
        /// tmux session name.
        name: String,
        /// The tmux client (to attach).
        tmux: Tmux,
    },
    /// The session was rebuilt.
    Restarted(Box<Started>),
}

/// Resume the session recorded in the state file.
pub fn resume(ctx: &Ctx, scrub_env: bool) -> Result<ResumeOutcome, SessionError> {
    let loaded = load(ctx)?;
    let lock = OpLock::acquire(&loaded.paths.session)?;
    super::journal::repair_locked(ctx, &loaded.paths.session, &lock)?;
    let store = StateStore::new(&loaded.paths.session);
    let state = store.read()?.ok_or(SessionError::NoSessionToResume)?;
    let name = state
        .mux_session()
        .map(str::to_owned)
        .ok_or(SessionError::NoSessionToResume)?;
    let tmux = Tmux::new(&ctx.env)?;
    if tmux.has_session(&name)? {
        let agent_alive = state
            .mux_main_pane()
            .map(|pane| tmux.pane_pid(pane))
            .transpose()?
            .flatten()
            .is_some_and(|pid| !crate::procs::children(pid).is_empty());
        if agent_alive && state.is_active() {
            return Ok(ResumeOutcome::StillRunning { name, tmux });
        }
        tmux.kill_session(&name)?;
    }
    let dir = PathBuf::from(state.session_dir.clone().unwrap_or_default());
    if state.session_dir.is_none() || !dir.is_dir() {
        return Err(SessionError::SessionGone { name, dir });
    }
    // A session that died without ending is ended first, so its notes and
    // progress are recorded before the rebuild clears the feeds.
    if state.is_active() {
        super::end::end_locked(ctx, &loaded, &state, &lock)?;
    }
    let previous_notes = match state.study_session_id.as_deref() {
        Some(id) => Store::open(&loaded.paths.db)?
            .study_session(id)?
            .and_then(|r| r.notes),
        None => None,
    };
    let mode = state
        .mode
        .as_deref()
        .and_then(Mode::parse)
        .unwrap_or(Mode::Study);
    let req = StartRequest {
        topic: state.topic.clone().unwrap_or_default(),
        agent: match state.agent.as_deref() {
            Some(a) => Some(Harness::parse(a)?),
            None => None,
        },
        energy: Energy::from_stored(state.energy),
        mode,
        scrub_env: scrub_env || state.scrub_env.unwrap_or(false),
    };
    let started = start_locked(
        ctx,
        &loaded,
        &req,
        Some(ResumeOf {
            name,
            dir,
            previous_notes,
        }),
        &lock,
    )?;
    Ok(ResumeOutcome::Restarted(Box::new(started)))
}
