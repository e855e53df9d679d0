//! `studyloop status`: a summary of the live session read from the state file
//! and the feeds alone. No tmux, no config, no DB: it must stay fast enough
//! for shell prompts and status bars. The render strips terminal controls.

use std::fmt::Write as _;

use serde::Serialize;

use crate::feeds::{self, TopicLine};
use crate::settings::{SessionPaths, SettingsError};
use crate::state::{SessionState, StateError, StateStore};

/// Why status could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// Paths.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// State file.
    #[error(transparent)]
    State(#[from] StateError),
}

/// The status report.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// Whether a session is active (id set, mode not ended).
    pub active: bool,
    /// Seconds studied so far (ended: until the end); `null` when unknown.
    pub elapsed_seconds: Option<i64>,
    /// Lines in the topics feed.
    pub topics_logged: usize,
    /// Parked questions.
    pub parked: usize,
    /// The latest topic lines (newest last, at most 5).
    #[serde(skip)]
    pub recent: Vec<TopicLine>,
    /// The state file as read (`null` when there is none).
    pub state: Option<SessionState>,
}

fn elapsed(s: &SessionState) -> Option<i64> {
    let start: jiff::Timestamp = s.started_at.as_deref()?.parse().ok()?;
    let end = match s.ended_at.as_deref() {
        Some(e) if !s.is_active() => e.parse().ok()?,
        _ => crate::clock::now(),
    };
    let paused = i64::try_from(s.total_paused_seconds.unwrap_or(0)).ok()?;
    Some((end.as_second() - start.as_second() - paused).max(0))
}

/// Read the status of the session in `paths`.
pub fn read(paths: &SessionPaths) -> Result<Status, StatusError> {
    let state = StateStore::new(paths).read()?;
    let active = state.as_ref().is_some_and(SessionState::is_active);
    let (topics, parked) = if active {
        (feeds::read_topics(paths), feeds::read_parked(paths))
    } else {
        (Vec::new(), Vec::new())
    };
    let recent = topics[topics.len().saturating_sub(5)..].to_vec();
    Ok(Status {
        active,
        elapsed_seconds: state.as_ref().and_then(elapsed),
        topics_logged: topics.len(),
        parked: parked.len(),
        recent,
        state,
    })
}

/// `12m` / `1h05m`.
pub fn human_duration(secs: i64) -> String {
    let m = secs / 60;
    if m >= 60 {
        format!("{}h{:02}m", m / 60, m % 60)
    } else {
        format!("{m}m")
    }
}

/// The human-readable report, without control characters (topic names and
/// state values come from the agent and other writers).
pub fn render(st: &Status) -> String {
    crate::term::text(&render_raw(st)).into_owned()
}

fn render_raw(st: &Status) -> String {
    let Some(s) = st.state.as_ref().filter(|_| st.active) else {
        return match st.state.as_ref().and_then(|s| s.topic.as_deref()) {
            Some(t) => format!(
                "No active session. Last session: `{t}` (ended). Resume it with `studyloop study --resume`.\n"
            ),
            None => "No active session.\n".to_owned(),
        };
    };
    let or = |v: Option<&str>| v.unwrap_or("?").to_owned();
    let mut out = format!(
        "Active study session: {}\n  topic:    {}\n  agent:    {}\n  mode:     {}\n  energy:   {}/10\n  elapsed:  {}\n  tmux:     {}\n  topics:   {} logged, {} parked\n",
        or(s.study_session_id.as_deref()),
        or(s.topic.as_deref()),
        or(s.agent.as_deref()),
        or(s.mode.as_deref()),
        s.energy.map_or("?".into(), |e| e.to_string()),
        st.elapsed_seconds.map_or("?".into(), human_duration),
        or(s.mux_session()),
        st.topics_logged,
        st.parked,
    );
    for t in &st.recent {
        let _ = writeln!(out, "    [{}] {} ({})", t.time, t.name, t.status.as_str());
    }
    out
}
