//! The direct backend's provider profiles (base URL, key variable, curated
//! models with the cheapest as default) and its settings.
//!
//! Only `openai_compat` and `anthropic_compat` adapters are spoken; bedrock and
//! ollama are known rows so that choosing one is a clear "unsupported" error
//! rather than an "unknown" one. The base URL can be overridden by the caller
//! (tests point it at the stub provider); no env var does that, so a key is only
//! ever sent to the vendor its profile names unless code says otherwise.

use crate::env::{self, EnvSource, setting};
use crate::error::{ActorError, SkipReason};
use crate::gateway::validate_base_url;
use crate::kind::ActorKind;
use crate::llm::{ApiKey, Endpoint, Wire};

/// How a profile's API is spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// OpenAI Chat Completions.
    OpenAiCompat,
    /// Anthropic Messages.
    AnthropicCompat,
    /// AWS Bedrock (not supported by the direct actor).
    Bedrock,
    /// Ollama's native API (not supported by the direct actor).
    Ollama,
}

impl Adapter {
    /// The adapter's name as the profile table writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiCompat => "openai_compat",
            Self::AnthropicCompat => "anthropic_compat",
            Self::Bedrock => "bedrock",
            Self::Ollama => "ollama",
        }
    }

    fn supported(self) -> bool {
        matches!(self, Self::OpenAiCompat | Self::AnthropicCompat)
    }
}

/// A model's price band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostTier {
    /// Cheapest; the default tier.
    Cheap,
    /// Mid-priced.
    Balanced,
    /// Most expensive.
    Premium,
}

/// One curated model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelEntry {
    /// The id sent as `model`.
    pub id: &'static str,
    /// Its price band.
    pub tier: CostTier,
}

/// One vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// `STUDYLOOP_ACC_DIRECT_PROVIDER` value.
    pub slug: &'static str,
    /// Wire protocol.
    pub adapter: Adapter,
    /// Vendor base URL.
    pub base_url: &'static str,
    /// The variable holding the key.
    pub auth_env: &'static str,
    /// Curated models, in order.
    pub models: &'static [ModelEntry],
}

impl Profile {
    /// The first cheap model, else the first.
    pub fn default_model(&self) -> &'static ModelEntry {
        let models = self.models;
        models
            .iter()
            .find(|m| m.tier == CostTier::Cheap)
            .unwrap_or(&models[0])
    }
}

const fn m(id: &'static str, tier: CostTier) -> ModelEntry {
    ModelEntry { id, tier }
}

use CostTier::{Balanced, Cheap, Premium};

/// Every known provider. The first four are the supported ones.
pub(crate) const PROFILES: &[Profile] = &[
    Profile {
        slug: "openai",
        adapter: Adapter::OpenAiCompat,
        base_url: "https://api.openai.com/v1",
        auth_env: env::OPENAI_API_KEY,
        models: &[
            m("gpt-4o-mini", Cheap),
            m("gpt-4o", Balanced),
            m("o3-mini", Premium),
        ],
    },
    Profile {
        slug: "openrouter",
        adapter: Adapter::OpenAiCompat,
        base_url: "https://openrouter.ai/api/v1",
        auth_env: env::OPENROUTER_API_KEY,
        models: &[
            m("anthropic/claude-haiku-4-5", Cheap),
            m("anthropic/claude-sonnet-4-6", Balanced),
            m("google/gemini-3.5-flash", Cheap),
            m("qwen/qwq-32b-preview", Balanced),
        ],
    },
    Profile {
        slug: "gemini",
        adapter: Adapter::OpenAiCompat,
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        auth_env: env::GEMINI_API_KEY,
        models: &[
            m("gemini-3.5-flash", Cheap),
            m("gemini-3.1-flash-lite", Cheap),
            m("gemini-3.1-pro-preview", Balanced),
        ],
    },
    Profile {
        slug: "anthropic",
        adapter: Adapter::AnthropicCompat,
        base_url: "https://api.anthropic.com",
        auth_env: env::ANTHROPIC_API_KEY,
        models: &[
            m("claude-haiku-4-5", Cheap),
            m("claude-sonnet-4-6", Balanced),
            m("claude-opus-4-7", Premium),
        ],
    },
    Profile {
        slug: "bedrock",
        adapter: Adapter::Bedrock,
        base_url: "",
        auth_env: "AWS_PROFILE",
        models: &[m("us.anthropic.claude-haiku-4-5-v1:0", Cheap)],
    },
    Profile {
        slug: "ollama",
        adapter: Adapter::Ollama,
        base_url: "http://localhost:11434",
        auth_env: "",
        models: &[m("qwen2.5:7b", Cheap), m("llama3.2:3b", Cheap)],
    },
];

/// The provider used when `STUDYLOOP_ACC_DIRECT_PROVIDER` is unset.
pub(crate) const DEFAULT_PROVIDER: &str = "openai";

fn supported_list() -> String {
    PROFILES
        .iter()
        .filter(|p| p.adapter.supported())
        .map(|p| p.slug)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The supported profile for `slug`; unknown and unsupported slugs are errors
/// naming the supported set.
pub fn profile(slug: &str) -> Result<&'static Profile, ActorError> {
    let found =
        PROFILES
            .iter()
            .find(|p| p.slug == slug)
            .ok_or_else(|| ActorError::UnknownProvider {
                value: slug.to_owned(),
                supported: supported_list(),
            })?;
    if !found.adapter.supported() {
        return Err(ActorError::UnsupportedProvider {
            slug: slug.to_owned(),
            adapter: found.adapter.as_str(),
            supported: supported_list(),
        });
    }
    Ok(found)
}

/// The selected profile and model, without the key (for availability checks).
pub fn selection(
    env: &(impl EnvSource + ?Sized),
) -> Result<(&'static Profile, &'static str), ActorError> {
    let slug = setting(env, env::STUDYLOOP_ACC_DIRECT_PROVIDER)
        .unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
    let profile = profile(&slug)?;
    let model = match setting(env, env::STUDYLOOP_ACC_DIRECT_MODEL) {
        None => profile.default_model().id,
        Some(id) => profile
            .models
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.id)
            .ok_or_else(|| ActorError::UnknownModel {
                provider: profile.slug,
                value: id,
                known: profile
                    .models
                    .iter()
                    .map(|m| m.id)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?,
    };
    Ok((profile, model))
}

/// Where the direct actor sends its requests.
#[derive(Debug, Clone)]
pub struct DirectSettings {
    /// The provider profile.
    pub profile: &'static Profile,
    /// The model id.
    pub model: &'static str,
    /// The vendor key.
    pub api_key: ApiKey,
    /// The profile's base URL unless overridden.
    pub base_url: String,
}

impl DirectSettings {
    /// Reads and validates the settings (provider, model, then the profile's key).
    pub fn from_env(env: &(impl EnvSource + ?Sized)) -> Result<Self, ActorError> {
        let (profile, model) = selection(env)?;
        let key = setting(env, profile.auth_env).ok_or_else(|| {
            ActorError::Unavailable(SkipReason::MissingSettings {
                backend: ActorKind::Direct,
                vars: vec![profile.auth_env],
            })
        })?;
        Ok(Self {
            profile,
            model,
            api_key: ApiKey::new(key),
            base_url: profile.base_url.to_owned(),
        })
    }

    /// Sends to `base_url` instead of the vendor (tests: the stub provider).
    pub fn with_base_url(mut self, base_url: &str) -> Result<Self, ActorError> {
        validate_base_url("direct base URL override", base_url)?;
        base_url.clone_into(&mut self.base_url);
        Ok(self)
    }

    /// The chat endpoint.
    pub fn endpoint(&self) -> Endpoint {
        let wire = match self.profile.adapter {
            Adapter::AnthropicCompat => Wire::AnthropicCompat,
            // OpenAI itself wants the current parameter name (its reasoning
            // models reject `max_tokens`); compatible vendors want the old one.
            _ => Wire::OpenAiCompat {
                max_completion_tokens: self.profile.slug == "openai",
            },
        };
        Endpoint {
            wire,
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            model: self.model.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_openai_and_its_cheapest_model() {
        let env: &[(&str, &str)] = &[("OPENAI_API_KEY", "sk")];
        let s = DirectSettings::from_env(env).unwrap();
        assert_eq!(
            (s.profile.slug, s.model, s.base_url.as_str()),
            ("openai", "gpt-4o-mini", "https://api.openai.com/v1")
        );
        assert_eq!(
            s.endpoint().wire,
            Wire::OpenAiCompat {
                max_completion_tokens: true
            }
        );
    }

    #[test]
    fn every_supported_profile_has_a_cheap_default() {
        for slug in ["openai", "openrouter", "gemini", "anthropic"] {
            let p = profile(slug).unwrap();
            assert_eq!(p.default_model().tier, CostTier::Cheap, "{slug}");
        }
        assert_eq!(
            profile("anthropic").unwrap().default_model().id,
            "claude-haiku-4-5"
        );
    }

    #[test]
    fn unknown_and_unsupported_providers_name_the_supported_set() {
        let err = profile("bedrock").unwrap_err().to_string();
        assert!(
            err.contains("bedrock adapter")
                && err.contains("openai, openrouter, gemini, anthropic"),
            "{err}"
        );
        assert!(
            profile("ollama")
                .unwrap_err()
                .to_string()
                .contains("ollama adapter")
        );
        let err = profile("openia").unwrap_err().to_string();
        assert!(err.contains("unknown direct provider \"openia\""), "{err}");
    }

    #[test]
    fn unknown_model_and_missing_key_are_reported() {
        let env: &[(&str, &str)] = &[
            ("STUDYLOOP_ACC_DIRECT_PROVIDER", "anthropic"),
            ("STUDYLOOP_ACC_DIRECT_MODEL", "gpt-4o"),
        ];
        let err = DirectSettings::from_env(env).unwrap_err().to_string();
        assert!(
            err.contains("unknown model \"gpt-4o\"") && err.contains("claude-haiku-4-5"),
            "{err}"
        );
        let env: &[(&str, &str)] = &[
            ("STUDYLOOP_ACC_DIRECT_PROVIDER", " anthropic "),
            ("ANTHROPIC_API_KEY", " "),
        ];
        let err = DirectSettings::from_env(env).unwrap_err().to_string();
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    }
}
