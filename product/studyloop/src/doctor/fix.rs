//! `studyloop doctor --fix`: the one recovery command every damaged-state
//! message names. Under the op lock it finishes or rolls back an interrupted
//! start or end, then, when `session-state.json` cannot be parsed, rebuilds
//! it from the history DB (rows still `active`) and tmux (which of their
//! sessions still run); an absent state while such a session runs is rebuilt
//! too. The rebuild is journaled (`fix:intent` → `fix:aside` → `fix:state`)
//! and never leaves the state absent: the damaged file is kept aside as a
//! hard link and replaced atomically. Damaged files are kept, never deleted, and
//! no row's notes are touched: a rebuilt session is ended later through the
//! normal end path, which records its feeds.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::context::{Ctx, now_rfc3339};
use crate::session::{Journal, KillAt, Op, OpLock, PERSONA_FILE, SessionError};
use crate::settings::{Paths, SessionPaths};
use crate::state::{SessionState, StateError, StateStore};
use crate::store::{Store, StudySessionRow};
use crate::tmux::Tmux;

/// Why the repair could not complete.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// Paths, config, journal or state.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The history DB.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// tmux is needed to tell live sessions from dead ones.
    #[error("{0}; `doctor --fix` needs tmux to see which sessions still run")]
    Tmux(#[from] crate::tmux::TmuxError),
    /// Renaming a damaged file aside failed.
    #[error("cannot keep the damaged file {path} aside: {source}")]
    Aside {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What `doctor --fix` did.
#[derive(Debug, Clone, Serialize)]
pub struct Fixed {
    /// Each action, in order, one line each.
    pub actions: Vec<String>,
    /// The state file after the repair (`null` when there is none).
    pub state: Option<SessionState>,
}

impl Fixed {
    /// The human-readable report.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for a in &self.actions {
            out.push_str("fixed: ");
            out.push_str(a);
            out.push('\n');
        }
        if self.actions.is_empty() {
            out.push_str("nothing to fix: the session state and journal are intact\n");
        }
        out
    }
}

/// `<name>.corrupt-<UTC stamp>` beside `path`.
fn aside_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(
        ".corrupt-{}",
        now_rfc3339().replace([':', '-'], "")
    ));
    path.with_file_name(name)
}

/// Rename `path` to its [`aside_name`] (the damaged journal: once it is
/// aside there is no journal, which is whole).
fn keep_aside(path: &Path) -> Result<PathBuf, FixError> {
    let aside = aside_name(path);
    std::fs::rename(path, &aside).map_err(|source| FixError::Aside {
        path: path.to_owned(),
        source,
    })?;
    Ok(aside)
}

/// Keep the damaged state as a second name of the same file: the damaged
/// file stays in place until the rebuilt one replaces it, so no instant of
/// the repair leaves the state absent. A name made by an interrupted
/// earlier fix is fine.
fn link_aside(path: &Path, aside: &Path) -> Result<(), FixError> {
    match std::fs::hard_link(path, aside) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(FixError::Aside {
            path: path.to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}

fn io_session(e: impl Into<SessionError>) -> FixError {
    FixError::Session(e.into())
}

/// Run the repair.
pub fn fix(ctx: &Ctx) -> Result<Fixed, FixError> {
    let config_file = crate::settings::config_file(&ctx.env).map_err(io_session)?;
    let config = crate::config::load(&config_file).map_err(io_session)?;
    let paths = Paths::resolve(&ctx.env, &config.config).map_err(io_session)?;
    let session = &paths.session;
    let kill = KillAt::from_env(&ctx.env).map_err(io_session)?;
    let lock = OpLock::acquire(session)?;
    let mut actions = Vec::new();
    match crate::session::repair_locked(ctx, session, &lock) {
        Ok(Some(what)) => actions.push(what),
        Ok(None) => {}
        Err(SessionError::JournalCorrupt { path, .. }) => {
            let aside = keep_aside(&path)?;
            actions.push(format!("kept the damaged journal as {}", aside.display()));
        }
        Err(e) => return Err(e.into()),
    }
    let store = StateStore::new(session);
    let damaged = match store.read() {
        Ok(Some(state)) => {
            return Ok(Fixed {
                actions,
                state: Some(state),
            });
        }
        Ok(None) => None,
        Err(StateError::Corrupt { path, .. }) => Some(path),
        Err(e) => return Err(io_session(e)),
    };
    let tmux = Tmux::new(&ctx.env)?;
    let rows = match Store::open_read_only(&paths.db)? {
        Some(db) => db.active_study_sessions()?,
        None => Vec::new(),
    };
    let row = match &damaged {
        // No state at all is only damage when a session still runs.
        None => match crate::session::live_orphan(&paths.db, session, &tmux)? {
            Some(row) => row,
            None => {
                return Ok(Fixed {
                    actions,
                    state: None,
                });
            }
        },
        Some(_) => match choose(&rows, &tmux)? {
            Some(row) => row.clone(),
            None => {
                // Nothing runs: the state starts empty (a killed rename
                // leaves the damaged file or none, both whole).
                let aside = keep_aside(&session.state_file())?;
                actions.push(format!("kept the damaged state as {}", aside.display()));
                actions.push("no active session in the history DB: the state starts empty".into());
                return Ok(Fixed {
                    actions,
                    state: None,
                });
            }
        },
    };
    let state = rebuild(&row, session, &tmux)?;
    // Journaled like start and end: each step leaves a whole state (the
    // damaged one, then the rebuilt one), and the record names the aside
    // copy, so a kill at any step loses nothing and the next fix finishes.
    let mut j = Journal::new(Op::Fix, &row.id, &paths.db, &paths.home);
    j.aside = damaged.as_deref().map(aside_name);
    j.write(session)?;
    kill.point("fix:intent");
    if let (Some(path), Some(aside)) = (&damaged, &j.aside) {
        link_aside(path, aside)?;
        actions.push(format!("kept the damaged state as {}", aside.display()));
    }
    j.step(session, kill, "fix:aside")?;
    store.replace(Some(&state)).map_err(io_session)?;
    j.step(session, kill, "fix:state")?;
    Journal::finish(session)?;
    actions.push(format!(
        "rebuilt the state of session {} (topic `{}`, tmux session {}) from the history DB and tmux",
        row.id,
        row.topic,
        row.tmux_session.as_deref().unwrap_or("?")
    ));
    for other in rows.iter().filter(|r| r.id != row.id) {
        actions.push(format!(
            "session {} (tmux {}) is also `active` in the history DB; it is not the current one: end it with `tmux kill-session -t {}` if it runs, or leave it",
            other.id,
            other.tmux_session.as_deref().unwrap_or("?"),
            other.tmux_session.as_deref().unwrap_or("?"),
        ));
    }
    Ok(Fixed {
        actions,
        state: Some(state),
    })
}

/// The row a damaged state is rebuilt from: the first live one, else the
/// newest active one (the next start finds it stale and ends it through the
/// end path, recording what its feeds hold).
fn choose<'r>(
    rows: &'r [StudySessionRow],
    tmux: &Tmux,
) -> Result<Option<&'r StudySessionRow>, FixError> {
    for r in rows {
        if let Some(n) = r.tmux_session.as_deref()
            && tmux.has_session(n)?
        {
            return Ok(Some(r));
        }
    }
    Ok(rows.first())
}

/// The state of the session `row` describes, with the panes tmux reports.
fn rebuild(
    row: &StudySessionRow,
    session: &SessionPaths,
    tmux: &Tmux,
) -> Result<SessionState, FixError> {
    let name = row.tmux_session.clone();
    let panes = match &name {
        Some(n) => tmux.panes(n)?,
        None => Vec::new(),
    };
    let dir = name
        .as_deref()
        .map(|n| session.sessions_root().join(n))
        .filter(|d| d.is_dir());
    let persona = dir
        .as_ref()
        .map(|d| d.join(PERSONA_FILE))
        .filter(|p| p.is_file());
    let energy = row.energy.and_then(|e| u8::try_from(e).ok());
    let mut s = SessionState {
        study_session_id: Some(row.id.clone()),
        topic: Some(row.topic.clone()),
        energy,
        energy_label: row.energy_level.clone(),
        mode: Some(row.mode.clone().unwrap_or_else(|| "study".into())),
        started_at: Some(row.started_at.clone()),
        total_paused_seconds: Some(0),
        agent: row.agent.clone(),
        persona_hash: row.persona_hash.clone(),
        persona_file: persona.map(|p| p.to_string_lossy().into_owned()),
        session_dir: dir.map(|d| d.to_string_lossy().into_owned()),
        ..SessionState::default()
    };
    s.set_mux(name, panes.first().cloned(), panes.get(1).cloned());
    Ok(s)
}
