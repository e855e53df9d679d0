//! Hands a `practice_check` block to the running study session through its
//! own transport, and says what happened: `Mentor told.` or
//! `Mentor not told: <reason>` — delivery failure is always shown, never
//! silent. The tmux/CLI path pastes the block into the agent's pane; a web
//! session (PTY or ACP) gets it through its console's loopback
//! `POST /api/session/practice-check` (`web::practice`), which hands it to
//! that session's transport; the request carries the console's token, read
//! from its 0600 file (`web::token`).

use crate::env::Env;
use crate::{settings, state, tmux};

/// Why the mentor was not told (the word after `Mentor not told: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotTold {
    /// No live session.
    NoActiveSession,
    /// The session runs in the web console, which answered with a refusal.
    WebRefused(String),
    /// The recorded tmux session or pane is gone.
    SessionNotRunning,
    /// The state or tmux could not be read or driven.
    Failed(String),
}

impl std::fmt::Display for NotTold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoActiveSession => f.write_str("no_active_session"),
            Self::WebRefused(why) => write!(f, "{why}"),
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
        let (Some(port), Some(id)) = (st.web_port, st.study_session_id.as_deref()) else {
            return Err(NotTold::SessionNotRunning);
        };
        let Some(token) = crate::console_token::read_token(&paths.dir, port) else {
            return Err(NotTold::WebRefused(format!(
                "web_console_token_missing (no readable {}; is `studyloop web` still running?)",
                crate::console_token::token_file(&paths.dir, port).display()
            )));
        };
        return post_to_console(port, &token, id, block);
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

/// The one request to the local console: plain HTTP/1.1 on loopback, bounded
/// in time, no client library (the product has none and needs only this).
fn post_to_console(
    port: u16,
    token: &str,
    study_session_id: &str,
    block: &str,
) -> Result<(), NotTold> {
    use std::io::{Read as _, Write as _};
    use std::time::Duration;
    let fail = |e: &dyn std::fmt::Display| NotTold::Failed(e.to_string());
    let body =
        serde_json::json!({ "study_session_id": study_session_id, "block": block }).to_string();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut conn = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(3))
        .map_err(|_| NotTold::SessionNotRunning)?;
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| fail(&e))?;
    conn.set_write_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| fail(&e))?;
    let request = format!(
        "POST /api/session/practice-check HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         {}: {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        crate::console_token::TOKEN_HEADER,
        body.len()
    );
    conn.write_all(request.as_bytes()).map_err(|e| fail(&e))?;
    let mut reply = Vec::new();
    // Bounded: the console answers with one small JSON object.
    let _ = conn.take(64 * 1024).read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    let status = reply.split_whitespace().nth(1).unwrap_or_default();
    let answer: serde_json::Value = reply
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or_default();
    // A refusal is the envelope's `{"error": {"code", "message", "details"}}`.
    match (status, answer["error"]["message"].as_str()) {
        ("200", _) => Ok(()),
        ("404", _) => Err(NotTold::NoActiveSession),
        ("401", _) => Err(NotTold::WebRefused(
            "web_console_password (the console asks for its password; run the check from a session without --lan)".into(),
        )),
        (_, Some(why)) => Err(NotTold::WebRefused(crate::term::line(why).into_owned())),
        (code, None) => Err(fail(&format!("the web console answered HTTP {code}"))),
    }
}
