//! Hands a `practice_check` block to the running study session through its
//! own transport, and says what happened: `Mentor told.` or
//! `Mentor not told: <reason>` — delivery failure is always shown, never
//! silent. The tmux/CLI path pastes the block into the agent's pane; the web
//! path (PTY or ACP) is not wired yet and says so.

use crate::env::Env;
use crate::{settings, state, tmux};

/// Why the mentor was not told (the word after `Mentor not told: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotTold {
    /// No live session.
    NoActiveSession,
    /// The session runs in the web console; that transport is not wired yet.
    WebSessionNotWired,
    /// The recorded tmux session or pane is gone.
    SessionNotRunning,
    /// The state or tmux could not be read or driven.
    Failed(String),
}

impl std::fmt::Display for NotTold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoActiveSession => f.write_str("no_active_session"),
            Self::WebSessionNotWired => f.write_str("web_session_not_wired (the web console's transport does not take drill results yet)"),
            Self::SessionNotRunning => f.write_str("session_not_running"),
            Self::Failed(why) => write!(f, "delivery_failed ({why})"),
        }
    }
}

/// Delivers `block` to the live session of `env`.
pub(crate) fn deliver(env: &Env, block: &str) -> Result<(), NotTold> {
    let fail = |e: &dyn std::fmt::Display| NotTold::Failed(e.to_string());
    let paths = settings::session_paths(env).map_err(|e| fail(&e))?;
    let st = state::StateStore::new(&paths)
        .read()
        .map_err(|e| fail(&e))?;
    let Some(st) = st.filter(state::SessionState::is_active) else {
        return Err(NotTold::NoActiveSession);
    };
    if st.is_web() {
        return Err(NotTold::WebSessionNotWired);
    }
    let (Some(name), Some(pane)) = (st.mux_session(), st.mux_main_pane()) else {
        return Err(NotTold::SessionNotRunning);
    };
    let tmux = tmux::Tmux::new(env).map_err(|e| fail(&e))?;
    if !tmux.has_session(name).map_err(|e| fail(&e))? {
        return Err(NotTold::SessionNotRunning);
    }
    tmux.paste(pane, block).map_err(|e| fail(&e))
}
