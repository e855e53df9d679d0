//! How a harness says it has no usable login, and the named skip that says so.
//!
//! Two lists, because where the text came from decides how much it proves:
//! - [`said_by_harness`] reads output known to be the harness's own (a failed one-shot
//!   probe, `kiro-cli whoami`): a bare `401` or `Unauthorized` there is the model
//!   endpoint refusing the harness's key.
//! - [`named_anywhere`] reads any failure message of a case, which also carries the
//!   product's words. The product's own web console answers 401 ("password required"),
//!   so a bare 401 there proves nothing about the harness; only phrases no product path
//!   prints count (an ACP adapter's `authRequired` "Authentication required", an
//!   invalid API key).
//!
//! Either way the result is [`LoggedOut`], whose `Display` is the skip reason every
//! caller uses: "not logged in: <harness>: <evidence>; <how to sign in>".

use crate::selection::HarnessName;

/// Phrases that name a missing or refused login wherever they appear, lowercased.
const ANYWHERE: &[&str] = &[
    "not logged in",
    "not authenticated",
    "not signed in",
    "please log in",
    "please login",
    "login required",
    "authentication required",
    "auth_required",
    "authrequired",
    "invalid api key",
    "invalid_api_key",
    "invalid x-api-key",
    "incorrect api key",
    "missing api key",
    "api key required",
    "api key is required",
    "requires an api key",
    "no api key",
    "api key not found",
    "authentication failed",
    "authentication_error",
];

/// Further phrases that mean it only in the harness's own output, lowercased.
const FROM_HARNESS: &[&str] = &[
    "unauthorized",
    "log in with",
    "expired token",
    "token has expired",
    "token expired",
    "no credentials",
    "missing credentials",
    "invalid credentials",
    "credentials not found",
];

/// A harness that is not signed in: the skip reason, never a lane error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not logged in: {harness}: {evidence}; {fix}")]
pub(crate) struct LoggedOut {
    /// The harness.
    pub harness: HarnessName,
    /// The words that say so (at most 200 characters).
    pub evidence: String,
    /// How to sign in (`login_hint`).
    pub fix: &'static str,
}

impl LoggedOut {
    /// `harness` is logged out, as `evidence` shows.
    #[must_use]
    pub fn new(harness: HarnessName, evidence: &str) -> Self {
        Self {
            harness,
            evidence: printable(evidence, 200),
            fix: super::login_hint(harness),
        }
    }
}

/// At most `max` characters of harness output, each control character (terminal
/// escapes, bells, line breaks) shown as `?`: a skip reason is printed, never replayed.
#[must_use]
pub(crate) fn printable(text: &str, max: usize) -> String {
    text.chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The first line of the harness's own (failed) output that says it has no login.
#[must_use]
pub fn said_by_harness(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| {
            let lower = l.to_lowercase();
            has_401(&lower)
                || ANYWHERE
                    .iter()
                    .chain(FROM_HARNESS)
                    .any(|m| lower.contains(m))
        })
        .map(str::to_owned)
}

/// The part of any failure message that names a missing login unambiguously.
#[must_use]
pub(crate) fn named_anywhere(text: &str) -> Option<String> {
    text.lines().map(str::trim).find_map(|l| {
        let lower = l.to_lowercase();
        let at = ANYWHERE.iter().filter_map(|m| lower.find(m)).min()?;
        // Failure messages are long one-liners: from the bracket that opens the
        // phrase's clause (the adapter's own error), else from the phrase.
        let from = floor_char(l, at.saturating_sub(120));
        let start = l[from..at].rfind(['(', '{']).map_or(at, |i| from + i + 1);
        Some(l[start..].chars().take(200).collect())
    })
}

/// `401` as a number of its own (not inside `1401 ms` or an id).
fn has_401(lower: &str) -> bool {
    lower.match_indices("401").any(|(i, _)| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + 3..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// The largest char boundary at or below `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_saying_it_has_no_login_is_recognised_by_its_line() {
        for text in [
            "Error: Not logged in. Run kiro-cli login",
            "stream error: unexpected status 401 Unauthorized",
            "API Error: 401 {\"type\":\"error\"}",
            "Invalid API key · Please run /login",
            "error: OPENAI_API_KEY: missing API key",
            "Your token has expired",
            "AI_APICallError: Unauthorized",
            // grok 1.x with no key (measured here, real-auth with an empty HOME).
            "❌ Error: API key required. Set GROK_API_KEY environment variable",
            // pi with no key (measured here).
            "No API key found for the selected model.",
        ] {
            let found = said_by_harness(&format!("starting\n{text}\n"));
            assert_eq!(found.as_deref(), Some(text), "{text}");
        }
        for text in [
            "MENTOR-REPLY 1 abc: availability probe",
            "error: connection refused",
            "took 1401 ms, id a401b",
            "wrote credentials.json",
            "",
        ] {
            assert_eq!(said_by_harness(text), None, "{text}");
        }
    }

    #[test]
    fn a_failure_message_counts_only_unambiguous_phrases() {
        let acp = "step `POST /api/session/start (acp)`: session/new failed: -32000 Authentication required (run `kiro-cli login`)";
        let found = named_anywhere(acp).unwrap();
        assert!(found.contains("Authentication required"), "{found}");
        // The product's own console password is a 401 too: not a harness login.
        for text in [
            "drill check: web_console_password (the console answers 401 Unauthorized)",
            "turn 1 on pane %1 exceeded 90s without a reply",
            "",
        ] {
            assert_eq!(named_anywhere(text), None, "{text}");
        }
        let long = format!("{}é invalid api key{}", "x".repeat(300), "y".repeat(400));
        let found = named_anywhere(&long).unwrap();
        assert!(found.chars().count() <= 200 && found.contains("invalid api key"));
    }

    #[test]
    fn the_skip_reason_names_the_harness_the_evidence_and_the_fix() {
        let e = LoggedOut::new(HarnessName::Kiro, "Not logged in");
        assert_eq!(
            e.to_string(),
            "not logged in: kiro: Not logged in; run `kiro-cli login`"
        );
        let hostile = LoggedOut::new(HarnessName::Codex, "\u{1b}[31m401\u{7}\r\nx");
        assert_eq!(hostile.evidence, "?[31m401???x");
    }
}
