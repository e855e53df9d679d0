//! Where a recorded reply came from, and the floor each source is held to.

use serde::Serialize;

/// Which source a recorded reply came from (recorded per turn in evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// ACP `agent_message_chunk`s (web and ACP surfaces).
    Acp,
    /// The harness's session store (CLI surface).
    SessionStore,
    /// The screen extractor (CLI surface, harnesses without a store).
    Screen,
}

impl SourceKind {
    /// Its evidence name (`acp`, `session-store`, `screen`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acp => "acp",
            Self::SessionStore => "session-store",
            Self::Screen => "screen",
        }
    }

    /// The lowest ratio a turn from this source may have: 1.0 (equality) for ACP
    /// and session stores, 0.99 for the screen (which must also match every letter
    /// and digit, see the module doc).
    pub fn floor(self) -> f64 {
        match self {
            Self::Acp | Self::SessionStore => 1.0,
            Self::Screen => 0.99,
        }
    }
}
