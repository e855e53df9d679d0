//! Errors and skip reasons at the actor boundary: a [`SkipReason`] means "not
//! configured here, skip by name"; an [`ActorError`] means "configured wrongly,
//! fail loudly" (a malformed setting is reported, never ignored).

use std::fmt;
use std::path::PathBuf;

use crate::kind::ActorKind;
use crate::llm::LlmError;

/// Why a backend cannot run in this environment (a requirement is unmet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// Settings that are unset or blank.
    MissingSettings {
        /// The backend that needs them.
        backend: ActorKind,
        /// The variables, in the order the backend reads them.
        vars: Vec<&'static str>,
    },
    /// A program that is not on the environment's `PATH`.
    MissingProgram {
        /// The backend that needs it.
        backend: ActorKind,
        /// The program name.
        program: &'static str,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingSettings { backend, vars } => write!(
                f,
                "the {backend} actor needs {} (unset or blank); set {} to run it",
                vars.join(" and "),
                if vars.len() == 1 { "it" } else { "them" }
            ),
            Self::MissingProgram { backend, program } => write!(
                f,
                "the {backend} actor needs `{program}` on PATH, and it was not found; install {program}"
            ),
        }
    }
}

/// A backend that is configured wrongly or failed to start.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    /// Building a backend whose requirements are unmet (ask `available` first).
    #[error("cannot build the actor: {0}")]
    Unavailable(SkipReason),
    /// A setting has a value the backend cannot use.
    #[error("{var}={value:?} is invalid: {expected}")]
    InvalidSetting {
        /// The variable.
        var: &'static str,
        /// The value as given (never a secret).
        value: String,
        /// What is accepted, and the fix.
        expected: String,
    },
    /// A provider slug that is not in the profile table.
    #[error(
        "unknown direct provider {value:?}: supported providers are {supported} \
         (set STUDYLOOP_ACC_DIRECT_PROVIDER to one of them)"
    )]
    UnknownProvider {
        /// The slug given.
        value: String,
        /// The supported slugs.
        supported: String,
    },
    /// A known provider whose adapter the direct actor cannot speak.
    #[error(
        "direct provider {slug:?} uses the {adapter} adapter, which the direct actor does not \
         support; supported providers are {supported} (set STUDYLOOP_ACC_DIRECT_PROVIDER to one of them)"
    )]
    UnsupportedProvider {
        /// The slug given.
        slug: String,
        /// Its adapter.
        adapter: &'static str,
        /// The supported slugs.
        supported: String,
    },
    /// A model id not in the provider's curated list.
    #[error(
        "unknown model {value:?} for direct provider {provider}: curated models are {known} \
         (set STUDYLOOP_ACC_DIRECT_MODEL to one of them, or unset it for the cheapest)"
    )]
    UnknownModel {
        /// The provider slug.
        provider: &'static str,
        /// The model given.
        value: String,
        /// The curated ids.
        known: String,
    },
    /// The scripted actor was asked for without a turn script.
    #[error(
        "the scripted actor needs a turn script; load one and pass it in ActorOptions::turn_script"
    )]
    NoTurnScript,
    /// The harness actor was asked for without a socket directory.
    #[error(
        "the harness actor needs its own tmux socket directory; pass ActorOptions::harness_socket_dir \
         (a short private dir under /tmp)"
    )]
    NoSocketDir,
    /// The tmux socket path would not fit in `sockaddr_un.sun_path`.
    #[error(
        "tmux socket path {path} is {len} bytes, over the AF_UNIX limit of {limit} bytes \
         (sun_path is {sun_path} bytes including the terminating NUL); use a shorter socket \
         directory under /tmp, such as /tmp/sl-act-XXXXXX"
    )]
    SocketPathTooLong {
        /// The socket path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
        /// The longest path that fits.
        limit: usize,
        /// The portable `sun_path` size.
        sun_path: usize,
    },
    /// The HTTP client could not be built.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The harness actor's tmux could not be prepared.
    #[error("the harness actor could not start: {0}")]
    Harness(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_reasons_name_the_variables() {
        let r = SkipReason::MissingSettings {
            backend: ActorKind::Gateway,
            vars: vec!["LITELLM_API_KEY", "STUDYLOOP_ACC_GATEWAY_MODEL"],
        };
        assert_eq!(
            r.to_string(),
            "the gateway actor needs LITELLM_API_KEY and STUDYLOOP_ACC_GATEWAY_MODEL (unset or blank); set them to run it"
        );
        let r = SkipReason::MissingProgram {
            backend: ActorKind::Harness,
            program: "tmux",
        };
        assert!(r.to_string().contains("`tmux` on PATH"));
    }
}
