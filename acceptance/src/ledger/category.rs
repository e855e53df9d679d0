//! The fixed taxonomy every failure is filed under, so a flaky lane's failures
//! can be counted by kind (issue 17): launch, ready, reply timeout, fidelity,
//! validator, cleanup, provider fault, budget, infrastructure.
//!
//! A case's failure message names the step that failed (`step `harness ready`:
//! …`, `check `session state`: …`, see `case::step`), so the category is read
//! from that step name first and from the message's words second; what names
//! no known step or word is `infrastructure` (the framework, not the product or
//! the harness, failed). The one classifier is [`FailureCategory::classify`]:
//! the bundle's manifest note and the results line both come from it.

use serde::{Deserialize, Serialize};

/// What kind of failure a failed trial was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureCategory {
    /// The harness, product or web server did not start.
    Launch,
    /// It started but never showed its ready screen or answered its first call.
    Ready,
    /// A turn's reply did not arrive in time.
    ReplyTimeout,
    /// The recorded replies did not match what the model sent.
    Fidelity,
    /// A check of the product's state or output failed.
    Validator,
    /// Cleanup proof failed: a process, server or scratch tree was left.
    Cleanup,
    /// The model provider (stub or real) failed or refused.
    ProviderFault,
    /// A turn or token budget ran out.
    Budget,
    /// The framework itself failed (I/O, a panic, the evidence writer).
    Infrastructure,
}

/// Every category, in the taxonomy's order.
pub const FAILURE_CATEGORIES: [FailureCategory; 9] = [
    FailureCategory::Launch,
    FailureCategory::Ready,
    FailureCategory::ReplyTimeout,
    FailureCategory::Fidelity,
    FailureCategory::Validator,
    FailureCategory::Cleanup,
    FailureCategory::ProviderFault,
    FailureCategory::Budget,
    FailureCategory::Infrastructure,
];

/// Words that, in a failure message, say which kind it was; checked in order
/// (the first match wins), after the failing step's name.
const WORDS: [(&str, FailureCategory); 16] = [
    ("budget", FailureCategory::Budget),
    ("outcome budget-exhausted", FailureCategory::Budget),
    ("fidelity", FailureCategory::Fidelity),
    ("timed out", FailureCategory::ReplyTimeout),
    ("timeout", FailureCategory::ReplyTimeout),
    ("no reply", FailureCategory::ReplyTimeout),
    ("provider", FailureCategory::ProviderFault),
    ("rate limit", FailureCategory::ProviderFault),
    ("upstream", FailureCategory::ProviderFault),
    ("sweep", FailureCategory::Cleanup),
    ("still exists", FailureCategory::Cleanup),
    ("still live", FailureCategory::Cleanup),
    ("not ready", FailureCategory::Ready),
    ("ready", FailureCategory::Ready),
    ("spawn", FailureCategory::Launch),
    ("not found on path", FailureCategory::Launch),
];

impl FailureCategory {
    /// The word used in results lines, manifests and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Launch => "launch",
            Self::Ready => "ready",
            Self::ReplyTimeout => "reply-timeout",
            Self::Fidelity => "fidelity",
            Self::Validator => "validator",
            Self::Cleanup => "cleanup",
            Self::ProviderFault => "provider-fault",
            Self::Budget => "budget",
            Self::Infrastructure => "infrastructure",
        }
    }

    /// The category of a failure from its message (and, when known, whether
    /// the case ended `budget-exhausted`).
    pub fn classify(message: &str, budget_exhausted: bool) -> Self {
        if budget_exhausted {
            return Self::Budget;
        }
        let lower = message.to_lowercase();
        if let Some(category) = failing_step(&lower).and_then(by_step) {
            // A budget or timeout inside a step is about the turn, not the step.
            if !lower.contains("timed out") && !lower.contains("budget") {
                return category;
            }
        }
        WORDS
            .iter()
            .find(|(word, _)| lower.contains(word))
            .map_or(Self::Infrastructure, |(_, c)| *c)
    }
}

impl std::fmt::Display for FailureCategory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of the step or check a case message starts with
/// (`step `name`: …`), lower-cased.
fn failing_step(lower: &str) -> Option<&str> {
    let rest = lower
        .strip_prefix("step `")
        .or_else(|| lower.strip_prefix("check `"))?;
    rest.split_once('`').map(|(name, _)| name)
}

/// The category a failing step's name implies, when it implies one.
fn by_step(step: &str) -> Option<FailureCategory> {
    let has = |w: &str| step.contains(w);
    Some(if has("ready") {
        FailureCategory::Ready
    } else if has("sweep") || has("scratch tree") || has("--end") || has("exit") || has("stop") {
        FailureCategory::Cleanup
    } else if has("fidelity") || has("nonce") {
        FailureCategory::Fidelity
    } else if has("conversation") || has("turn") {
        FailureCategory::ReplyTimeout
    } else if has("start") || has("provision") || has("binary") || has("studyloop web") {
        FailureCategory::Launch
    } else if has("scratch world") || has("tmux server") {
        FailureCategory::Infrastructure
    } else {
        FailureCategory::Validator
    })
}

#[cfg(test)]
mod tests {
    use super::FailureCategory as C;

    #[test]
    fn every_failure_gets_one_category_from_the_fixed_taxonomy() {
        let cases = [
            (
                "step `harness ready`: no idle marker in 30 s",
                false,
                C::Ready,
            ),
            ("step `study start`: exit status 1", false, C::Launch),
            (
                "step `conversation`: turn 2 timed out after 60 s",
                false,
                C::ReplyTimeout,
            ),
            (
                "check `session state`: `plan`: missing",
                false,
                C::Validator,
            ),
            (
                "check `no scratch tree left`: /tmp/x still exists",
                false,
                C::Cleanup,
            ),
            (
                "step `conversation`: reply fidelity 0.41 below floor",
                false,
                C::ReplyTimeout,
            ),
            (
                "turns proven: fidelity 0.41 below floor 0.95",
                false,
                C::Fidelity,
            ),
            ("the stub provider answered 500", false, C::ProviderFault),
            ("anything (outcome budget-exhausted)", true, C::Budget),
            (
                "the case panicked: index out of bounds",
                false,
                C::Infrastructure,
            ),
            ("", false, C::Infrastructure),
        ];
        for (message, budget, want) in cases {
            assert_eq!(C::classify(message, budget), want, "{message}");
        }
        assert_eq!(super::FAILURE_CATEGORIES.len(), 9);
        let words: Vec<&str> = super::FAILURE_CATEGORIES
            .iter()
            .map(|c| c.as_str())
            .collect();
        assert_eq!(
            serde_json::to_value(C::ProviderFault).unwrap(),
            serde_json::json!("provider-fault")
        );
        assert!(words.contains(&"reply-timeout"));
    }
}
