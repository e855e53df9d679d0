//! The pinned council roster (`council_v2.yaml`; v1 stays registered): named councils,
//! each a list of seats (id, backend, model) with the judge budget for grading one bundle.
//!
//! This module loads and validates the roster and turns a seat into an endpoint, or into
//! a named reason it cannot be reached (a missing credential is "absent", never a
//! failure). It does not send anything.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use studyloop_actors::EnvSource;
use studyloop_actors::direct::{self, DirectSettings};
use studyloop_actors::env::{self as actor_env, setting};
use studyloop_actors::gateway::GatewaySettings;
use studyloop_actors::llm::{ApiKey, Endpoint, Wire};

use crate::pinned_yaml::{self, PinnedFileError};

/// The roster shipped with this crate.
pub const DEFAULT_COUNCIL_FILE: &str = "council_v2.yaml";
/// Its registry.
pub const DEFAULT_COUNCIL_REGISTRY: &str = "council_registry.json";
const DEFAULT_COUNCIL: &[u8] = include_bytes!("../../council_v2.yaml");
const DEFAULT_REGISTRY: &[u8] = include_bytes!("../../council_registry.json");

/// Where a seat's model is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// A vendor API through an actors provider profile.
    Direct,
    /// A model alias behind the operator's LiteLLM proxy.
    Gateway,
    /// The local stub provider (mechanics only).
    Stub,
}

impl Backend {
    /// The word used in the roster.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Gateway => "gateway",
            Self::Stub => "stub",
        }
    }
}

/// The wire a stub seat speaks (direct seats take it from their profile, gateway seats
/// always speak Chat Completions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StubWire {
    /// OpenAI-compatible Chat Completions.
    OpenaiCompat,
    /// Anthropic-compatible Messages.
    AnthropicCompat,
}

/// One council seat.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seat {
    /// Stable id, named in the arbitration.
    pub id: String,
    /// How the seat is reached.
    pub backend: Backend,
    /// The model id (direct: a curated model of the profile; gateway: your alias).
    pub model: String,
    /// Direct only: the provider profile slug.
    #[serde(default)]
    pub provider: Option<String>,
    /// Stub only: which wire to speak.
    #[serde(default)]
    pub wire: Option<StubWire>,
    /// Ask for output constrained to the reply's JSON schema (v2 on), in the dialect the
    /// seat's server understands. Absent: a plain request; the reply's JSON is checked
    /// afterwards either way.
    #[serde(default)]
    pub structured_output: Option<StructuredOutput>,
}

/// How a seat asks for structured output (`response_format` on Chat Completions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// OpenAI's `{type: json_schema, json_schema: {name, schema, strict: true}}`.
    JsonSchema,
    /// llama.cpp's server (llama-cpp-python 0.3): `{type: json_object, schema}`, enforced
    /// with a grammar; it refuses OpenAI's `json_schema` type (measured: a 422 that
    /// LiteLLM reports as a 500).
    JsonObjectSchema,
}

impl StructuredOutput {
    /// The `response_format` value for `schema` in this dialect.
    #[must_use]
    pub fn response_format(self, schema: serde_json::Value) -> serde_json::Value {
        match self {
            Self::JsonSchema => serde_json::json!({
                "type": "json_schema",
                "json_schema": {"name": "council_reply", "schema": schema, "strict": true},
            }),
            Self::JsonObjectSchema => serde_json::json!({"type": "json_object", "schema": schema}),
        }
    }
}

/// How much bundle text a council's prompt carries (v2 on; absent = the defaults in
/// [`crate::council::prompt`]). A small local model's context (8k tokens) holds the
/// rubric and a few thousand characters of evidence, not the 160k a vendor model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceLimits {
    /// The most characters taken from one evidence file.
    pub max_file_chars: usize,
    /// The most evidence characters in one prompt.
    pub max_total_chars: usize,
}

/// The judge budget for grading one bundle, across every seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeBudget {
    /// Requests allowed (one per seat; no retries).
    pub max_turns: u32,
    /// Output tokens allowed across all seats.
    pub max_output_tokens: u64,
}

/// One named council.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Council {
    /// The spend cap for grading one bundle.
    pub budget: JudgeBudget,
    /// The `max_tokens` of each seat's request (shrunk to what the budget has left).
    pub max_reply_tokens: u32,
    /// The whole-request timeout for each seat.
    pub request_timeout_secs: u64,
    /// The seats, in order.
    pub seats: Vec<Seat>,
    /// The prompt's evidence caps; `None` = the prompt module's defaults.
    #[serde(default)]
    pub evidence: Option<EvidenceLimits>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    #[expect(dead_code, reason = "read by the version probe before the pin check")]
    version: u32,
    councils: BTreeMap<String, Council>,
}

/// The loaded, verified roster.
#[derive(Debug, Clone)]
pub struct Roster {
    version: u32,
    sha256: String,
    councils: BTreeMap<String, Council>,
}

impl Roster {
    /// The roster shipped with this crate.
    ///
    /// # Errors
    /// As [`Roster::from_bytes`].
    pub fn load_default() -> Result<Self, PinnedFileError> {
        Self::from_bytes(
            DEFAULT_COUNCIL_FILE,
            DEFAULT_COUNCIL,
            DEFAULT_COUNCIL_REGISTRY,
            DEFAULT_REGISTRY,
        )
    }

    /// Parses and verifies a roster.
    ///
    /// # Errors
    /// [`PinnedFileError::Pin`] for an unregistered version or tampered bytes;
    /// [`PinnedFileError::Format`] for bad YAML or a seat that breaks a rule (duplicate
    /// id, unknown provider or model, a field its backend does not take, a budget of zero).
    pub fn from_bytes(
        file: &str,
        bytes: &[u8],
        registry: &str,
        registry_bytes: &[u8],
    ) -> Result<Self, PinnedFileError> {
        let loaded = pinned_yaml::load::<Doc>(file, bytes, registry, registry_bytes)?;
        let format = |detail: String| PinnedFileError::Format {
            file: file.to_owned(),
            detail,
        };
        if loaded.doc.councils.is_empty() {
            return Err(format(
                "`councils` is empty; declare at least one council".to_owned(),
            ));
        }
        for (name, council) in &loaded.doc.councils {
            validate(council).map_err(|d| format(format!("council `{name}`: {d}")))?;
        }
        Ok(Self {
            version: loaded.version,
            sha256: loaded.sha256,
            councils: loaded.doc.councils,
        })
    }

    /// The declared version.
    #[must_use]
    pub fn version(&self) -> u32 {
        self.version
    }
    /// The pinned sha256 (hex).
    #[must_use]
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The council named `name`.
    ///
    /// # Errors
    /// [`UnknownCouncil`] naming `name` and the known council names.
    pub fn council(&self, name: &str) -> Result<&Council, UnknownCouncil> {
        self.councils.get(name).ok_or_else(|| UnknownCouncil {
            name: name.to_owned(),
            known: self.councils.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }
}

/// A council name the pinned roster does not declare.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "no council named `{name}` in the pinned roster (known: {known}); name one of those, or add the council to a new roster version"
)]
pub struct UnknownCouncil {
    /// The name asked for.
    pub name: String,
    /// The roster's council names, comma-separated.
    pub known: String,
}

fn validate(council: &Council) -> Result<(), String> {
    if council.seats.is_empty() {
        return Err("`seats` is empty".to_owned());
    }
    if council.budget.max_turns == 0 || council.budget.max_output_tokens == 0 {
        return Err("`budget` caps must be at least 1".to_owned());
    }
    if council.max_reply_tokens == 0 || council.request_timeout_secs == 0 {
        return Err("`max_reply_tokens` and `request_timeout_secs` must be at least 1".to_owned());
    }
    if let Some(limits) = council.evidence
        && (limits.max_file_chars == 0 || limits.max_total_chars == 0)
    {
        return Err("`evidence` caps must be at least 1".to_owned());
    }
    let mut ids = BTreeSet::new();
    for seat in &council.seats {
        let id_ok = !seat.id.is_empty()
            && seat
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !id_ok {
            return Err(format!(
                "seat id `{}` must be lowercase letters, digits and `-`",
                seat.id
            ));
        }
        if !ids.insert(seat.id.as_str()) {
            return Err(format!("seat `{}` appears twice", seat.id));
        }
        if seat.model.trim().is_empty() {
            return Err(format!("seat `{}` has no model", seat.id));
        }
        match seat.backend {
            Backend::Direct => {
                let slug = seat
                    .provider
                    .as_deref()
                    .ok_or_else(|| format!("direct seat `{}` needs `provider`", seat.id))?;
                let profile =
                    direct::profile(slug).map_err(|e| format!("seat `{}`: {e}", seat.id))?;
                if !profile.models.iter().any(|m| m.id == seat.model) {
                    return Err(format!(
                        "seat `{}`: model `{}` is not curated for provider `{slug}` (known: {})",
                        seat.id,
                        seat.model,
                        profile
                            .models
                            .iter()
                            .map(|m| m.id)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                if seat.wire.is_some() {
                    return Err(format!(
                        "direct seat `{}` takes its wire from the provider; remove `wire`",
                        seat.id
                    ));
                }
            }
            Backend::Gateway | Backend::Stub => {
                if seat.provider.is_some() {
                    return Err(format!(
                        "{} seat `{}` takes no `provider`",
                        seat.backend.as_str(),
                        seat.id
                    ));
                }
                if seat.backend == Backend::Gateway && seat.wire.is_some() {
                    return Err(format!(
                        "gateway seat `{}` always speaks Chat Completions; remove `wire`",
                        seat.id
                    ));
                }
                if seat.backend == Backend::Stub && seat.structured_output.is_some() {
                    return Err(format!(
                        "stub seat `{}` answers from a script; remove `structured_output`",
                        seat.id
                    ));
                }
                if seat.backend == Backend::Stub && seat.wire.is_none() {
                    return Err(format!(
                        "stub seat `{}` needs `wire` (openai_compat or anthropic_compat)",
                        seat.id
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Where stub seats are reached in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubTarget {
    /// The stub provider's base URL (`http://127.0.0.1:<port>`).
    pub base_url: String,
    /// The key the stub expects, if it was started with `--api-key`.
    pub api_key: Option<String>,
}

/// Why a seat has no endpoint this run: it is recorded as absent, by name, never
/// asked. (Its message is the recorded reason.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatAbsent {
    /// The seat's provider is not one the direct backend knows.
    #[error("{0}")]
    Provider(String),
    /// The model is not in the provider's curated list.
    #[error("model `{model}` is not curated for `{provider}`")]
    Model {
        /// The seat's model id.
        model: String,
        /// The provider slug.
        provider: String,
    },
    /// The credential variable is not set in the environment passed in.
    #[error("{0} is unset")]
    Unset(&'static str),
    /// A stub seat, but the run gave no stub provider URL.
    #[error("no stub provider URL was given for this run (--stub-url)")]
    NoStubUrl,
}

impl Seat {
    /// The endpoint for this seat, or why it is absent (a missing credential or stub URL,
    /// by name). Keys come only from `env`, which the caller passes explicitly.
    ///
    /// # Errors
    /// [`SeatAbsent`] naming what is missing.
    pub fn endpoint(
        &self,
        env: &(impl EnvSource + ?Sized),
        stub: Option<&StubTarget>,
    ) -> Result<Endpoint, SeatAbsent> {
        match self.backend {
            Backend::Direct => {
                let slug = self.provider.as_deref().unwrap_or_default();
                let profile =
                    direct::profile(slug).map_err(|e| SeatAbsent::Provider(e.to_string()))?;
                let model = profile
                    .models
                    .iter()
                    .find(|m| m.id == self.model)
                    .map(|m| m.id)
                    .ok_or_else(|| SeatAbsent::Model {
                        model: self.model.clone(),
                        provider: slug.to_owned(),
                    })?;
                let key =
                    setting(env, profile.auth_env).ok_or(SeatAbsent::Unset(profile.auth_env))?;
                let settings = DirectSettings {
                    profile,
                    model,
                    api_key: ApiKey::new(key),
                    base_url: profile.base_url.to_owned(),
                };
                Ok(settings.endpoint())
            }
            Backend::Gateway => {
                let key = setting(env, actor_env::LITELLM_API_KEY)
                    .ok_or(SeatAbsent::Unset(actor_env::LITELLM_API_KEY))?;
                let base_url = setting(env, actor_env::LITELLM_BASE_URL)
                    .unwrap_or_else(|| actor_env::DEFAULT_LITELLM_BASE_URL.to_owned());
                Ok(GatewaySettings {
                    base_url,
                    api_key: ApiKey::new(key),
                    model: self.model.clone(),
                }
                .endpoint())
            }
            Backend::Stub => {
                let target = stub.ok_or(SeatAbsent::NoStubUrl)?;
                let wire = match self.wire {
                    Some(StubWire::AnthropicCompat) => Wire::AnthropicCompat,
                    _ => Wire::OpenAiCompat {
                        max_completion_tokens: false,
                    },
                };
                Ok(Endpoint {
                    wire,
                    base_url: target.base_url.clone(),
                    api_key: ApiKey::new(
                        target
                            .api_key
                            .clone()
                            .unwrap_or_else(|| "stub-key".to_owned()),
                    ),
                    model: self.model.clone(),
                })
            }
        }
    }
}
