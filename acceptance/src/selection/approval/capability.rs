//! Capability ids and the frozen set of reasons a person is asked about.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::selection::HarnessName;

/// Why a capability needs a person's approval. Frozen: a new reason is a contract
/// change, never a free-form string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Bills a vendor.
    Chargeable,
    /// Uses the operator's own login or key.
    Credentialed,
    /// The harness writes transcripts into the operator's real directories.
    WritesRealHome,
}

/// Every reason, in the order they are listed.
pub const REASONS: [Reason; 3] = [
    Reason::Chargeable,
    Reason::Credentialed,
    Reason::WritesRealHome,
];

impl Reason {
    /// The word used in approvals and records.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Chargeable => "chargeable",
            Reason::Credentialed => "credentialed",
            Reason::WritesRealHome => "writes-real-home",
        }
    }

    /// What it means, for the skip reason a person reads.
    #[must_use]
    pub fn meaning(self) -> &'static str {
        match self {
            Reason::Chargeable => "bills a vendor",
            Reason::Credentialed => "uses your own login or key",
            Reason::WritesRealHome => "writes transcripts into your real home directories",
        }
    }

    pub(crate) fn from_word(word: &str) -> Option<Self> {
        REASONS.into_iter().find(|r| r.as_str() == word)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One billed or credentialed thing a run can do.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// The mentor's model calls under real-auth, the authenticated probe included.
    Harness(HarnessName),
    /// A model playing the learner (gateway and direct actors).
    Learner {
        /// `gateway` or a direct provider slug.
        provider: String,
        /// The model id or gateway alias.
        model: String,
    },
    /// One seat of a grading council with a real endpoint.
    Judge {
        /// The roster's council id.
        council: String,
        /// The seat id.
        seat: String,
    },
}

impl Capability {
    /// The reasons this capability declares (every one must be approved).
    #[must_use]
    pub fn reasons(&self) -> &'static [Reason] {
        match self {
            // Every harness keeps its sessions under the real home in real-auth
            // mode (~/.codex/sessions, ~/.claude/projects, ~/.pi/agent/sessions, ...).
            Capability::Harness(_) => &REASONS,
            Capability::Learner { .. } | Capability::Judge { .. } => {
                &[Reason::Chargeable, Reason::Credentialed]
            }
        }
    }

    /// `harness:codex[chargeable,credentialed,writes-real-home]`: the id with its
    /// reasons, the form a record and a full approval use.
    #[must_use]
    pub fn with_reasons(&self) -> String {
        let words: Vec<&str> = self.reasons().iter().map(|r| r.as_str()).collect();
        format!("{self}[{}]", words.join(","))
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capability::Harness(h) => write!(f, "harness:{h}"),
            Capability::Learner { provider, model } => write!(f, "learner:{provider}/{model}"),
            Capability::Judge { council, seat } => write!(f, "judge:{council}/{seat}"),
        }
    }
}
