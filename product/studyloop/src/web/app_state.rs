//! The state every handler of `studyloop web` shares ([`AppState`]), and the live slot as
//! the JSON the state route and the start route return. A leaf of the web module: the
//! router (`server`) and every handler import it, it imports none of them.

use std::time::Duration;

use serde_json::{Value, json};

use super::guard::HostPolicy;
use super::listen::Limits;
use super::slot::{ATTACH_GRACE, Slot};
use super::token::ConsoleToken;
use crate::context::Ctx;

/// State shared by every handler.
#[derive(Debug)]
pub struct AppState {
    /// The server process's context (env snapshot, cwd, exe): what every
    /// session operation resolves paths from.
    pub ctx: Ctx,
    /// The port served (recorded as `web_port`).
    pub port: Option<u16>,
    /// The live session slot.
    pub slot: Slot,
    /// The names and origins this server answers to (`guard`).
    pub hosts: HostPolicy,
    /// Connection limits (`listen`).
    pub limits: Limits,
    /// How long detached or never-attached sessions are held.
    pub grace: Duration,
    /// Serializes the console's starts (`POST /api/session/start` and Labs'
    /// Start drill): a double click starts one session and binds the later
    /// requests to it, and two starts never both pass the state-file claim
    /// (both are this process's) to race for the slot.
    pub start_lock: tokio::sync::Mutex<()>,
    /// This launch's secret (`token`): every `/api/` route and the upgrade need it.
    pub token: ConsoleToken,
}

impl AppState {
    /// State around `slot` with the reference grace period, loopback names,
    /// `allowed_origins` as the extra origins, the default limits and a fresh token.
    #[must_use]
    pub fn new(ctx: Ctx, slot: Slot, allowed_origins: Vec<String>) -> Self {
        Self {
            ctx,
            port: None,
            slot,
            hosts: HostPolicy {
                extra_origins: allowed_origins,
                ..HostPolicy::default()
            },
            limits: Limits::default(),
            grace: ATTACH_GRACE,
            start_lock: tokio::sync::Mutex::new(()),
            token: ConsoleToken::generate(),
        }
    }
}

/// The live slot as JSON: the session's fields plus `active`, `detached`,
/// `reattach_url`; `last_release` when idle. The caller may overlay the
/// state file (which also knows CLI sessions).
#[must_use]
pub fn slot_json(state: &AppState) -> Value {
    match state.slot.current() {
        Some(live) => {
            let mut v = serde_json::to_value(&live.info).unwrap_or_else(|_| json!({}));
            if let Some(obj) = v.as_object_mut() {
                let id = &live.info.study_session_id;
                obj.insert("active".into(), json!(true));
                obj.insert("detached".into(), json!(live.detached()));
                obj.insert("child_pid".into(), json!(live.child_pid()));
                obj.insert("ws_url".into(), json!(ws_url(id)));
                obj.insert("reattach_url".into(), json!("/#study-session"));
                obj.insert("drill".into(), json!(live.drill()));
            }
            v
        }
        None => json!({ "active": false, "last_release": state.slot.last_release() }),
    }
}

/// The WS address of session `id`.
#[must_use]
pub fn ws_url(id: &str) -> String {
    format!("/api/session/ws?study_session_id={id}")
}
