//! The blocking half of a web start and the state view: load settings, claim
//! the single-session slot in `session-state.json`, build the persona, open the
//! DB row, create the session dir, assemble the transport's command with the
//! scrubbed child env; then write the web fields of the state. A failure after
//! the claim runs [`Rollback`], which restores the previous state and leaves no
//! row, directory or feed behind.

use std::path::{Path, PathBuf};

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::acp::AgentCommand;
use super::agents;
use super::app_state::{AppState, slot_json};
use super::pty::PtyCommand;
use super::slot::Live;
use super::start_req::{ApiError, Code, StartReq, err, mode_for};
use crate::adapters::{self, PrepareInput};
use crate::context::{Ctx, now_rfc3339};
use crate::env::{self, Env};
use crate::persona::{self, PersonaInput};
use crate::session::{self, SessionError};
use crate::state::{SessionState, StateStore};
use crate::store::{NewStudySession, Store};
use crate::tmux::Tmux;

/// What the start will run.
#[derive(Debug, Clone)]
pub enum Launch {
    /// A shell command on a pty.
    Pty(PtyCommand),
    /// An ACP agent.
    Acp(AgentCommand),
}

/// Everything between the claim and the transport.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The study session id.
    pub id: String,
    /// The purpose's mode (`mode_for`): the persona, the DB row and the state file's
    /// `mode` all take this one value, as the CLI start writes `Mode::as_str`.
    pub mode: crate::persona::Mode,
    /// Start time.
    pub now: String,
    /// The persona and its hash.
    pub persona_text: String,
    /// 16-hex hash.
    pub persona_hash: String,
    /// The persona file (PTY only).
    pub persona_file: Option<PathBuf>,
    /// The session dir.
    pub session_dir: PathBuf,
    /// What to run.
    pub launch: Launch,
    /// How to undo it all.
    pub rollback: Rollback,
}

/// Undo for a failed start, in reverse order of creation.
#[derive(Debug, Clone)]
pub struct Rollback {
    store: StateStore,
    previous: Option<SessionState>,
    db: Option<(PathBuf, String)>,
    created_dir: Option<PathBuf>,
}

impl Rollback {
    /// Restores the previous state; aborts the DB row; removes what was created.
    pub fn run(&self, reason: &str) {
        if let Some((db, id)) = &self.db
            && let Ok(store) = Store::open(db)
        {
            let _ = store.abort_study_session(id, &now_rfc3339(), reason);
        }
        // Only a directory this start created, and only under the sessions root.
        if let Some(d) = &self.created_dir
            && d.starts_with(self.store.paths().sessions_root())
        {
            let _ = std::fs::remove_dir_all(d);
        }
        let paths = self.store.paths();
        for f in [paths.topics(), paths.parking(), paths.oneline()] {
            let _ = crate::fsutil::remove_if_exists(&f);
        }
        let _ = self.store.replace(self.previous.as_ref());
    }
}

/// `agents.priority` from the config, or none when it cannot be read.
#[must_use]
pub fn priority(ctx: &Ctx) -> Vec<String> {
    session::load(ctx)
        .map(|l| l.config.config.agents.priority.clone())
        .unwrap_or_default()
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

fn session_error(e: SessionError) -> ApiError {
    match e {
        SessionError::Claim(crate::session::ClaimError::Blocked { .. }) => {
            ApiError::new(StatusCode::CONFLICT, Code::SessionActive, e.to_string())
                .with_details(json!({"detached": false, "reattach_url": "/#study-session"}))
        }
        SessionError::Scope(_) | SessionError::Config(_) | SessionError::Env(_) => {
            err(StatusCode::BAD_REQUEST, e.to_string())
        }
        other => internal(other),
    }
}

/// Claims the slot and prepares the launch (blocking).
///
/// # Errors
/// [`ApiError`] with the status the route returns.
pub fn prepare(ctx: &Ctx, req: &StartReq, binary: Option<&Path>) -> Result<Prepared, ApiError> {
    let loaded = session::load(ctx).map_err(session_error)?;
    let tmux = Tmux::new(&ctx.env).map_err(|e| session_error(e.into()))?;
    let store = StateStore::new(&loaded.paths.session);
    let now = now_rfc3339();
    let claim = session::claim(&store, &tmux, &req.topic, crate::procs::self_pid(), &now)
        .map_err(|e| session_error(e.into()))?;
    let mut rb = Rollback {
        store,
        previous: claim.previous,
        db: None,
        created_dir: None,
    };
    match prepare_claimed(ctx, &loaded, req, binary, &now, &mut rb) {
        Ok(p) => Ok(p),
        Err(e) => {
            rb.run(e.message());
            Err(e)
        }
    }
}

fn prepare_claimed(
    ctx: &Ctx,
    loaded: &session::Loaded,
    req: &StartReq,
    binary: Option<&Path>,
    now: &str,
    rb: &mut Rollback,
) -> Result<Prepared, ApiError> {
    let paths = &loaded.paths;
    let id = crate::ids::uuid_v4();
    let mode = mode_for(req.purpose);
    let db = Store::open(&paths.db).map_err(internal)?;
    let previous = if req.resume {
        Some(super::resume::previous_notes(&db, &req.topic)?)
    } else {
        None
    };
    let id8: String = id.chars().filter(char::is_ascii_hexdigit).take(8).collect();
    let name = format!(
        "{}-{}-{id8}",
        req.transport,
        crate::ids::session_slug(&req.topic)
    );
    let session_dir = paths.session.sessions_root().join(&name);
    let mut persona = persona::build(&PersonaInput {
        topic: &req.topic,
        energy: req.energy.get(),
        mode,
        session: &paths.session,
        previous_notes: previous.as_deref(),
        spec_dir: Some(&session::spec::spec_dir(&session_dir)),
    });
    if let Some(notice) = &req.notice {
        persona = persona::with_data(persona, notice);
    }

    db.create_study_session(&NewStudySession {
        id: &id,
        topic: &req.topic.to_lowercase(),
        energy: req.energy.get(),
        energy_label: req.energy.label(),
        mode: mode.as_str(),
        agent: req.harness.as_str(),
        tmux_session: &name,
        persona_hash: &persona.hash,
        topic_slug: None,
        started_at: now,
    })
    .map_err(internal)?;
    rb.db = Some((paths.db.clone(), id.clone()));
    for f in [paths.session.topics(), paths.session.parking()] {
        crate::fsutil::touch(&f, 0o600).map_err(internal)?;
    }
    if session::create_session_dir(&session_dir).map_err(session_error)? {
        rb.created_dir = Some(session_dir.clone());
    }

    // The child gets the scrubbed env (no credentials, no test hatches).
    let child = crate::child_env::scrub(&ctx.env);
    let hatch = |name| ctx.env.get_nonempty(name).ok().flatten().map(str::to_owned);
    let (launch, persona_file) = if req.transport == "acp" {
        let mut env = pairs(&child);
        env.extend(agents::acp_extra_env(req.harness, &ctx.env));
        let argv = match hatch(env::STUDYLOOP_TEST_ACP_CMD) {
            // exec keeps the agent the group leader the client signals.
            Some(cmd) => vec!["/bin/sh".into(), "-c".into(), format!("exec {cmd}")],
            None => agents::acp_launch(req.harness)
                .map(|l| l.argv.iter().map(|a| (*a).to_owned()).collect())
                .unwrap_or_default(),
        };
        // Contained: nothing the agent starts outlives its stop (an empty
        // argv stays empty, for the spawn's own error).
        let argv = if argv.is_empty() {
            argv
        } else {
            crate::modules::contained_argv(&ctx.exe, &argv)
        };
        (
            Launch::Acp(AgentCommand {
                argv,
                cwd: session_dir.clone(),
                env,
                // The same server a CLI session registers in the harness's config.
                mcp_servers: crate::mcp_registration::spec(ctx, paths, &loaded.scope)
                    .into_iter()
                    .collect(),
                // The console's own stream is the turn source (web::acp::turns).
                turns: Some(super::acp::TurnLog::new(
                    paths.db.clone(),
                    id.clone(),
                    session_dir.display().to_string(),
                    turn_embedder(ctx),
                )),
            }),
            None,
        )
    } else {
        let persona_file = session::populate_session_dir(&session_dir, &ctx.exe, &persona.text)
            .map_err(session_error)?;
        adapters::prepare(&PrepareInput {
            harness: req.harness,
            env: &ctx.env,
            home: &paths.home,
            session_dir: &session_dir,
            persona_file: &persona_file,
            persona_text: &persona.text,
            now_epoch: crate::clock::now().as_second(),
        })
        .map_err(|e| session_error(e.into()))?;
        let run = match (hatch(env::STUDYLOOP_TEST_AGENT_CMD), binary) {
            (Some(template), _) => session::hatch_command(&template, &persona_file),
            (None, Some(bin)) => req
                .harness
                .adapter()
                .shell_command(bin, &persona_file, false),
            (None, None) => return Err(internal("no harness binary resolved")),
        };
        // Contained like the tmux pane's agent: nothing it starts outlives the stop.
        let shell_command = format!(
            "{}exec {}",
            session::pane_exports(&child, &session_dir),
            session::contained(&ctx.exe, &run)
        );
        let mut env = pairs(&child);
        env.retain(|(k, _)| k != "TERM");
        env.push(("TERM".into(), "xterm-256color".into()));
        let cmd = PtyCommand {
            shell_command,
            cwd: session_dir.clone(),
            env,
            cols: 80,
            rows: 24,
        };
        (Launch::Pty(cmd), Some(persona_file))
    };
    Ok(Prepared {
        id,
        mode,
        now: now.to_owned(),
        persona_text: persona.text,
        persona_hash: persona.hash,
        persona_file,
        session_dir,
        launch,
        rollback: rb.clone(),
    })
}

fn pairs(env: &Env) -> Vec<(String, String)> {
    env.iter()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v.to_str()?.to_owned())))
        .collect()
}

/// Writes the web session into the state file (blocking).
///
/// # Errors
/// 500 when the state file cannot be written.
pub fn write_state(
    ctx: &Ctx,
    p: &Prepared,
    live: &Live,
    port: Option<u16>,
) -> Result<(), ApiError> {
    let session = crate::settings::session_paths(&ctx.env).map_err(internal)?;
    let info = &live.info;
    StateStore::new(&session)
        .update(|s| {
            let s = s.get_or_insert_with(SessionState::default);
            s.study_session_id = Some(p.id.clone());
            s.topic = Some(info.topic.clone());
            s.energy = Some(info.energy);
            s.energy_label = crate::session::Energy::parse(&info.energy.to_string())
                .ok()
                .map(|e| e.label().to_owned());
            s.mode = Some(p.mode.as_str().to_owned());
            s.timer_mode = Some("energy".into());
            s.started_at = Some(p.now.clone());
            s.start_time = Some(p.now.clone());
            s.agent = Some(info.agent.clone());
            s.persona_hash = Some(p.persona_hash.clone());
            s.persona_file = p
                .persona_file
                .as_ref()
                .map(|f| f.to_string_lossy().into_owned());
            s.session_dir = Some(p.session_dir.to_string_lossy().into_owned());
            s.transport = Some(info.transport.to_owned());
            s.pid = Some(crate::procs::self_pid());
            s.child_pid = live.child_pid().and_then(|c| i32::try_from(c).ok());
            s.origin = Some(info.origin.clone());
            s.purpose = Some(info.purpose.clone());
            s.web_port = port;
            s.set_mux(None, None, None);
        })
        .map_err(internal)
}

/// The state view: the state file overlaid with the live slot; `detached`,
/// `reattach_url`, default `origin`/`purpose`; `last_release` when idle.
#[must_use]
pub fn state_json(app: &AppState) -> Value {
    let file = crate::settings::session_paths(&app.ctx.env)
        .ok()
        .and_then(|p| StateStore::new(&p).read().ok().flatten());
    let mut out = file
        .as_ref()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_else(|| json!({}));
    let active_in_file = file.as_ref().is_some_and(SessionState::is_active);
    if let (Some(obj), Value::Object(slot)) = (out.as_object_mut(), slot_json(app)) {
        for (k, v) in slot {
            obj.insert(k, v);
        }
        if active_in_file && obj.get("active") == Some(&json!(false)) {
            // A CLI (tmux) session, or one owned by another process.
            obj.insert("active".into(), json!(true));
            obj.insert("detached".into(), json!(true));
        }
        obj.entry("origin").or_insert(json!("study"));
        obj.entry("purpose").or_insert(json!("focus"));
    }
    out
}

/// The embedding model for the turn log, when one is usable; otherwise the
/// turns are found lexically and a later session end backfills their vectors.
fn turn_embedder(ctx: &Ctx) -> Option<std::sync::Arc<crate::embed::Embedder>> {
    match crate::embed::Availability::from_env(&ctx.env) {
        Ok(crate::embed::Availability::Ready(e)) => Some(e),
        _ => None,
    }
}
