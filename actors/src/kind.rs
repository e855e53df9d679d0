//! The actor selection (`ActorKind`) and the one shared shape for documenting an
//! environment variable (`EnvVarDoc`).
//!
//! `ActorKind` is the parsed value of `STUDYLOOP_ACC_ACTOR`; the acceptance
//! selection reuses this type rather than defining its own, so there is one list of
//! backends. Parsing the variable itself (trimming, the empty default) is the
//! selection's job; this module only maps a single word to a kind.

use std::fmt;
use std::str::FromStr;

/// Which learner backend plays the learner in a live conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActorKind {
    /// A turn script replayed verbatim; never bills.
    Scripted,
    /// A model reached through a LiteLLM proxy (`LITELLM_BASE_URL`).
    Gateway,
    /// A model reached through a vendor API directly (a provider profile).
    Direct,
    /// A second harness CLI in its own tmux server.
    Harness,
}

impl ActorKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [ActorKind; 4] = [
        ActorKind::Scripted,
        ActorKind::Gateway,
        ActorKind::Direct,
        ActorKind::Harness,
    ];

    /// The word used in `STUDYLOOP_ACC_ACTOR`, evidence manifests and trial names.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Scripted => "scripted",
            ActorKind::Gateway => "gateway",
            ActorKind::Direct => "direct",
            ActorKind::Harness => "harness",
        }
    }

    /// Whether this backend may spend money (a paid model or a logged-in harness),
    /// so it runs only when the operator opted in explicitly.
    pub fn may_bill(self) -> bool {
        !matches!(self, ActorKind::Scripted)
    }
}

impl fmt::Display for ActorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not one of the four actor kinds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown actor kind {value:?}: expected one of scripted, gateway, direct, harness \
     (set STUDYLOOP_ACC_ACTOR to one of them, or leave it unset for scripted)"
)]
pub struct UnknownActorKind {
    /// The rejected word, exactly as given.
    pub value: String,
}

impl FromStr for ActorKind {
    type Err = UnknownActorKind;

    /// Exact, case-sensitive match: `Gateway` is a typo, not a synonym.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ActorKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownActorKind {
                value: s.to_owned(),
            })
    }
}

/// One environment variable a crate reads: the README's env table is the union of
/// every crate's `ENV_VARS` list of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVarDoc {
    /// The variable's exact name.
    pub name: &'static str,
    /// One line saying what it controls.
    pub meaning: &'static str,
    /// The value used when it is unset, or `None` when unset means "absent".
    pub default: Option<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_word() {
        for kind in ActorKind::ALL {
            assert_eq!(kind.as_str().parse::<ActorKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.as_str());
        }
    }

    #[test]
    fn unknown_word_names_value_set_and_fix() {
        let err = "Gateway".parse::<ActorKind>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"Gateway\""), "{msg}");
        assert!(msg.contains("scripted, gateway, direct, harness"), "{msg}");
        assert!(msg.contains("STUDYLOOP_ACC_ACTOR"), "{msg}");
        assert!(" scripted".parse::<ActorKind>().is_err());
        assert!("".parse::<ActorKind>().is_err());
    }

    #[test]
    fn only_scripted_never_bills() {
        let billing: Vec<_> = ActorKind::ALL
            .into_iter()
            .filter(|k| k.may_bill())
            .collect();
        assert_eq!(
            billing,
            [ActorKind::Gateway, ActorKind::Direct, ActorKind::Harness]
        );
    }
}
