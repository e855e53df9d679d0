//! The atomic claim: one flock holds the read, the decision and the write of
//! the reservation, so two starts can never both win. A live claim blocks; a
//! stale one (its owner and its tmux session are gone) is reclaimed with a
//! warning; an ended one is simply replaced.

use crate::procs;
use crate::state::{MODE_STARTING, SessionState, StateError, StateStore};
use crate::tmux::{Tmux, TmuxError};

/// What the existing state means for a new start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    /// No state, or a session that ended: free to start.
    Free,
    /// An active session whose owner is gone: reclaim it (with this reason).
    Stale(String),
    /// An active session that is still alive (this is why).
    Live(String),
}

/// Why a claim failed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Another session is live.
    #[error(
        "A session is already active ({what}; {why}). Attach to it with `studyloop study --resume`, or end it with `studyloop study --end`."
    )]
    Blocked {
        /// Which session.
        what: String,
        /// Why it counts as live.
        why: String,
    },
    /// The state file failed.
    #[error(transparent)]
    State(#[from] StateError),
    /// tmux failed while checking liveness.
    #[error(transparent)]
    Tmux(#[from] TmuxError),
    /// The start's journal could not record the claim (nothing was claimed).
    #[error("cannot record the claim in the session journal: {0}")]
    Journal(String),
}

/// A won claim.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The state before the claim (restored by a rollback).
    pub previous: Option<SessionState>,
    /// Set when a stale claim was reclaimed.
    pub warning: Option<String>,
}

/// Decide whether `state` blocks a new start by process `self_pid`.
pub fn assess(
    state: Option<&SessionState>,
    self_pid: i32,
    tmux: &Tmux,
) -> Result<Liveness, TmuxError> {
    let Some(s) = state.filter(|s| s.is_active()) else {
        return Ok(Liveness::Free);
    };
    // With a recorded start time the owner must be that very process (a pid
    // reused by another program is not the owner); older states have none.
    let pid_live = s.pid.filter(|p| {
        *p != self_pid
            && match s.pid_start {
                Some(start) => procs::Identity {
                    pid: *p,
                    start_time: start,
                }
                .is_running(),
                None => procs::alive(*p),
            }
    });
    if let Some(p) = pid_live {
        return Ok(Liveness::Live(format!("its process {p} is running")));
    }
    if s.is_web() {
        return Ok(match s.pid {
            None => Liveness::Live("it is a web session with no recorded process".into()),
            Some(p) => Liveness::Stale(format!("web process {p} is gone")),
        });
    }
    if let Some(name) = s.mux_session() {
        if tmux.has_session(name)? {
            return Ok(Liveness::Live(format!("tmux session {name} exists")));
        }
        return Ok(Liveness::Stale(format!("tmux session {name} is gone")));
    }
    Ok(Liveness::Stale(match s.pid {
        Some(p) => format!("process {p} is gone and no tmux session was recorded"),
        None => "no owner process or tmux session was recorded".into(),
    }))
}

fn describe(s: &SessionState) -> String {
    let topic = s.topic.as_deref().unwrap_or("?");
    match s.mux_session() {
        Some(name) => format!("topic `{topic}`, tmux session {name}"),
        None => format!(
            "topic `{topic}`, {}",
            s.transport
                .as_deref()
                .map_or("starting".into(), |t| format!("web {t}"))
        ),
    }
}

/// Take the single-session claim: under the state lock, refuse a live claim,
/// reclaim a stale one (clearing the feeds), and write a reservation that
/// replaces the previous state.
pub fn claim(
    store: &StateStore,
    tmux: &Tmux,
    topic: &str,
    self_pid: i32,
    now: &str,
) -> Result<Claim, ClaimError> {
    let pending = format!("pending-{}", crate::ids::random_hex(6));
    claim_with(store, tmux, topic, self_pid, now, &pending, |_| Ok(()))
}

/// [`claim`] with the reservation id `pending` and a hook that runs under the
/// state lock after the decision and before the state is written: a
/// journaled start records there what the claim replaces.
pub(crate) fn claim_with(
    store: &StateStore,
    tmux: &Tmux,
    topic: &str,
    self_pid: i32,
    now: &str,
    pending: &str,
    before_write: impl FnOnce(&Option<SessionState>) -> Result<(), ClaimError>,
) -> Result<Claim, ClaimError> {
    store.update(|current| {
        let previous = current.clone();
        let warning = match assess(previous.as_ref(), self_pid, tmux)? {
            Liveness::Live(why) => {
                let what = previous.as_ref().map(describe).unwrap_or_default();
                return Err(ClaimError::Blocked { what, why });
            }
            Liveness::Stale(why) => Some(format!(
                "reclaiming stale session {} ({why})",
                previous
                    .as_ref()
                    .and_then(|s| s.study_session_id.as_deref())
                    .unwrap_or("?")
            )),
            Liveness::Free => None,
        };
        before_write(&previous)?;
        // A new session starts with empty feeds; stale ones would be
        // attributed to it at the end otherwise.
        let paths = store.paths();
        for f in [paths.topics(), paths.parking(), paths.oneline()] {
            let _ = crate::fsutil::remove_if_exists(&f);
        }
        *current = Some(SessionState {
            study_session_id: Some(pending.to_owned()),
            mode: Some(MODE_STARTING.into()),
            pid: Some(self_pid),
            pid_start: procs::start_time(self_pid),
            topic: Some(topic.to_owned()),
            started_at: Some(now.to_owned()),
            ..SessionState::default()
        });
        Ok(Claim { previous, warning })
    })?
}
