//! `session-state.json`: the single-session authority. Every write is a
//! read-merge-write under an exclusive flock on `.session-state.lock`, then an
//! atomic replace at mode 0600. Unknown fields written by other writers (the
//! web server, newer versions) are preserved.
//!
//! This module knows the file and its fields; the claim rules that decide who
//! may start a session live in [`crate::session::claim`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::fsutil::{self, FileLock};
use crate::settings::SessionPaths;

/// `mode` value of a finished session.
pub const MODE_ENDED: &str = "ended";
/// `mode` value of a reservation that has not launched yet.
pub const MODE_STARTING: &str = "starting";

/// A state file problem.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Reading, locking or writing failed.
    #[error("cannot {action} session state {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid state JSON. Deleting it during a live session
    /// would let a second session start and lose the first one's topics, so
    /// the fix is the repair command, which keeps the damaged file.
    #[error(
        "session state {path} is not valid JSON ({message}); run `studyloop doctor --fix` to rebuild it from the history DB and tmux (the damaged file is kept beside it)"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The parse error.
        message: String,
    },
}

/// Every field seen across writers (reference §3.2) plus `agent_command`,
/// `resumed`, `scrub_env` and `ended_at`. `None` fields are omitted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[expect(
    missing_docs,
    reason = "field names are the documented state schema (docs/product-internals.md#product-cli-phase-1-studyloop-tmux, reference §3.2)"
)]
pub struct SessionState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_slug: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_config_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_paused_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrub_env: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mux_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mux_main_pane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mux_sidebar_pane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_main_pane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_sidebar_pane: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// Kernel start time of `pid`, recorded with it by the claim: a reused
    /// pid is not the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_port: Option<u16>,
    /// Kernel start time of `web_pid`, recorded with it at launch: the end
    /// signals `web_pid` only while both still match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_pid_start: Option<u64>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl SessionState {
    /// "Active": has a study id and is not ended.
    pub fn is_active(&self) -> bool {
        self.study_session_id.is_some() && self.mode.as_deref() != Some(MODE_ENDED)
    }

    /// A web session (`transport` pty or acp) has no multiplexer.
    pub fn is_web(&self) -> bool {
        matches!(self.transport.as_deref(), Some("pty" | "acp"))
    }

    /// The tmux session name (`mux_session`, falling back to the legacy
    /// `tmux_session`); `None` for web sessions.
    pub fn mux_session(&self) -> Option<&str> {
        if self.is_web() {
            return None;
        }
        self.mux_session.as_deref().or(self.tmux_session.as_deref())
    }

    /// The main pane (`mux_main_pane`, falling back to `tmux_main_pane`).
    pub fn mux_main_pane(&self) -> Option<&str> {
        if self.is_web() {
            return None;
        }
        self.mux_main_pane
            .as_deref()
            .or(self.tmux_main_pane.as_deref())
    }

    /// The web process as recorded at launch (pid and start time); `None`
    /// when either is missing: an unverifiable pid is never signalled.
    pub fn web_process(&self) -> Option<crate::procs::Identity> {
        Some(crate::procs::Identity {
            pid: self.web_pid?,
            start_time: self.web_pid_start?,
        })
    }

    /// Set the multiplexer fields and their legacy `tmux_*` mirrors together.
    pub fn set_mux(
        &mut self,
        session: Option<String>,
        main: Option<String>,
        sidebar: Option<String>,
    ) {
        self.tmux_session.clone_from(&session);
        self.tmux_main_pane.clone_from(&main);
        self.tmux_sidebar_pane.clone_from(&sidebar);
        self.mux_session = session;
        self.mux_main_pane = main;
        self.mux_sidebar_pane = sidebar;
    }
}

/// The state file of one session directory.
#[derive(Debug, Clone)]
pub struct StateStore {
    paths: SessionPaths,
}

impl StateStore {
    /// The store for these session paths.
    pub fn new(paths: &SessionPaths) -> Self {
        Self {
            paths: paths.clone(),
        }
    }

    /// The session paths.
    pub fn paths(&self) -> &SessionPaths {
        &self.paths
    }

    fn io(&self, action: &'static str) -> impl FnOnce(std::io::Error) -> StateError + '_ {
        move |source| StateError::Io {
            action,
            path: self.paths.state_file(),
            source,
        }
    }

    /// Read without locking (writes are atomic renames, so a reader always
    /// sees a whole file). `None` when there is no file.
    pub fn read(&self) -> Result<Option<SessionState>, StateError> {
        let path = self.paths.state_file();
        // A FIFO or device planted here is damage (`doctor --fix` keeps it
        // aside), never a hang or an unbounded read.
        let bytes = match fsutil::read_private(&path, fsutil::STATE_LIMIT) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e) if fsutil::is_not_regular(&e) => {
                return Err(StateError::Corrupt {
                    path,
                    message: e.to_string(),
                });
            }
            Err(e) => return Err(self.io("read")(e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StateError::Corrupt {
                path,
                message: e.to_string(),
            })
    }

    fn write(&self, state: &SessionState) -> Result<(), StateError> {
        let mut bytes = serde_json::to_vec_pretty(state)
            .map_err(|e| self.io("encode")(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        fsutil::atomic_write(&self.paths.state_file(), &bytes, 0o600).map_err(self.io("write"))
    }

    /// Locked read-modify-write. `f` sees the current state (`None` = no
    /// file) and may change it; a `Some` result is written back atomically,
    /// `None` leaves the file as it is (an update never re-creates a deleted
    /// file unless `f` builds a state itself).
    pub fn update<R>(
        &self,
        f: impl FnOnce(&mut Option<SessionState>) -> R,
    ) -> Result<R, StateError> {
        fsutil::ensure_private_dir(&self.paths.dir).map_err(self.io("create the directory of"))?;
        let _lock = FileLock::exclusive(&self.paths.state_lock()).map_err(self.io("lock"))?;
        let before = self.read()?;
        let mut current = before.clone();
        let out = f(&mut current);
        if let Some(state) = &current
            && current != before
        {
            self.write(state)?;
        }
        Ok(out)
    }

    /// Replace the whole state (or delete the file for `None`) under the lock.
    pub fn replace(&self, state: Option<&SessionState>) -> Result<(), StateError> {
        fsutil::ensure_private_dir(&self.paths.dir).map_err(self.io("create the directory of"))?;
        let _lock = FileLock::exclusive(&self.paths.state_lock()).map_err(self.io("lock"))?;
        match state {
            Some(s) => self.write(s),
            None => fsutil::remove_if_exists(&self.paths.state_file()).map_err(self.io("remove")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn merge_keeps_unknown_fields_and_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::new(&SessionPaths {
            dir: dir.path().to_owned(),
        });
        std::fs::write(
            store.paths().state_file(),
            r#"{"study_session_id":"a","future_field":{"x":1}}"#,
        )
        .unwrap();
        store
            .update(|s| s.as_mut().unwrap().mode = Some("study".into()))
            .unwrap();
        let s = store.read().unwrap().unwrap();
        assert_eq!(s.mode.as_deref(), Some("study"));
        assert_eq!(s.extra["future_field"]["x"], 1);
        let mode = std::fs::metadata(store.paths().state_file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn update_never_recreates_a_deleted_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::new(&SessionPaths {
            dir: dir.path().to_owned(),
        });
        store
            .update(|s| {
                if let Some(s) = s {
                    s.mode = Some(MODE_ENDED.into());
                }
            })
            .unwrap();
        assert!(store.read().unwrap().is_none());
    }

    #[test]
    fn active_and_web_rules() {
        let mut s = SessionState {
            study_session_id: Some("x".into()),
            mode: Some("study".into()),
            ..Default::default()
        };
        s.set_mux(Some("study-a".into()), Some("%1".into()), Some("%2".into()));
        assert!(s.is_active());
        assert_eq!(s.mux_session(), Some("study-a"));
        s.transport = Some("pty".into());
        assert_eq!(s.mux_session(), None);
        s.mode = Some(MODE_ENDED.into());
        assert!(!s.is_active());
        let legacy: SessionState = serde_json::from_str(r#"{"tmux_session":"study-b"}"#).unwrap();
        assert_eq!(legacy.mux_session(), Some("study-b"));
    }

    #[test]
    fn corrupt_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::new(&SessionPaths {
            dir: dir.path().to_owned(),
        });
        std::fs::write(store.paths().state_file(), "{not json").unwrap();
        let err = store.read().unwrap_err().to_string();
        assert!(
            err.contains("session-state.json")
                && err.contains("studyloop doctor --fix")
                && !err.contains("delete"),
            "{err}"
        );
    }
}
