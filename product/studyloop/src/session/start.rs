//! `studyloop study TOPIC`: pre-flight checks (nothing written), the claim,
//! then the launch; any failure after the claim runs a rollback that leaves
//! no partial state (reference §3.1).

use std::path::{Path, PathBuf};

use super::{Energy, Loaded, SessionError, dir, load, pane};
use crate::adapters::{self, Harness, PrepareInput};
use crate::context::{Ctx, now_rfc3339};
use crate::env::{self, Env};
use crate::fsutil::{self, FileLock};
use crate::persona::{self, Mode, PersonaInput};
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

/// Everything a failed start must undo, in reverse order of creation.
struct Rollback<'a> {
    env: &'a Env,
    home: PathBuf,
    store: &'a StateStore,
    tmux: &'a Tmux,
    previous: Option<SessionState>,
    db_row: Option<(Store, String)>,
    created_dir: Option<PathBuf>,
    placed: Vec<PathBuf>,
    teardown: Option<(Harness, PathBuf)>,
    tmux_session: Option<String>,
}

impl Rollback<'_> {
    fn run(self, reason: &str) {
        if let Some(name) = &self.tmux_session {
            let _ = self.tmux.kill_session(name);
        }
        if let Some((db, id)) = &self.db_row {
            let _ = db.abort_study_session(id, &now_rfc3339(), reason);
        }
        if let Some((h, persona_file)) = &self.teardown {
            let _ = adapters::teardown(*h, self.env, &self.home, persona_file);
        }
        for p in &self.placed {
            let _ = std::fs::remove_file(p);
        }
        // Only a directory this start created, and only under the sessions root.
        if let Some(d) = &self.created_dir
            && d.starts_with(self.store.paths().sessions_root())
        {
            let _ = std::fs::remove_dir_all(d);
        }
        let paths = self.store.paths();
        for f in [paths.topics(), paths.parking(), paths.oneline()] {
            let _ = fsutil::remove_if_exists(&f);
        }
        let _ = self.store.replace(self.previous.as_ref());
    }
}

/// Start a new study session.
pub fn start(ctx: &Ctx, req: &StartRequest) -> Result<Started, SessionError> {
    let loaded = load(ctx)?;
    start_loaded(ctx, &loaded, req, None)
}

pub(super) fn start_loaded(
    ctx: &Ctx,
    loaded: &Loaded,
    req: &StartRequest,
    resume: Option<ResumeOf>,
) -> Result<Started, SessionError> {
    let env = &ctx.env;
    let topic = req.topic.trim();
    if topic.is_empty() {
        return Err(SessionError::EmptyTopic);
    }
    // Pre-flight: every check that can fail on bad input, before any write.
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

    let store = StateStore::new(&loaded.paths.session);
    let now = now_rfc3339();
    let claim = super::claim(&store, &tmux, topic, crate::procs::self_pid(), &now)?;
    let mut rb = Rollback {
        env,
        home: loaded.paths.home.clone(),
        store: &store,
        tmux: &tmux,
        previous: claim.previous,
        db_row: None,
        created_dir: None,
        placed: Vec::new(),
        teardown: None,
        tmux_session: None,
    };
    let launch = Launch {
        ctx,
        loaded,
        req,
        topic,
        harness,
        binary: &binary,
        hatch: hatch.as_deref(),
        now: &now,
        resume,
    };
    match launch.run(&store, &tmux, &mut rb) {
        Ok(state) => Ok(Started {
            state,
            warnings: claim.warning.into_iter().collect(),
            tmux: tmux.clone(),
        }),
        Err(e) => {
            rb.run(&e.to_string());
            Err(e)
        }
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
    resume: Option<ResumeOf>,
}

impl Launch<'_> {
    fn run(
        self,
        store: &StateStore,
        tmux: &Tmux,
        rb: &mut Rollback<'_>,
    ) -> Result<SessionState, SessionError> {
        let paths = &self.loaded.paths;
        let env = &self.ctx.env;
        let id = crate::ids::uuid_v4();
        let (name, session_dir, resumed, previous_notes) = match self.resume {
            Some(r) => (r.name, r.dir, true, r.previous_notes),
            None => {
                let name = crate::ids::session_name(self.topic, &id);
                let dir = paths.session.sessions_root().join(&name);
                (name, dir, false, None)
            }
        };
        let persona = persona::build(&PersonaInput {
            topic: self.topic,
            energy: self.req.energy.get(),
            mode: self.req.mode,
            session: &paths.session,
            previous_notes: previous_notes.as_deref(),
        });
        let configured = self.loaded.config.config.active_topics().iter().find(|t| {
            t.name().eq_ignore_ascii_case(self.topic)
                || t.slug() == crate::ids::config_slug(self.topic)
        });
        let topic_slug = configured.map(crate::config::TopicEntry::slug);

        let db = Store::open(&paths.db)?;
        let lowered = self.topic.to_lowercase();
        db.create_study_session(&NewStudySession {
            id: &id,
            topic: &lowered,
            energy: self.req.energy.get(),
            energy_label: self.req.energy.label(),
            mode: self.req.mode.as_str(),
            agent: self.harness.as_str(),
            tmux_session: &name,
            persona_hash: &persona.hash,
            topic_slug: topic_slug.as_deref(),
            started_at: self.now,
        })?;
        rb.db_row = Some((db, id.clone()));

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
        let io = |action, path: &Path| {
            let path = path.to_owned();
            move |source| SessionError::Io {
                action,
                path,
                source,
            }
        };
        for f in [paths.session.topics(), paths.session.parking()] {
            fsutil::touch(&f, 0o600).map_err(io("create", &f))?;
        }

        tmux.kill_session(&name)?;
        if dir::create(&session_dir)? {
            rb.created_dir = Some(session_dir.clone());
        }
        let persona_file = dir::populate(&session_dir, &self.ctx.exe, &persona.text)?;
        rb.teardown = Some((self.harness, persona_file.clone()));
        let prepared = adapters::prepare(&PrepareInput {
            harness: self.harness,
            env,
            home: &paths.home,
            session_dir: &session_dir,
            persona_file: &persona_file,
            persona_text: &persona.text,
            now_epoch: jiff::Timestamp::now().as_second(),
        })?;
        rb.placed = prepared
            .written
            .into_iter()
            .filter(|p| p.starts_with(&session_dir))
            .collect();

        let agent_command =
            self.harness
                .adapter()
                .shell_command(self.binary, &persona_file, resumed);
        let run = match self.hatch {
            Some(template) => pane::hatch_command(template, &persona_file),
            None => agent_command.clone(),
        };
        let exports = pane::exports(env, &session_dir);
        let script = pane::main_script(&exports, &run, &self.ctx.exe, &id, self.req.scrub_env);
        let main_argv = ["/bin/sh".to_owned(), "-c".to_owned(), script];
        let sidebar_argv = pane::sidebar_argv(&exports, &self.ctx.exe);
        rb.tmux_session = Some(name.clone());
        let panes: SessionPanes = {
            let lock = paths.session.tmux_lock();
            let _guard = FileLock::exclusive(&lock).map_err(io("lock", &lock))?;
            tmux.new_study_session(&name, &session_dir, &main_argv, &sidebar_argv)?
        };

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
                s.resumed = Some(resumed);
                s.scrub_env = Some(self.req.scrub_env);
                // The CLI process exits now; from here the tmux session is the owner.
                s.pid = None;
            }
            s.clone()
        })?;
        let oneline = paths.session.oneline();
        let line = format!(
            "{} · {} · energy {}/10\n",
            self.topic,
            self.harness.as_str(),
            self.req.energy.get()
        );
        fsutil::atomic_write(&oneline, line.as_bytes(), 0o600).map_err(io("write", &oneline))?;
        state.ok_or_else(|| SessionError::Io {
            action: "re-read",
            path: paths.session.state_file(),
            source: std::io::Error::other("the session state vanished during start"),
        })
    }
}
