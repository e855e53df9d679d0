//! The learner's capability: a model playing the learner through the gateway or a
//! vendor's API bills whoever holds that key, so it needs `learner:<provider>/<model>`
//! approved. Exempt: the scripted and harness learners (no model API of ours), the
//! local model (`local-model` mode serves it on this machine), and a cassette replay
//! (no model answers live).

use studyloop_actors::env::{self as actor_env, EnvSource, setting};
use studyloop_actors::llm::cassette::CassetteMode;
use studyloop_actors::{ActorKind, direct};

use crate::approval::{Capability, decide};
use crate::selection::{AuthMode, Selection};

/// The capability the selected learner needs, or `None` when it bills nothing.
/// `None` too when its settings are missing or malformed: the actor's own check
/// names those first.
#[must_use]
pub fn learner_capability(
    selection: &Selection,
    env: &(impl EnvSource + ?Sized),
) -> Option<Capability> {
    let replay = selection
        .cassette
        .as_ref()
        .is_some_and(|c| c.mode == CassetteMode::Replay);
    if selection.auth_mode == AuthMode::LocalModel || replay {
        return None;
    }
    match selection.actor {
        ActorKind::Gateway => Some(Capability::Learner {
            provider: "gateway".into(),
            model: setting(env, actor_env::STUDYLOOP_ACC_GATEWAY_MODEL)?,
        }),
        ActorKind::Direct => {
            let (profile, model) = direct::selection(env).ok()?;
            Some(Capability::Learner {
                provider: profile.slug.to_owned(),
                model: model.to_owned(),
            })
        }
        ActorKind::Scripted | ActorKind::Harness => None,
    }
}

/// The named skip when the selected learner bills and is not approved.
#[must_use]
pub fn learner_unapproved(
    selection: &Selection,
    env: &(impl EnvSource + ?Sized),
) -> Option<String> {
    let capability = learner_capability(selection, env)?;
    decide(&selection.approvals, &capability).unmet()
}
