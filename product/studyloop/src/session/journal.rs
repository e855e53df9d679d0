//! Start, end and `doctor --fix` as journaled steps. Before its first side effect a start or
//! an end writes an intent record, `session-journal.json` (atomic, 0600, next
//! to the state file), naming everything it is about to create or close; each
//! step is recorded as it completes; the record is removed after the last one.
//! The operation holds the op flock (`.session-op.lock`) throughout, so a
//! journal whose lock is free belongs to a process that died.
//!
//! Every command calls [`repair`] before its own work: an interrupted start is
//! rolled back (or, once its session was live, finished), an interrupted end
//! is finished. Every step is idempotent, so a repair that is itself killed is
//! simply repaired again by the next command.
//!
//! [`KILL_POINTS`] name the steps; the `STUDYLOOP_TEST_KILL_AT` hatch makes the
//! process SIGKILL itself right after a step's effect and before its record,
//! the worst instant, so a test can prove the repair at every step.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SessionError;
use super::load::io;
use crate::context::Ctx;
use crate::env::{self, Env, EnvError};
use crate::fsutil::{self, FileLock};
use crate::settings::SessionPaths;
use crate::state::SessionState;

/// Every kill point, in execution order (start, end, then `doctor --fix`).
pub const KILL_POINTS: &[&str] = &[
    "start:intent",
    "start:claim",
    "start:db_row",
    "start:state",
    "start:dir",
    "start:prepare",
    "start:tmux",
    "start:live",
    "end:intent",
    "end:db",
    "end:stop",
    "end:teardown",
    "end:files",
    "end:state",
    "end:tmux",
    "fix:intent",
    "fix:aside",
    "fix:state",
];

/// [`KILL_POINTS`] as the accepted set of an error message.
const KILL_POINTS_TEXT: &str = "start:intent, start:claim, start:db_row, start:state, start:dir, start:prepare, start:tmux, start:live, end:intent, end:db, end:stop, end:teardown, end:files, end:state, end:tmux, fix:intent, fix:aside, fix:state";

/// The parsed `STUDYLOOP_TEST_KILL_AT` hatch: the step to die at, if any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KillAt(Option<&'static str>);

impl KillAt {
    /// Parse the hatch once; an unknown step is an error, never "off".
    pub fn from_env(env: &Env) -> Result<Self, EnvError> {
        match env.get_nonempty(env::STUDYLOOP_TEST_KILL_AT)? {
            None => Ok(Self(None)),
            Some(v) => KILL_POINTS
                .iter()
                .find(|p| **p == v)
                .map(|p| Self(Some(p)))
                .ok_or_else(|| EnvError::Invalid {
                    name: env::STUDYLOOP_TEST_KILL_AT,
                    value: v.to_owned(),
                    accepted: KILL_POINTS_TEXT,
                }),
        }
    }

    /// SIGKILL this process when `step` is the chosen kill point.
    pub(crate) fn point(self, step: &'static str) {
        debug_assert!(KILL_POINTS.contains(&step), "unknown kill point {step}");
        if self.0 == Some(step)
            && let Some(me) = rustix::process::Pid::from_raw(crate::procs::self_pid())
        {
            let _ = rustix::process::kill_process(me, rustix::process::Signal::KILL);
            // SIGKILL is not deliverable late; never run past the point.
            std::process::abort();
        }
    }
}

/// Which operation a journal records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Op {
    /// `studyloop study TOPIC` / `--resume`.
    #[default]
    Start,
    /// Any end door.
    End,
    /// `doctor --fix` rebuilding the state (see `crate::doctor::fix`).
    Fix,
}

/// The intent record. Paths are absolute; nothing in it is re-derived from
/// config, so a repair needs neither the config nor the scope gate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Journal {
    pub version: u32,
    pub op: Op,
    /// The study id the operation starts or ends.
    pub study_session_id: String,
    /// The history DB.
    pub db: PathBuf,
    /// HOME (adapter teardown).
    pub home: PathBuf,
    /// Steps completed, in order.
    #[serde(default)]
    pub done: Vec<String>,
    /// Start: the reservation id the claim writes into the state.
    #[serde(default)]
    pub pending_id: Option<String>,
    /// Start: whether the claim ran (then `previous` is what it replaced).
    #[serde(default)]
    pub claimed: bool,
    /// Start: the state before the claim (`None` = no state file).
    #[serde(default)]
    pub previous: Option<SessionState>,
    /// The tmux session this operation creates or ends (exact name).
    #[serde(default)]
    pub tmux_session: Option<String>,
    /// The session dir.
    #[serde(default)]
    pub session_dir: Option<PathBuf>,
    /// Start: whether the session dir existed before (a resume); a rollback
    /// removes only a directory the start created.
    #[serde(default)]
    pub dir_existed: bool,
    /// Start: harness and persona file (adapter teardown on rollback).
    #[serde(default)]
    pub harness: Option<String>,
    #[serde(default)]
    pub persona_file: Option<PathBuf>,
    /// Start: the one-line summary written once the session is live.
    #[serde(default)]
    pub oneline: Option<String>,
    /// End: the state as the end read it.
    #[serde(default)]
    pub snapshot: Option<SessionState>,
    /// End: the ender runs inside the session (its own tmux kill comes last).
    #[serde(default)]
    pub inside: bool,
    /// Fix: the name the damaged state is kept under (a hard link beside it;
    /// the damaged file itself stays until the rebuilt one replaces it).
    #[serde(default)]
    pub aside: Option<PathBuf>,
}

impl Journal {
    /// A new record for `op` on `study_session_id`.
    pub fn new(op: Op, study_session_id: &str, db: &Path, home: &Path) -> Self {
        Self {
            version: 1,
            op,
            study_session_id: study_session_id.to_owned(),
            db: db.to_owned(),
            home: home.to_owned(),
            ..Self::default()
        }
    }

    /// Read the journal; `Ok(None)` when there is none.
    pub fn read(paths: &SessionPaths) -> Result<Option<Self>, SessionError> {
        let path = paths.journal();
        // Only a regular file is read, and only so much: a FIFO planted there
        // would hang every command, a symlink would read someone else's file.
        let bytes = match crate::fsutil::read_private(&path, crate::fsutil::STATE_LIMIT) {
            Ok(None) => return Ok(None),
            Ok(Some(b)) => b,
            Err(e) if crate::fsutil::is_not_regular(&e) => {
                return Err(SessionError::JournalCorrupt {
                    path,
                    message: e.to_string(),
                });
            }
            Err(e) => return Err(io("read", &path)(e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| SessionError::JournalCorrupt {
                path,
                message: e.to_string(),
            })
    }

    /// Refuses a record naming what no start or end records (a forged or
    /// foreign journal): a repair acts on what the record names — it kills
    /// the tmux session, removes the session dir, writes the DB — so each
    /// must be what StudyLoop itself creates: a tmux session named
    /// `study-<topic slug>-<8 hex>` ([`crate::ids::session_name`]), a
    /// session dir (and persona file) inside the state tree's sessions root,
    /// and a DB that is absent or already StudyLoop's (a `user_version`, or
    /// no table at all): never the user's `work` session or a foreign DB.
    pub fn vet(&self, paths: &SessionPaths) -> Result<(), SessionError> {
        let refuse = |message: String| SessionError::JournalCorrupt {
            path: paths.journal(),
            message,
        };
        if let Some(name) = &self.tmux_session
            && !is_session_name(name)
        {
            return Err(refuse(format!(
                "it names tmux session {name:?}, which StudyLoop does not create (study-<topic>-<8 hex>)"
            )));
        }
        let root = paths.sessions_root();
        let inside = |p: &Path, root: &Path| {
            p.starts_with(root)
                && p != root
                && p.components()
                    .all(|c| !matches!(c, std::path::Component::ParentDir))
        };
        if let Some(d) = &self.session_dir
            && !inside(d, &root)
        {
            return Err(refuse(format!(
                "its session dir {} is not inside {}",
                d.display(),
                root.display()
            )));
        }
        if let Some(pf) = &self.persona_file
            && !self.session_dir.as_deref().is_some_and(|d| inside(pf, d))
        {
            return Err(refuse(format!(
                "its persona file {} is not inside its session dir",
                pf.display()
            )));
        }
        if let Some(a) = &self.aside
            && (a.parent() != Some(paths.dir.as_path())
                || !a
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().contains(".corrupt-")))
        {
            return Err(refuse(format!(
                "its kept-aside file {} is not a `.corrupt-` name in {}",
                a.display(),
                paths.dir.display()
            )));
        }
        if !is_studyloop_db(&self.db) {
            return Err(refuse(format!(
                "its DB {} is not a StudyLoop history DB (no schema version, other tables)",
                self.db.display()
            )));
        }
        Ok(())
    }

    /// Write (atomically, 0600) the record as it stands.
    pub fn write(&self, paths: &SessionPaths) -> Result<(), SessionError> {
        let path = paths.journal();
        let mut bytes = serde_json::to_vec_pretty(self)
            .map_err(|e| io("encode", &path)(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        fsutil::atomic_write(&path, &bytes, 0o600).map_err(io("write", &path))
    }

    /// Whether `step` completed.
    pub fn did(&self, step: &str) -> bool {
        self.done.iter().any(|d| d == step)
    }

    /// Record `step` as completed (after the kill point: effect done, record not).
    pub fn step(
        &mut self,
        paths: &SessionPaths,
        kill: KillAt,
        step: &'static str,
    ) -> Result<(), SessionError> {
        kill.point(step);
        if !self.did(step) {
            self.done.push(step.to_owned());
        }
        self.write(paths)
    }

    /// The operation completed (or was undone): the record goes.
    pub fn finish(paths: &SessionPaths) -> Result<(), SessionError> {
        let path = paths.journal();
        fsutil::remove_if_exists(&path).map_err(io("remove", &path))
    }
}

/// Whether `name` has the shape of [`crate::ids::session_name`].
fn is_session_name(name: &str) -> bool {
    let Some((slug, id8)) = name.strip_prefix("study-").and_then(|r| r.rsplit_once('-')) else {
        return false;
    };
    !slug.is_empty()
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && id8.len() == 8
        && id8
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// An absent DB (a start killed before creating it), or one that is
/// StudyLoop's: a schema version, or an empty file. Unreadable: not ours.
fn is_studyloop_db(db: &Path) -> bool {
    match crate::store::Store::open_read_only(db) {
        Ok(None) => true,
        Ok(Some(store)) => match store.schema_version() {
            Ok(v) if v > 0 => true,
            Ok(_) => store.table_count().is_ok_and(|n| n == 0),
            Err(_) => false,
        },
        Err(_) => false,
    }
}

/// The op flock, held by a start or end from its intent record to its end.
#[derive(Debug)]
pub struct OpLock {
    _lock: FileLock,
}

impl OpLock {
    /// Wait for any running start or end, then hold the lock.
    pub(crate) fn acquire(paths: &SessionPaths) -> Result<Self, SessionError> {
        let path = paths.op_lock();
        fsutil::ensure_private_dir(&paths.dir).map_err(io("create", &paths.dir))?;
        FileLock::exclusive(&path)
            .map(|l| Self { _lock: l })
            .map_err(io("lock", &path))
    }

    fn try_acquire(paths: &SessionPaths) -> Result<Option<Self>, SessionError> {
        let path = paths.op_lock();
        FileLock::try_exclusive(&path)
            .map(|l| l.map(|l| Self { _lock: l }))
            .map_err(io("lock", &path))
    }
}

/// How [`repair`] treats a start or end still running in another process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Wait for it (commands that write: a feed line appended during an end
    /// would be lost).
    Block,
    /// Leave it alone (`status`, the sidebar: they must stay instant).
    Skip,
}

/// Finish or roll back an interrupted start or end, if there is one. Returns
/// what was repaired, for the user.
pub fn repair(ctx: &Ctx, wait: Wait) -> Result<Option<String>, SessionError> {
    let paths = crate::settings::session_paths(&ctx.env)?;
    // The common case costs one stat.
    if !paths.journal().exists() {
        return Ok(None);
    }
    let lock = match wait {
        Wait::Block => OpLock::acquire(&paths)?,
        Wait::Skip => match OpLock::try_acquire(&paths)? {
            Some(l) => l,
            None => return Ok(None),
        },
    };
    repair_locked(ctx, &paths, &lock)
}

/// [`repair`] under a held op lock.
pub(crate) fn repair_locked(
    ctx: &Ctx,
    paths: &SessionPaths,
    _lock: &OpLock,
) -> Result<Option<String>, SessionError> {
    let Some(journal) = Journal::read(paths)? else {
        return Ok(None);
    };
    journal.vet(paths)?;
    let kill = KillAt::from_env(&ctx.env)?;
    let id = journal.study_session_id.clone();
    match journal.op {
        Op::Start if journal.did("start:live") => {
            super::start::finish_live(paths, &journal)?;
            Ok(Some(format!(
                "finished the interrupted start of session {id}"
            )))
        }
        Op::Start => {
            super::start::roll_back(ctx, paths, &journal, "the start was interrupted")?;
            Ok(Some(format!(
                "rolled back the interrupted start of session {id}"
            )))
        }
        Op::End => {
            // An ender inside its own session dies by its last step (killing
            // that session); the end was complete for the user, so finishing
            // it is not news.
            let only_last = journal.did("end:state");
            let mut journal = journal;
            super::end::run_steps(ctx, paths, &mut journal, kill)?;
            Ok((!only_last).then(|| format!("finished the interrupted end of session {id}")))
        }
        // Each fix step leaves a whole state (the damaged one, or the
        // rebuilt one), so the record only has to go; `doctor --fix` runs
        // its rebuild again right after when the state is still damaged.
        Op::Fix => {
            Journal::finish(paths)?;
            Ok(Some(format!(
                "cleared the record of an interrupted `doctor --fix` (session {id}); nothing was lost"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_points_text_lists_every_point() {
        assert_eq!(KILL_POINTS.join(", "), KILL_POINTS_TEXT);
        let env = Env::from_pairs([(env::STUDYLOOP_TEST_KILL_AT, "end:db")]);
        assert_eq!(KillAt::from_env(&env).unwrap(), KillAt(Some("end:db")));
        let env = Env::from_pairs([(env::STUDYLOOP_TEST_KILL_AT, "end:nope")]);
        let err = KillAt::from_env(&env).unwrap_err().to_string();
        assert!(
            err.contains("`end:nope`") && err.contains("start:claim"),
            "{err}"
        );
        assert_eq!(KillAt::from_env(&Env::default()).unwrap(), KillAt(None));
    }

    /// A forged record that names the user's own tmux session, a directory
    /// outside the state tree or a foreign SQLite file is refused before any
    /// repair acts on it; what a start records itself passes.
    #[test]
    fn a_journal_naming_what_no_operation_records_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let paths = SessionPaths {
            dir: dir.path().to_owned(),
        };
        let root = paths.sessions_root();
        let name = crate::ids::session_name("SQL joins", &crate::ids::uuid_v4());
        let mut good = Journal::new(Op::Start, "id", &dir.path().join("sessions.db"), dir.path());
        good.tmux_session = Some(name.clone());
        good.session_dir = Some(root.join(&name));
        good.persona_file = Some(root.join(&name).join("studyloop-persona.md"));
        good.vet(&paths).unwrap();
        let foreign = dir.path().join("foreign.db");
        rusqlite::Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE mine (x);")
            .unwrap();
        let ours = dir.path().join("ours.db");
        drop(crate::store::Store::open(&ours).unwrap());
        let mut ok_db = good.clone();
        ok_db.db = ours;
        ok_db.vet(&paths).unwrap();
        let forged: Vec<(Journal, &str)> = vec![
            (
                Journal {
                    tmux_session: Some("work".into()),
                    ..good.clone()
                },
                "\"work\"",
            ),
            (
                Journal {
                    tmux_session: Some("study-x-1234567".into()),
                    ..good.clone()
                },
                "tmux",
            ),
            (
                Journal {
                    session_dir: Some(dir.path().join("elsewhere")),
                    ..good.clone()
                },
                "not inside",
            ),
            (
                Journal {
                    session_dir: Some(root.join("../..")),
                    ..good.clone()
                },
                "not inside",
            ),
            (
                Journal {
                    persona_file: Some("/etc/passwd".into()),
                    ..good.clone()
                },
                "persona",
            ),
            (
                Journal {
                    db: foreign.clone(),
                    ..good.clone()
                },
                "not a StudyLoop history DB",
            ),
        ];
        for (j, needle) in forged {
            let err = j.vet(&paths).unwrap_err().to_string();
            assert!(err.contains(needle), "{needle}: {err}");
        }
        // The foreign DB was not migrated.
        let tables: i64 = rusqlite::Connection::open(&foreign)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1);
    }

    #[test]
    fn a_free_lock_means_the_owner_died() {
        let dir = tempfile::tempdir().unwrap();
        let paths = SessionPaths {
            dir: dir.path().to_owned(),
        };
        let held = OpLock::acquire(&paths).unwrap();
        assert!(OpLock::try_acquire(&paths).unwrap().is_none());
        drop(held);
        assert!(OpLock::try_acquire(&paths).unwrap().is_some());
    }
}
