//! The stub provider's configuration (reply mode, faults, failing status) and its error type; `server::run` serves it.

use std::path::PathBuf;
use std::time::Duration;

use crate::log::LogError;
use crate::roles::{Role, RolesScript};
use crate::tool_script::ToolScript;

/// The status an injected failure answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailStatus {
    /// 401 with the vendor's authentication error body: what a harness whose key is
    /// wrong, expired or revoked meets (the "not logged in" drill).
    Unauthorized,
    /// 429 with the vendor's rate-limit error body.
    TooManyRequests,
    /// 500 with the vendor's server-error body.
    InternalServerError,
}

impl FailStatus {
    /// Parses `401`, `429` or `500`.
    pub fn from_code(code: u16) -> Result<Self, ProviderError> {
        match code {
            401 => Ok(Self::Unauthorized),
            429 => Ok(Self::TooManyRequests),
            500 => Ok(Self::InternalServerError),
            other => Err(ProviderError::Config(format!(
                "--fail-status {other} is not supported: expected 401, 429 or 500"
            ))),
        }
    }

    /// The HTTP status code.
    pub fn code(self) -> u16 {
        match self {
            Self::Unauthorized => 401,
            Self::TooManyRequests => 429,
            Self::InternalServerError => 500,
        }
    }
}

/// What the mentor reply looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyMode {
    /// One line, `MENTOR-REPLY <n> <nonce>: <first 8 words> [persona=…]`
    /// (`crate::reply::mentor_reply`), streamed about three words per event:
    /// what unit tests assert on exactly.
    #[default]
    Echo,
    /// 5–40 lines of Markdown behind the marker line
    /// (`crate::realistic::realistic_reply`), streamed in uneven chunks that
    /// split words, lines and multi-byte characters' neighbours: what lanes
    /// and journeys meet, as a real model would answer.
    Realistic,
}

impl ReplyMode {
    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::Realistic => "realistic",
        }
    }
}

impl std::str::FromStr for ReplyMode {
    type Err = ProviderError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "echo" => Ok(Self::Echo),
            "realistic" => Ok(Self::Realistic),
            other => Err(ProviderError::Config(format!(
                "--replies {other:?} is not a reply mode: expected echo or realistic"
            ))),
        }
    }
}

/// Injected faults. They apply to model requests (chat, responses, messages;
/// not probes, model lists or token counts) once `fail_after` healthy model
/// requests have been answered, and to every model request after that.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Answer with this status and the vendor's error body.
    pub fail_status: Option<FailStatus>,
    /// Healthy model requests before faults start (0 = from the first).
    pub fail_after: u64,
    /// Wait this long before sending anything (a stalled upstream).
    pub stall: Option<Duration>,
    /// Cut the response after this many SSE events (streams) or body bytes
    /// (non-stream), without the terminal event, by aborting the connection.
    pub truncate_after: Option<u64>,
    /// Read before every model request: while this file exists, its one line is
    /// that request's fault ([`Faults::from_line`]) instead of the flags', so a
    /// test can switch faults on and off mid-conversation.
    pub fault_file: Option<PathBuf>,
}

impl Faults {
    fn any(&self) -> bool {
        self.fail_status.is_some()
            || self.stall.is_some()
            || self.truncate_after.is_some()
            || self.fault_file.is_some()
    }

    /// One fault-file line: `401`, `429`, `500`, `stall <ms>` or `truncate <n>`.
    ///
    /// # Errors
    /// The line and the accepted forms.
    pub fn from_line(line: &str) -> Result<Self, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |w: &str| w.parse::<u64>().ok().filter(|n| *n > 0);
        let fault = match words.as_slice() {
            ["401"] => Some(Self {
                fail_status: Some(FailStatus::Unauthorized),
                ..Self::default()
            }),
            ["429"] => Some(Self {
                fail_status: Some(FailStatus::TooManyRequests),
                ..Self::default()
            }),
            ["500"] => Some(Self {
                fail_status: Some(FailStatus::InternalServerError),
                ..Self::default()
            }),
            ["stall", ms] => number(ms).map(|ms| Self {
                stall: Some(Duration::from_millis(ms)),
                ..Self::default()
            }),
            ["truncate", n] => number(n).map(|n| Self {
                truncate_after: Some(n),
                ..Self::default()
            }),
            _ => None,
        };
        fault.ok_or_else(|| {
            format!(
                "fault file line {:?} is not a fault: expected `401`, `429`, `500`, `stall <ms>` or `truncate <n>` (n, ms > 0)",
                line.chars().take(80).collect::<String>()
            )
        })
    }
}

/// Everything the server needs; built from the CLI flags.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Where to write the bound port (atomically, `<port>\n`, 0600).
    pub port_file: Option<PathBuf>,
    /// JSON-lines request log (`crate::LogRecord`).
    pub log: Option<PathBuf>,
    /// Run seed for the reply nonce.
    pub seed: u64,
    /// The mentor reply's shape.
    pub replies: ReplyMode,
    /// Canned replies per role.
    pub script: Option<RolesScript>,
    /// Which role this instance plays.
    pub role: Role,
    /// Pause between SSE events.
    pub delay: Duration,
    /// When set, requests must carry it (`Authorization: Bearer`, or `x-api-key`
    /// on Anthropic paths); others get 401 in the vendor's error shape.
    pub api_key: Option<String>,
    /// Report no usage in any response (a backend whose usage is unobservable).
    pub omit_usage: bool,
    /// Injected faults.
    pub faults: Faults,
    /// Scripted tool calls (`crate::tool_script`).
    pub tools: Option<ToolScript>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            port: 0,
            port_file: None,
            log: None,
            seed: 0,
            replies: ReplyMode::Echo,
            script: None,
            role: Role::Mentor,
            delay: Duration::ZERO,
            api_key: None,
            omit_usage: false,
            faults: Faults::default(),
            tools: None,
        }
    }
}

impl ProviderConfig {
    /// Rejects combinations that cannot mean what the operator wanted.
    pub fn validate(&self) -> Result<(), ProviderError> {
        if self.role != Role::Mentor && !self.script.as_ref().is_some_and(|s| s.has_role(self.role))
        {
            return Err(ProviderError::Config(format!(
                "--role {role} needs canned replies: pass --script roles.json with a \"{role}\" list",
                role = self.role
            )));
        }
        if self.faults.fail_after > 0 && !self.faults.any() {
            return Err(ProviderError::Config(
                "--fail-after needs a fault to delay: add --fail-status, --stall-ms, --truncate-after or --fault-file".to_owned(),
            ));
        }
        if self.api_key.as_deref().is_some_and(|k| k.trim().is_empty()) {
            return Err(ProviderError::Config(
                "--api-key is blank: pass a non-empty key or omit it".to_owned(),
            ));
        }
        Ok(())
    }
}

/// Why the server could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// A flag combination or value is invalid.
    #[error("{0}")]
    Config(String),
    /// Binding 127.0.0.1 failed.
    #[error("cannot listen on 127.0.0.1:{port}: {source} (pass --port 0 for a free port)")]
    Bind {
        /// The requested port.
        port: u16,
        /// The OS error.
        source: std::io::Error,
    },
    /// The port file could not be written.
    #[error("cannot write the port file {path}: {source} (pass a writable --port-file path)")]
    PortFile {
        /// The path given.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The request log could not be opened.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The async runtime or the server failed.
    #[error("the stub provider's server failed: {0}")]
    Serve(std::io::Error),
}
