//! Choosing and building a backend from the parsed actor selection: first
//! [`available`] (skip by name when a requirement is unmet, fail loudly when a
//! setting is malformed), then [`build`].
//!
//! A backend that may bill (gateway, direct, harness) runs only when the
//! operator named it in `STUDYLOOP_ACC_ACTOR` (behind the acceptance gate) AND
//! set that backend's own key/model/command: nothing here defaults to a paid
//! path, and no setting is a wildcard.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::conversation::Actor;
use crate::direct::{self, DirectSettings};
use crate::env::{self, EnvSource, setting};
use crate::error::{ActorError, SkipReason};
use crate::gateway::GatewaySettings;
use crate::harness_actor::{self, DEFAULT_ENV_ALLOW_LIST, HarnessActor, HarnessSettings};
use crate::kind::ActorKind;
use crate::llm::cassette::Tap;
use crate::llm_actor::{LlmActor, LlmActorOptions};
use crate::scripted::ScriptedActor;
use crate::turn_script::TurnScript;

/// Inputs that do not come from the environment.
#[derive(Debug, Clone, Default)]
pub struct ActorOptions {
    /// The scripted actor's turn script.
    pub turn_script: Option<TurnScript>,
    /// Overrides the LLM actors' defaults (system prompt, per-turn cap, timeout).
    pub llm: Option<LlmActorOptions>,
    /// Sends the direct actor to this base URL instead of the vendor (tests).
    pub direct_base_url: Option<String>,
    /// The harness actor's private tmux socket directory (required for it).
    pub harness_socket_dir: Option<PathBuf>,
    /// The complete environment of the second harness; when `None`, only
    /// [`DEFAULT_ENV_ALLOW_LIST`] is copied from the env passed to [`build`].
    pub harness_env: Option<Vec<(OsString, OsString)>>,
    /// How long the harness actor waits for the next line.
    pub harness_reply_timeout: Option<Duration>,
    /// Records or replays the gateway and direct actors' model traffic.
    pub cassette: Option<Tap>,
}

/// Whether `kind` can run with `env`: `Ok(Ok(()))` ready, `Ok(Err(reason))`
/// skip by name, `Err(_)` a malformed setting (fail the run).
pub fn available(
    kind: ActorKind,
    env: &(impl EnvSource + ?Sized),
) -> Result<Result<(), SkipReason>, ActorError> {
    let missing = |vars: Vec<&'static str>| {
        Ok(if vars.is_empty() {
            Ok(())
        } else {
            Err(SkipReason::MissingSettings {
                backend: kind,
                vars,
            })
        })
    };
    match kind {
        ActorKind::Scripted => Ok(Ok(())),
        ActorKind::Gateway => {
            if let Some(url) = setting(env, env::LITELLM_BASE_URL) {
                crate::gateway::validate_base_url(env::LITELLM_BASE_URL, &url)?;
            }
            missing(GatewaySettings::missing(env))
        }
        ActorKind::Direct => {
            let (profile, _model) = direct::selection(env)?;
            missing(if setting(env, profile.auth_env).is_none() {
                vec![profile.auth_env]
            } else {
                Vec::new()
            })
        }
        ActorKind::Harness => {
            if setting(env, env::STUDYLOOP_ACC_HARNESS_ACTOR_CMD).is_none() {
                return missing(vec![env::STUDYLOOP_ACC_HARNESS_ACTOR_CMD]);
            }
            if harness_actor::find_on_path("tmux", env.var("PATH").as_deref()).is_none() {
                return Ok(Err(SkipReason::MissingProgram {
                    backend: kind,
                    program: "tmux",
                }));
            }
            Ok(Ok(()))
        }
    }
}

/// Builds the backend for `kind`. Call [`available`] first: an unmet
/// requirement here is an [`ActorError::Unavailable`].
pub fn build(
    kind: ActorKind,
    env: &(impl EnvSource + ?Sized),
    options: ActorOptions,
) -> Result<Box<dyn Actor>, ActorError> {
    if let Err(reason) = available(kind, env)? {
        return Err(ActorError::Unavailable(reason));
    }
    let llm = options.llm.unwrap_or_default();
    Ok(match kind {
        ActorKind::Scripted => Box::new(ScriptedActor::from_script(
            &options.turn_script.ok_or(ActorError::NoTurnScript)?,
        )),
        ActorKind::Gateway => Box::new(
            LlmActor::gateway(&GatewaySettings::from_env(env)?, llm)?
                .with_cassette(options.cassette),
        ),
        ActorKind::Direct => {
            let mut settings = DirectSettings::from_env(env)?;
            if let Some(url) = &options.direct_base_url {
                settings = settings.with_base_url(url)?;
            }
            Box::new(LlmActor::direct(&settings, llm)?.with_cassette(options.cassette))
        }
        ActorKind::Harness => {
            let socket_dir = options.harness_socket_dir.ok_or(ActorError::NoSocketDir)?;
            let command = setting(env, env::STUDYLOOP_ACC_HARNESS_ACTOR_CMD).unwrap_or_default();
            let child_env = options.harness_env.unwrap_or_else(|| {
                DEFAULT_ENV_ALLOW_LIST
                    .iter()
                    .filter_map(|name| {
                        env.var(name)
                            .map(|v| (OsString::from(name), OsString::from(v)))
                    })
                    .collect()
            });
            let path = child_env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.to_string_lossy().into_owned());
            let tmux = harness_actor::find_on_path("tmux", path.as_deref()).ok_or(
                ActorError::Unavailable(SkipReason::MissingProgram {
                    backend: kind,
                    program: "tmux",
                }),
            )?;
            Box::new(HarnessActor::new(HarnessSettings {
                command,
                socket_dir,
                tmux,
                env: child_env,
                reply_timeout: options
                    .harness_reply_timeout
                    .unwrap_or(harness_actor::DEFAULT_REPLY_TIMEOUT),
            })?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    type Env<'a> = &'a [(&'a str, &'a str)];

    #[test]
    fn scripted_is_always_available_but_needs_a_script_to_build() {
        let env: Env = &[];
        assert_eq!(available(ActorKind::Scripted, env).unwrap(), Ok(()));
        let err = build(ActorKind::Scripted, env, ActorOptions::default())
            .err()
            .unwrap();
        assert!(matches!(err, ActorError::NoTurnScript));
        let script =
            TurnScript::from_json_str(r#"{"version":1,"turns":[{"prompt":"hi"}]}"#).unwrap();
        let ok = build(
            ActorKind::Scripted,
            env,
            ActorOptions {
                turn_script: Some(script),
                ..Default::default()
            },
        );
        assert_eq!(ok.unwrap().kind(), ActorKind::Scripted);
    }

    #[test]
    fn whitespace_only_settings_skip_by_name_for_every_billing_backend() {
        let env: Env = &[
            ("LITELLM_API_KEY", " "),
            ("STUDYLOOP_ACC_GATEWAY_MODEL", "m"),
            ("OPENAI_API_KEY", "\t"),
            ("STUDYLOOP_ACC_HARNESS_ACTOR_CMD", "  "),
            ("PATH", "/usr/bin:/bin"),
        ];
        let reason = |k| available(k, env).unwrap().unwrap_err().to_string();
        assert!(
            reason(ActorKind::Gateway).contains("needs LITELLM_API_KEY "),
            "{}",
            reason(ActorKind::Gateway)
        );
        assert!(reason(ActorKind::Direct).contains("needs OPENAI_API_KEY "));
        assert!(reason(ActorKind::Harness).contains("needs STUDYLOOP_ACC_HARNESS_ACTOR_CMD "));
        let err = build(ActorKind::Gateway, env, ActorOptions::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("LITELLM_API_KEY"), "{err}");
    }

    #[test]
    fn malformed_settings_fail_loudly_instead_of_skipping() {
        let env: Env = &[("LITELLM_BASE_URL", "localhost:4000")];
        assert!(available(ActorKind::Gateway, env).is_err());
        let env: Env = &[("STUDYLOOP_ACC_DIRECT_PROVIDER", "bedrock")];
        assert!(
            available(ActorKind::Direct, env)
                .unwrap_err()
                .to_string()
                .contains("bedrock adapter")
        );
        let env: Env = &[("STUDYLOOP_ACC_DIRECT_MODEL", "nope")];
        assert!(available(ActorKind::Direct, env).is_err());
    }

    #[test]
    fn harness_needs_tmux_on_the_envs_path_and_a_socket_dir() {
        let env: Env = &[
            ("STUDYLOOP_ACC_HARNESS_ACTOR_CMD", "sh x.sh"),
            ("PATH", "/nonexistent"),
        ];
        let reason = available(ActorKind::Harness, env).unwrap().unwrap_err();
        assert_eq!(
            reason,
            SkipReason::MissingProgram {
                backend: ActorKind::Harness,
                program: "tmux"
            }
        );
        let env: Env = &[
            ("STUDYLOOP_ACC_HARNESS_ACTOR_CMD", "sh x.sh"),
            ("PATH", "/usr/bin:/bin"),
        ];
        if available(ActorKind::Harness, env).unwrap().is_ok() {
            let err = build(ActorKind::Harness, env, ActorOptions::default())
                .err()
                .unwrap();
            assert!(matches!(err, ActorError::NoSocketDir));
        }
    }
}
