//! `studyloop study TOPIC`: pre-flight checks (nothing written), a stale
//! session ended properly, then the journaled launch (see [`super::journal`]):
//! intent → claim → DB row → state → session dir → persona/adapter → tmux →
//! live. A failure, or a kill, before `live` is rolled back to the state
//! before the claim (reference §3.1); after `live` the start is finished.

use std::path::{Path, PathBuf};

use super::journal::{Journal, KillAt, Op, OpLock};
use super::load::io;
use super::{Energy, Liveness, Loaded, SessionError, dir, load, pane};
use crate::adapters::{self, Harness, PrepareInput};
use crate::context::{Ctx, now_rfc3339};
use crate::env::{self, Env};
use crate::fsutil::{self, FileLock};
use crate::persona::{self, Mode, PersonaInput};
use crate::settings::SessionPaths;
use crate::state::{SessionState, StateStore};
use crate::store::{NewStudySession, Store};
use crate::tmux::{SessionPanes, Tmux};

/// What to start.
#[derive(Debug, Clone)]
pub struct StartRequest {
    /// The topic as typed.
    pub topic: String,
    /// The harness; `None` = detect.
    pub agent: Option<Harness>,
    /// Energy.
    pub energy: Energy,
    /// Persona mode.
    pub mode: Mode,
    /// Scrub credentials from the harness env (`--scrub-env`).
    pub scrub_env: bool,
}

/// Reusing an old session's name and dir (resume).
#[derive(Debug, Clone)]
pub(super) struct ResumeOf {
    pub name: String,
    pub dir: PathBuf,
    pub previous_notes: Option<String>,
}

/// A started session.
#[derive(Debug, Clone)]
pub struct Started {
    /// The state as written.
    pub state: SessionState,
    /// Warnings for the user (e.g. a stale claim reclaimed).
    pub warnings: Vec<String>,
    /// The tmux client used (to attach).
    pub tmux: Tmux,
}

/// Undo a start that did not reach `live`, from its journal alone (the
/// failing start itself, or a later command repairing a killed one). Every
/// action is idempotent; the journal goes only when all of them succeeded.
pub(super) fn roll_back(
    ctx: &Ctx,
    session: &SessionPaths,
    j: &Journal,
    reason: &str,
) -> Result<(), SessionError> {
    // Only the session this start created (its mark is the start's id).
    if let Some(name) = &j.tmux_session {
        Tmux::new(&ctx.env)?.kill_marked_session(name, &j.study_session_id)?;
    }
    crate::procs::stop_marked(
        env::STUDYLOOP_SESSION_MARK,
        &j.study_session_id,
        &crate::procs::self_and_ancestors(),
        std::time::Duration::from_millis(500),
    );
    if j.db.exists() {
        Store::open(&j.db)?.abort_study_session(&j.study_session_id, &now_rfc3339(), reason)?;
    }
    if let (Some(h), Some(pf)) = (
        j.harness.as_deref().and_then(|h| Harness::parse(h).ok()),
        &j.persona_file,
    ) {
        let _ = adapters::teardown(h, &ctx.env, &j.home, pf);
    }
    if let (Some(d), false) = (&j.session_dir, j.dir_existed) {
        dir::remove_confined_dir(&session.sessions_root(), d)
            .map_err(io("remove the session directory", d))?;
    }
    if j.claimed {
        for f in [session.topics(), session.parking(), session.oneline()] {
            fsutil::remove_if_exists(&f).map_err(io("remove", &f))?;
        }
        let ours = [j.pending_id.as_deref(), Some(j.study_session_id.as_str())];
        let store = StateStore::new(session);
        // Only while the state is still this start's: never over a session
        // someone else claimed since.
        let current = store.read()?;
        if current
            .as_ref()
            .is_some_and(|s| ours.contains(&s.study_session_id.as_deref()))
        {
            store.replace(j.previous.as_ref())?;
        }
    }
    Journal::finish(session)
}

/// Finish a start that reached `live`: only the one-line summary was left.
pub(super) fn finish_live(session: &SessionPaths, j: &Journal) -> Result<(), SessionError> {
    if let Some(line) = &j.oneline {
        let f = session.oneline();
        fsutil::atomic_write(&f, line.as_bytes(), 0o600).map_err(io("write", &f))?;
    }
    Journal::finish(session)
}

/// Start a new study session.
pub fn start(ctx: &Ctx, req: &StartRequest) -> Result<Started, SessionError> {
    let loaded = load(ctx)?;
    let lock = OpLock::acquire(&loaded.paths.session)?;
    super::journal::repair_locked(ctx, &loaded.paths.session, &lock)?;
    start_locked(ctx, &loaded, req, None, &lock)
}

/// A session that is active in the state but whose owner is gone is ended
/// through the end path (its feeds recorded, its row closed, its leftovers
/// stopped) before the claim replaces it; never silently overwritten.
fn end_stale(
    ctx: &Ctx,
    loaded: &Loaded,
    tmux: &Tmux,
    lock: &OpLock,
) -> Result<Option<String>, SessionError> {
    let Some(state) = StateStore::new(&loaded.paths.session).read()? else {
        return Ok(None);
    };
    let Liveness::Stale(why) = super::assess(Some(&state), crate::procs::self_pid(), tmux)? else {
        return Ok(None);
    };
    super::end::end_locked(ctx, loaded, &state, lock)?;
    Ok(Some(format!(
        "reclaiming stale session {} ({why}); it was ended first",
        state.study_session_id.as_deref().unwrap_or("?")
    )))
}

pub(super) fn start_locked(
    ctx: &Ctx,
    loaded: &Loaded,
    req: &StartRequest,
    resume: Option<ResumeOf>,
    lock: &OpLock,
) -> Result<Started, SessionError> {
    let env = &ctx.env;
    let topic = crate::term::line(req.topic.trim()).trim().to_owned();
    if topic.is_empty() {
        return Err(SessionError::EmptyTopic);
    }
    // Pre-flight: every check that can fail on bad input, before any write.
    let kill = KillAt::from_env(env)?;
    let harness = match req.agent {
        Some(h) => h,
        None => adapters::detect(env, &loaded.config.config.agents.priority)?,
    };
    let tmux = Tmux::new(env)?;
    tmux.check_version()?;
    let hatch = env
        .get_nonempty(env::STUDYLOOP_TEST_AGENT_CMD)?
        .map(str::to_owned);
    let binary = match hatch {
        None => harness.adapter().require_binary(env)?,
        Some(_) => harness
            .adapter()
            .resolve_binary(env)
            .unwrap_or_else(|| PathBuf::from(harness.adapter().binaries[0])),
    };
    adapters::preflight(harness, env)?;
    env::flag(env, env::STUDYLOOP_GROK_TRUST_SESSION_DIR)?;

    let mut warnings: Vec<String> = end_stale(ctx, loaded, &tmux, lock)?.into_iter().collect();
    let paths = &loaded.paths;
    let store = StateStore::new(&paths.session);
    if store.read()?.is_none()
        && let Some(row) = super::live_orphan(&paths.db, &paths.session, &tmux)?
    {
        return Err(SessionError::Orphaned {
            id: row.id,
            name: row.tmux_session.unwrap_or_default(),
        });
    }
    let now = now_rfc3339();
    let id = crate::ids::uuid_v4();
    let (name, session_dir, resumed, previous_notes) = match resume {
        Some(r) => (r.name, r.dir, true, r.previous_notes),
        None => {
            let name = crate::ids::session_name(&topic, &id);
            let dir = paths.session.sessions_root().join(&name);
            (name, dir, false, None)
        }
    };
    // The intent, before the first side effect.
    let mut j = Journal::new(Op::Start, &id, &paths.db, &paths.home);
    j.pending_id = Some(format!("pending-{}", crate::ids::random_hex(6)));
    j.tmux_session = Some(name.clone());
    j.dir_existed = session_dir.is_dir();
    j.session_dir = Some(session_dir.clone());
    j.harness = Some(harness.as_str().to_owned());
    j.persona_file = Some(session_dir.join(dir::PERSONA_FILE));
    j.oneline = Some(format!(
        "{topic} · {} · energy {}/10\n",
        harness.as_str(),
        req.energy.get()
    ));
    j.write(&paths.session)?;
    kill.point("start:intent");

    let launch = Launch {
        ctx,
        loaded,
        req,
        topic: &topic,
        harness,
        binary: &binary,
        hatch: hatch.as_deref(),
        now: &now,
        name,
        session_dir,
        resumed,
        previous_notes,
        kill,
    };
    match launch.run(&store, &tmux, &mut j) {
        Ok((state, claim_warning)) => {
            warnings.extend(claim_warning);
            Ok(Started {
                state,
                warnings,
                tmux: tmux.clone(),
            })
        }
        // A session that went live is finished by the next command, never undone.
        Err(e) if j.did("start:live") => Err(e),
        Err(e) => match roll_back(ctx, &paths.session, &j, &e.to_string()) {
            Ok(()) => Err(e),
            Err(rb) => Err(SessionError::RollbackIncomplete {
                cause: Box::new(e),
                rollback: Box::new(rb),
            }),
        },
    }
}

struct Launch<'a> {
    ctx: &'a Ctx,
    loaded: &'a Loaded,
    req: &'a StartRequest,
    topic: &'a str,
    harness: Harness,
    binary: &'a Path,
    hatch: Option<&'a str>,
    now: &'a str,
    name: String,
    session_dir: PathBuf,
    resumed: bool,
    previous_notes: Option<String>,
    kill: KillAt,
}

impl Launch<'_> {
    fn run(
        self,
        store: &StateStore,
        tmux: &Tmux,
        j: &mut Journal,
    ) -> Result<(SessionState, Vec<String>), SessionError> {
        let paths = &self.loaded.paths;
        let session = &paths.session;
        let env: &Env = &self.ctx.env;
        let kill = self.kill;
        let id = j.study_session_id.clone();
        let pending = j.pending_id.clone().unwrap_or_default();
        let (name, session_dir) = (self.name.clone(), self.session_dir.clone());

        // The claim: the journal records what it replaces before the state changes.
        let claim = super::claim::claim_with(
            store,
            tmux,
            self.topic,
            crate::procs::self_pid(),
            self.now,
            &pending,
            |previous| {
                j.claimed = true;
                j.previous.clone_from(previous);
                j.write(session)
                    .map_err(|e| super::ClaimError::Journal(e.to_string()))
            },
        )?;
        j.step(session, kill, "start:claim")?;

        let persona = persona::build(&PersonaInput {
            topic: self.topic,
            energy: self.req.energy.get(),
            mode: self.req.mode,
            session,
            previous_notes: self.previous_notes.as_deref(),
            spec_dir: Some(&super::spec::spec_dir(&session_dir)),
        });
        let configured = self.loaded.config.config.active_topics().iter().find(|t| {
            t.name().eq_ignore_ascii_case(self.topic)
                || t.slug() == crate::ids::config_slug(self.topic)
        });
        let topic_slug = configured.map(crate::config::TopicEntry::slug);
        let db = Store::open(&paths.db)?;
        db.create_study_session(&NewStudySession {
            id: &id,
            topic: &self.topic.to_lowercase(),
            energy: self.req.energy.get(),
            energy_label: self.req.energy.label(),
            mode: self.req.mode.as_str(),
            agent: self.harness.as_str(),
            tmux_session: &name,
            persona_hash: &persona.hash,
            topic_slug: topic_slug.as_deref(),
            started_at: self.now,
        })?;
        drop(db);
        j.step(session, kill, "start:db_row")?;

        store.update(|s| {
            if let Some(s) = s {
                s.study_session_id = Some(id.clone());
                s.topic = Some(self.topic.to_owned());
                s.topic_slug.clone_from(&topic_slug);
                s.topic_config_name = configured.map(|t| t.name().to_owned());
                s.energy = Some(self.req.energy.get());
                s.energy_label = Some(self.req.energy.label().to_owned());
                s.mode = Some(self.req.mode.as_str().to_owned());
                s.timer_mode = Some(self.req.mode.default_timer().to_owned());
                s.started_at = Some(self.now.to_owned());
                s.paused_at = None;
                s.total_paused_seconds = Some(0);
            }
        })?;
        for f in [session.topics(), session.parking()] {
            fsutil::touch(&f, 0o600).map_err(io("create", &f))?;
        }
        j.step(session, kill, "start:state")?;

        tmux.kill_session(&name)?;
        dir::create(&session_dir)?;
        j.step(session, kill, "start:dir")?;

        let persona_file = dir::populate(&session_dir, &self.ctx.exe, &persona.text)?;
        let _prepared = adapters::prepare(&PrepareInput {
            harness: self.harness,
            env,
            home: &paths.home,
            session_dir: &session_dir,
            persona_file: &persona_file,
            persona_text: &persona.text,
            now_epoch: crate::clock::now().as_second(),
        })?;
        // The product's MCP server in the harness's own config (warnings only).
        let mcp_warnings = crate::mcp_registration::register_for_session(
            self.ctx,
            paths,
            &self.loaded.scope,
            self.harness,
            &session_dir,
        );
        j.step(session, kill, "start:prepare")?;

        let agent_command =
            self.harness
                .adapter()
                .shell_command(self.binary, &persona_file, self.resumed);
        let run = match self.hatch {
            Some(template) => pane::hatch_command(template, &persona_file),
            None => agent_command.clone(),
        };
        let exports = pane::exports(env, &session_dir);
        let script = pane::main_script(&exports, &run, &self.ctx.exe, &id, self.req.scrub_env);
        let main_argv = ["/bin/sh".to_owned(), "-c".to_owned(), script];
        let sidebar_argv = pane::sidebar_argv(&exports, &self.ctx.exe);
        let panes: SessionPanes = {
            let lock = session.tmux_lock();
            let _guard = FileLock::exclusive(&lock).map_err(io("lock", &lock))?;
            tmux.new_study_session(&name, &id, &session_dir, &main_argv, &sidebar_argv)?
        };
        j.step(session, kill, "start:tmux")?;

        let state = store.update(|s| {
            if let Some(s) = s {
                s.set_mux(
                    Some(name.clone()),
                    Some(panes.main.clone()),
                    Some(panes.sidebar.clone()),
                );
                s.persona_file = Some(persona_file.to_string_lossy().into_owned());
                s.persona_hash = Some(persona.hash.clone());
                s.session_dir = Some(session_dir.to_string_lossy().into_owned());
                s.agent = Some(self.harness.as_str().to_owned());
                s.agent_command = Some(agent_command.clone());
                s.resumed = Some(self.resumed);
                s.scrub_env = Some(self.req.scrub_env);
                // The CLI process exits now; from here the tmux session is the owner.
                s.pid = None;
                s.pid_start = None;
            }
            s.clone()
        })?;
        let state = state.ok_or_else(|| SessionError::Io {
            action: "re-read",
            path: session.state_file(),
            source: std::io::Error::other("the session state vanished during start"),
        })?;
        j.step(session, kill, "start:live")?;
        finish_live(session, j)?;
        let mut warnings: Vec<String> = claim.warning.into_iter().collect();
        warnings.extend(mcp_warnings);
        Ok((state, warnings))
    }
}
