//! The environment variables the actors read, as named constants, and the one
//! way they are read: through an [`EnvSource`] the caller passes explicitly (a
//! scratch env, a test map, or [`ProcessEnv`]), never by reaching into the
//! process environment behind the caller's back.
//!
//! Every value is trimmed; a blank value counts as unset (so a whitespace-only
//! key is "missing" both when checking availability and when building).

use std::collections::{BTreeMap, HashMap};

use crate::kind::EnvVarDoc;

/// LiteLLM proxy key (the gateway actor's bearer token).
pub const LITELLM_API_KEY: &str = "LITELLM_API_KEY";
/// LiteLLM proxy base URL.
pub const LITELLM_BASE_URL: &str = "LITELLM_BASE_URL";
/// The model alias the gateway actor asks the proxy for.
pub const STUDYLOOP_ACC_GATEWAY_MODEL: &str = "STUDYLOOP_ACC_GATEWAY_MODEL";
/// The direct actor's provider profile slug.
pub const STUDYLOOP_ACC_DIRECT_PROVIDER: &str = "STUDYLOOP_ACC_DIRECT_PROVIDER";
/// The direct actor's model id (one of the profile's curated models).
pub const STUDYLOOP_ACC_DIRECT_MODEL: &str = "STUDYLOOP_ACC_DIRECT_MODEL";
/// The shell command that starts the harness actor's second harness.
pub const STUDYLOOP_ACC_HARNESS_ACTOR_CMD: &str = "STUDYLOOP_ACC_HARNESS_ACTOR_CMD";
/// Cassette mode for model traffic: off, `record` or `replay` (`llm::cassette`).
pub const STUDYLOOP_ACC_CASSETTE: &str = "STUDYLOOP_ACC_CASSETTE";
/// The cassette file (absolute path); required by `replay`.
pub const STUDYLOOP_ACC_CASSETTE_FILE: &str = "STUDYLOOP_ACC_CASSETTE_FILE";
/// OpenAI key (direct profile `openai`).
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// OpenRouter key (direct profile `openrouter`).
pub const OPENROUTER_API_KEY: &str = "OPENROUTER_API_KEY";
/// Gemini key (direct profile `gemini`).
pub(crate) const GEMINI_API_KEY: &str = "GEMINI_API_KEY";
/// Anthropic key (direct profile `anthropic`).
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";

/// The gateway's base URL when `LITELLM_BASE_URL` is unset (LiteLLM's default port).
pub const DEFAULT_LITELLM_BASE_URL: &str = "http://127.0.0.1:4000";

/// Every variable this crate reads (the README env table is checked against it).
pub const ENV_VARS: &[EnvVarDoc] = &[
    EnvVarDoc {
        name: LITELLM_API_KEY,
        meaning: "Gateway actor: key for the LiteLLM proxy (sent as a bearer token)",
        default: None,
    },
    EnvVarDoc {
        name: LITELLM_BASE_URL,
        meaning: "Gateway actor: LiteLLM proxy base URL",
        default: Some(DEFAULT_LITELLM_BASE_URL),
    },
    EnvVarDoc {
        name: STUDYLOOP_ACC_GATEWAY_MODEL,
        meaning: "Gateway actor: model alias to request from the proxy",
        default: None,
    },
    EnvVarDoc {
        name: STUDYLOOP_ACC_DIRECT_PROVIDER,
        meaning: "Direct actor: provider profile (openai, openrouter, gemini, anthropic)",
        default: Some("openai"),
    },
    EnvVarDoc {
        name: STUDYLOOP_ACC_DIRECT_MODEL,
        meaning: "Direct actor: model id, one of the profile's curated models",
        default: Some("the profile's cheapest curated model"),
    },
    EnvVarDoc {
        name: STUDYLOOP_ACC_HARNESS_ACTOR_CMD,
        meaning: "Harness actor: shell command starting the second harness in its own tmux",
        default: None,
    },
    EnvVarDoc {
        name: STUDYLOOP_ACC_CASSETTE,
        meaning: "Record or replay model traffic (gateway and direct learners, council seats): `record` appends every answered request to a redacted cassette, `replay` answers only from one and never calls a model (a miss fails naming the request hash); any other value fails the run",
        default: Some("unset: off"),
    },
    EnvVarDoc {
        name: STUDYLOOP_ACC_CASSETTE_FILE,
        meaning: "The cassette (absolute path): where `record` appends, what `replay` reads (required by replay)",
        default: Some("record: `<run dir>/cassette.jsonl`"),
    },
    EnvVarDoc {
        name: OPENAI_API_KEY,
        meaning: "Direct actor, provider openai: API key",
        default: None,
    },
    EnvVarDoc {
        name: OPENROUTER_API_KEY,
        meaning: "Direct actor, provider openrouter: API key",
        default: None,
    },
    EnvVarDoc {
        name: GEMINI_API_KEY,
        meaning: "Direct actor, provider gemini: API key",
        default: None,
    },
    EnvVarDoc {
        name: ANTHROPIC_API_KEY,
        meaning: "Direct actor, provider anthropic: API key",
        default: None,
    },
];

/// Somewhere to look variables up. Implemented for string maps and
/// [`ProcessEnv`]; the acceptance crate implements it for its scratch `Env`.
pub trait EnvSource {
    /// The raw value of `name`, if set (and valid UTF-8).
    fn var(&self, name: &str) -> Option<String>;
}

impl EnvSource for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl EnvSource for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl EnvSource for [(&str, &str)] {
    fn var(&self, name: &str) -> Option<String> {
        self.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    }
}

/// The real process environment, for binaries that were handed no other.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// The trimmed value of `name`, or `None` when unset or blank.
pub fn setting(env: &(impl EnvSource + ?Sized), name: &str) -> Option<String> {
    env.var(name)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_values_count_as_unset_and_values_are_trimmed() {
        let env: &[(&str, &str)] = &[("A", "  x "), ("B", " \t\n"), ("C", "")];
        assert_eq!(setting(env, "A").as_deref(), Some("x"));
        assert_eq!(setting(env, "B"), None);
        assert_eq!(setting(env, "C"), None);
        assert_eq!(setting(env, "D"), None);
    }

    #[test]
    fn env_vars_are_unique_and_documented() {
        let mut names: Vec<_> = ENV_VARS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ENV_VARS.len());
        assert!(ENV_VARS.iter().all(|d| !d.meaning.is_empty()));
    }
}
