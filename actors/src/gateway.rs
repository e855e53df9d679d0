//! The gateway backend's settings: a LiteLLM proxy (`LITELLM_BASE_URL`, default
//! `http://127.0.0.1:4000`), its key (`LITELLM_API_KEY`) and a model alias
//! (`STUDYLOOP_ACC_GATEWAY_MODEL`), spoken to as plain Chat Completions.
//!
//! Not a provider profile: the proxy URL is per machine, so it comes from the env.

use crate::env::{self, EnvSource, setting};
use crate::error::{ActorError, SkipReason};
use crate::kind::ActorKind;
use crate::llm::{ApiKey, Endpoint, Wire};

/// Where the gateway actor sends its requests.
#[derive(Debug, Clone)]
pub struct GatewaySettings {
    /// Proxy base URL.
    pub base_url: String,
    /// Proxy key.
    pub api_key: ApiKey,
    /// Model alias.
    pub model: String,
}

impl GatewaySettings {
    /// The required variables that are unset or blank, key first.
    pub fn missing(env: &(impl EnvSource + ?Sized)) -> Vec<&'static str> {
        [env::LITELLM_API_KEY, env::STUDYLOOP_ACC_GATEWAY_MODEL]
            .into_iter()
            .filter(|name| setting(env, name).is_none())
            .collect()
    }

    /// Reads and validates the settings.
    pub fn from_env(env: &(impl EnvSource + ?Sized)) -> Result<Self, ActorError> {
        let base_url = setting(env, env::LITELLM_BASE_URL)
            .unwrap_or_else(|| env::DEFAULT_LITELLM_BASE_URL.to_owned());
        validate_base_url(env::LITELLM_BASE_URL, &base_url)?;
        let missing = Self::missing(env);
        let (Some(key), Some(model)) = (
            setting(env, env::LITELLM_API_KEY),
            setting(env, env::STUDYLOOP_ACC_GATEWAY_MODEL),
        ) else {
            return Err(ActorError::Unavailable(SkipReason::MissingSettings {
                backend: ActorKind::Gateway,
                vars: missing,
            }));
        };
        Ok(Self {
            base_url,
            api_key: ApiKey::new(key),
            model,
        })
    }

    /// The chat endpoint.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            wire: Wire::OpenAiCompat {
                max_completion_tokens: false,
            },
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            model: self.model.clone(),
        }
    }
}

/// An absolute `http://` or `https://` URL with a host, or an error naming `var`.
pub(crate) fn validate_base_url(var: &'static str, value: &str) -> Result<(), ActorError> {
    let ok = value.split_once("://").is_some_and(|(scheme, rest)| {
        matches!(scheme, "http" | "https") && !rest.trim_start_matches('/').is_empty()
    });
    if ok {
        Ok(())
    } else {
        Err(ActorError::InvalidSetting {
            var,
            value: value.to_owned(),
            expected: "expected an absolute http:// or https:// URL such as http://127.0.0.1:4000"
                .to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_the_base_url_and_trims_values() {
        let env: &[(&str, &str)] = &[
            ("LITELLM_API_KEY", " sk-1 "),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", "alias\n"),
        ];
        let s = GatewaySettings::from_env(env).unwrap();
        assert_eq!(
            (s.base_url.as_str(), s.model.as_str()),
            ("http://127.0.0.1:4000", "alias")
        );
        assert_eq!(s.api_key, ApiKey::new("sk-1"));
    }

    #[test]
    fn blank_values_are_missing_key_first() {
        let env: &[(&str, &str)] = &[
            ("LITELLM_API_KEY", "   "),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", ""),
        ];
        assert_eq!(
            GatewaySettings::missing(env),
            ["LITELLM_API_KEY", "STUDYLOOP_ACC_GATEWAY_MODEL"]
        );
        let err = GatewaySettings::from_env(env).unwrap_err().to_string();
        assert!(
            err.contains("LITELLM_API_KEY and STUDYLOOP_ACC_GATEWAY_MODEL"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_base_url_is_an_error_naming_the_variable() {
        let env: &[(&str, &str)] = &[("LITELLM_BASE_URL", "127.0.0.1:4000")];
        let err = GatewaySettings::from_env(env).unwrap_err().to_string();
        assert!(
            err.starts_with("LITELLM_BASE_URL=\"127.0.0.1:4000\" is invalid"),
            "{err}"
        );
    }
}
