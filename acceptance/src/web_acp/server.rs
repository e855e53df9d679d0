//! `studyloop web --port 0` as a child of a scratch world: started with the
//! world's env (plus the lane's extra variables), its URL read from the line
//! it prints (with the console token, recorded in `console_token`), its output kept for evidence, stopped with SIGTERM (the server
//! then ends its live session and the agent's process group) and SIGKILL
//! after a grace period.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use serde_json::{Value, json};

use super::{console_token, http};
use crate::bins::{self, BinError};
use crate::scratch::{Env, Scratch};

/// How long the server may take to print its URL.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the server did not come up.
#[derive(Debug, thiserror::Error)]
pub enum WebServerError {
    /// The workspace's `studyloop` binary is not built.
    #[error(transparent)]
    Binary(#[from] BinError),
    /// It could not be spawned.
    #[error("cannot start {program} web: {source}; build it with `cargo build --bins`")]
    Spawn {
        /// The binary.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// It exited or stayed silent.
    #[error("`studyloop web --port 0` printed no URL within {waited:?}; its output: {output}")]
    NoUrl {
        /// How long we waited.
        waited: Duration,
        /// What it printed.
        output: String,
    },
}

/// Why `POST /api/session/start` gave no usable session.
#[derive(Debug, thiserror::Error)]
pub enum StartSessionError {
    /// No response in time, or the connection failed.
    #[error(transparent)]
    Http(crate::web_acp::http::HttpError),
    /// A status other than 201 (the body says why: a live session, a bad harness, …).
    #[error("POST /api/session/start answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The response body.
        body: String,
    },
    /// A 201 without a field a driver needs.
    #[error("the start response has no `{name}`: {body}")]
    MissingField {
        /// The missing field.
        name: &'static str,
        /// The response body.
        body: String,
    },
}

/// What a 201 from `POST /api/session/start` carried.
#[derive(Debug, Clone)]
pub struct SessionStart {
    /// The study session id.
    pub id: String,
    /// The session socket path.
    pub ws_url: String,
    /// The persona text to send first.
    pub persona: String,
    /// Its hash.
    pub persona_hash: String,
    /// The whole `result` of the response's envelope.
    pub body: Value,
}

/// A running `studyloop web`.
#[derive(Debug)]
pub struct WebServer {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The `studyloop` binary it runs.
    pub binary: PathBuf,
    output: Arc<Mutex<String>>,
}

impl WebServer {
    /// Starts the workspace's `studyloop web` in `scratch` with a cell's whole
    /// `env` (the scratch env plus what provisioning added): the one way lanes
    /// and journeys start the product server.
    ///
    /// # Errors
    /// [`WebServerError`] when the binary is not built, cannot start or prints
    /// no URL in time.
    pub(crate) fn start_in(scratch: &Scratch, env: &Env) -> Result<Self, WebServerError> {
        let studyloop = bins::path("studyloop")?;
        let pairs: Vec<(OsString, OsString)> = env
            .iter()
            .map(|(k, v)| (OsString::from(k), v.to_owned()))
            .collect();
        Self::start(scratch, &studyloop, &pairs)
    }

    /// `GET /api/session/state`: what the product says about its live session.
    ///
    /// # Errors
    /// [`http::HttpError`] when no response came within `timeout`.
    pub fn session_state(&self, timeout: Duration) -> Result<http::Response, http::HttpError> {
        http::request(&self.addr, "GET", "/api/session/state", None, timeout)
    }

    /// `POST /api/session/start` with transport `acp` and purpose `study`, the way
    /// the Dashboard's "Start a study session" sends it. `record` gets the raw
    /// response text first, whatever it says (the bundle keeps it); then a 201
    /// carrying every field a driver needs is a [`SessionStart`], anything else
    /// one line naming what was wrong.
    ///
    /// # Errors
    /// No response within `timeout`, a status other than 201, or a field
    /// missing or empty.
    pub fn start_acp_session(
        &self,
        topic: &str,
        agent: &str,
        energy: u8,
        timeout: Duration,
        record: impl FnOnce(&str),
    ) -> Result<SessionStart, StartSessionError> {
        // A learner's study session: the study persona, as the Dashboard starts one.
        let body = json!({"topic": topic, "agent": agent, "transport": "acp", "energy": energy,
                          "purpose": "study"});
        let resp = http::request(
            &self.addr,
            "POST",
            "/api/session/start",
            Some(&body),
            timeout,
        )
        .map_err(StartSessionError::Http)?;
        record(&resp.text);
        if resp.status != 201 {
            return Err(StartSessionError::Status {
                status: resp.status,
                body: resp.text.clone(),
            });
        }
        let field = |name: &'static str| {
            resp.result()[name]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| StartSessionError::MissingField {
                    name,
                    body: resp.text.clone(),
                })
        };
        Ok(SessionStart {
            id: field("study_session_id")?,
            ws_url: field("ws_url")?,
            persona: field("persona_text")?,
            persona_hash: field("persona_hash")?,
            body: resp.result().clone(),
        })
    }

    /// Starts the server in `scratch` with `extra` variables added to its env.
    ///
    /// # Errors
    /// [`WebServerError`] when it cannot start or prints no URL in time.
    pub fn start(
        scratch: &Scratch,
        studyloop: &Path,
        extra: &[(OsString, OsString)],
    ) -> Result<Self, WebServerError> {
        let mut cmd = scratch.command(studyloop);
        cmd.args(["web", "--port", "0"])
            .envs(extra.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = scratch
            .spawn(&mut cmd)
            .map_err(|source| WebServerError::Spawn {
                program: studyloop.display().to_string(),
                source,
            })?;
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            let out = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if let Some((addr, token)) = console_token::from_listening_line(&line) {
                        console_token::record(&addr, &token);
                        let _ = tx.send(addr);
                    }
                    push(&out, &line);
                }
            });
        }
        if let Some(mut stderr) = child.stderr.take() {
            let out = output.clone();
            std::thread::spawn(move || {
                let mut buf = [0_u8; 2048];
                while let Ok(n @ 1..) = stderr.read(&mut buf) {
                    push(&out, &String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let mut server = Self {
            child,
            addr: String::new(),
            binary: studyloop.to_owned(),
            output,
        };
        match rx.recv_timeout(START_TIMEOUT) {
            Ok(addr) => {
                server.addr = addr;
                Ok(server)
            }
            Err(_) => {
                server.stop(Duration::from_secs(2));
                Err(WebServerError::NoUrl {
                    waited: START_TIMEOUT,
                    output: server.output(),
                })
            }
        }
    }

    /// The server's pid, which leads its process group.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the server printed so far (stdout and stderr interleaved).
    #[must_use]
    pub fn output(&self) -> String {
        self.output.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// SIGTERM to the server's group, SIGKILL after `grace`; its exit code.
    pub fn stop(&mut self, grace: Duration) -> Option<i32> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return status.code();
        }
        let group = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw);
        if let Some(g) = group {
            let _ = kill_process_group(g, Signal::TERM);
        }
        let until = Instant::now() + grace;
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(g) = group {
            let _ = kill_process_group(g, Signal::KILL);
        }
        self.child.wait().ok().and_then(|s| s.code())
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(5));
        console_token::forget(&self.addr);
    }
}

fn push(out: &Mutex<String>, text: &str) {
    if let Ok(mut s) = out.lock() {
        s.push_str(text);
        if !text.ends_with('\n') {
            s.push('\n');
        }
        // Keep the last 64 KB: enough to diagnose, bounded for the bundle.
        if s.len() > 65_536 {
            let cut = s.len() - 65_536;
            let cut = (cut..s.len())
                .find(|i| s.is_char_boundary(*i))
                .unwrap_or(cut);
            s.drain(..cut);
        }
    }
}
