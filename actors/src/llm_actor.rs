//! The gateway and direct backends: one [`LlmActor`] driving a model through a
//! [`ChatClient`] (LiteLLM proxy or a vendor API), with a curious-student system
//! prompt and a per-turn output cap.

use std::time::Duration;

use crate::conversation::{Actor, ClientLearner, Learning, PaneError};
use crate::direct::DirectSettings;
use crate::error::ActorError;
use crate::gateway::GatewaySettings;
use crate::kind::ActorKind;
use crate::llm::ChatClient;
use crate::llm::cassette::Tap;

/// The learner persona an LLM actor plays unless told otherwise.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a curious student working through a topic with a \
tutor. Reply to the tutor's latest message (or open the conversation) with one short, specific \
question or answer of one to three plain sentences. Stay in character: never mention being an AI, \
a model, or part of a test.";

/// Output tokens one learner turn may use (further capped by the budget).
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS_PER_TURN: u32 = 200;

/// How long one model request may take, connect to last byte.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Knobs shared by the LLM backends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmActorOptions {
    /// The learner's system prompt.
    pub system_prompt: String,
    /// The per-turn output cap sent as `max_tokens`.
    pub max_output_tokens_per_turn: u32,
    /// Per-request timeout.
    pub request_timeout: Duration,
}

impl Default for LlmActorOptions {
    fn default() -> Self {
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            max_output_tokens_per_turn: DEFAULT_MAX_OUTPUT_TOKENS_PER_TURN,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

/// A learner played by a model over HTTP.
#[derive(Debug)]
pub struct LlmActor {
    kind: ActorKind,
    client: ChatClient,
    options: LlmActorOptions,
}

impl LlmActor {
    /// The gateway backend: a LiteLLM proxy.
    pub fn gateway(
        settings: &GatewaySettings,
        options: LlmActorOptions,
    ) -> Result<Self, ActorError> {
        let client = ChatClient::new(settings.endpoint(), options.request_timeout)?;
        Ok(Self {
            kind: ActorKind::Gateway,
            client,
            options,
        })
    }

    /// The direct backend: a vendor API through a provider profile.
    pub fn direct(settings: &DirectSettings, options: LlmActorOptions) -> Result<Self, ActorError> {
        let client = ChatClient::new(settings.endpoint(), options.request_timeout)?;
        Ok(Self {
            kind: ActorKind::Direct,
            client,
            options,
        })
    }

    /// Records or replays its model traffic through `tap` (none: live, unrecorded).
    #[must_use]
    pub fn with_cassette(mut self, tap: Option<Tap>) -> Self {
        if let Some(tap) = tap {
            self.client = self.client.with_cassette(tap);
        }
        self
    }

    /// The client it talks through.
    pub fn client(&self) -> &ChatClient {
        &self.client
    }
}

impl Actor for LlmActor {
    fn kind(&self) -> ActorKind {
        self.kind
    }

    fn model(&self) -> Option<&str> {
        Some(self.client.model())
    }

    fn learner(&mut self) -> Result<Learning<'_>, PaneError> {
        let cap = self.options.max_output_tokens_per_turn;
        let learner = ClientLearner {
            client: &self.client,
            system_prompt: &self.options.system_prompt,
            per_turn_max_tokens: cap,
        };
        Ok(Learning::new(learner, Some(cap)))
    }
}
