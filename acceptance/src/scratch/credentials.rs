//! The credential deny rules: which variable names look like secrets.
//!
//! The scratch env is an allow-list, so a credential never reaches a scratch
//! child by default; these rules guard the one door that copies a caller
//! variable in by name ([`crate::scratch::Env::inherit`]) and are the same rules
//! the reference product applies to its own agent children: exact names, a
//! suffix rule, a segment rule and a squashed rule, all case-insensitive. They are
//! deliberately broad: stripping `AUTHORIZATION_ENDPOINT` or `COOKIE_FILE` is an
//! accepted over-strip; `MONKEY`, `TOKENIZERS_PARALLELISM` and `TURKEY_DATA` must
//! survive. This module decides; it does not build environments.

/// Names dropped exactly: the product's stub-agent test hatches and pointers
/// that would move a child off its scratch config or database.
pub const EXACT_DENY: [&str; 4] = [
    "STUDYLOOP_TEST_AGENT_CMD",
    "STUDYLOOP_TEST_ACP_CMD",
    "STUDYLOOP_CONFIG",
    "DATABASE_URL",
];

/// A name ending in one of these (case-insensitive) is a credential.
const SUFFIXES: [&str; 8] = [
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "access_key",
    "credentials",
    "private_key",
];

/// A name containing one of these as a whole run of `_`-separated segments is a
/// credential (`AWS_BEARER_TOKEN_BEDROCK`, `GOOGLE_APPLICATION_CREDENTIALS`).
const SEGMENTS: [&str; 18] = [
    "bearer_token",
    "auth_token",
    "access_token",
    "refresh_token",
    "id_token",
    "api_key",
    "access_key",
    "secret_key",
    "private_key",
    "client_secret",
    "secret",
    "password",
    "passwd",
    "credentials",
    "authorization",
    "jwt",
    "cookie",
    "oauth",
];

/// A name that, lowercased with underscores removed, contains one of these is a
/// credential (`OPENAIAPIKEY`, `GithubAccessToken`).
const SQUASHED: [&str; 11] = [
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "sessioncookie",
    "accesstoken",
    "authtoken",
    "bearertoken",
    "refreshtoken",
    "idtoken",
    "clientsecret",
];

/// Whether a variable named `name` must never be copied into a scratch child.
pub fn is_denied(name: &str) -> bool {
    EXACT_DENY.contains(&name) || looks_like_credential(name)
}

/// The suffix, segment and squashed rules alone.
pub fn looks_like_credential(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    suffix_rule(&lower) || segment_rule(&lower) || squashed_rule(&lower)
}

fn suffix_rule(lower: &str) -> bool {
    if SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        return true;
    }
    // `key` counts only as a whole word: `KEY` or `..._KEY`, never `MONKEY`.
    lower == "key" || lower.ends_with("_key")
}

fn segment_rule(lower: &str) -> bool {
    let segments: Vec<&str> = lower.split('_').collect();
    SEGMENTS.iter().any(|pattern| {
        let wanted: Vec<&str> = pattern.split('_').collect();
        segments
            .windows(wanted.len())
            .any(|w| w == wanted.as_slice())
    })
}

fn squashed_rule(lower: &str) -> bool {
    let squashed = lower.replace('_', "");
    SQUASHED.iter().any(|s| squashed.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names that must survive every rule (the reference's must-keep list).
    const MUST_KEEP: [&str; 17] = [
        "PATH",
        "HOME",
        "LANG",
        "TERM",
        "XDG_CONFIG_HOME",
        "HTTPS_PROXY",
        "TOKENIZERS_PARALLELISM",
        "TOKEN_BUDGET_HINT",
        "AWS_REGION",
        "AWS_PROFILE",
        "EDITOR",
        "MONKEY",
        "DONKEY",
        "KEYBOARD_LAYOUT",
        "SSH_AUTH_SOCK",
        "MONKEYPATCH_MODE",
        "TURKEY_DATA",
    ];

    /// Names that must be dropped, each with the rule that catches it.
    const MUST_DROP: [(&str, &str); 26] = [
        ("STUDYLOOP_TEST_AGENT_CMD", "exact"),
        ("STUDYLOOP_TEST_ACP_CMD", "exact"),
        ("STUDYLOOP_CONFIG", "exact"),
        ("DATABASE_URL", "exact"),
        ("OPENAI_API_KEY", "suffix api_key"),
        ("ANTHROPIC_API_KEY", "suffix api_key"),
        ("LITELLM_API_KEY", "suffix api_key"),
        ("AWS_SECRET_ACCESS_KEY", "suffix access_key"),
        ("AWS_SESSION_TOKEN", "suffix token"),
        ("GITHUB_TOKEN", "suffix token"),
        ("DB_PASSWORD", "suffix password"),
        ("SIGNING_KEY", "suffix _key"),
        ("key", "suffix whole-name key"),
        ("client_secret", "suffix secret, lowercase"),
        ("AWS_BEARER_TOKEN_BEDROCK", "segment bearer_token"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "suffix credentials"),
        ("GOOGLE_CREDENTIALS_FILE", "segment credentials"),
        ("AUTHORIZATION", "segment authorization"),
        ("MY_SECRET_VALUE", "segment secret"),
        ("OAUTH_CLIENT", "segment oauth"),
        ("APP_JWT_PUBLIC", "segment jwt"),
        (
            "AUTHORIZATION_ENDPOINT",
            "segment authorization (accepted over-strip)",
        ),
        ("COOKIE_FILE", "segment cookie (accepted over-strip)"),
        ("OPENAIAPIKEY", "squashed apikey"),
        ("GithubAccessTokenValue", "squashed accesstoken"),
        ("X_SESSIONCOOKIE_V", "squashed sessioncookie"),
    ];

    #[test]
    fn must_keep_names_survive() {
        for name in MUST_KEEP {
            assert!(!is_denied(name), "{name} was denied but must be kept");
        }
    }

    #[test]
    fn must_drop_names_are_denied() {
        for (name, rule) in MUST_DROP {
            assert!(
                is_denied(name),
                "{name} should be denied by the {rule} rule"
            );
        }
    }

    #[test]
    fn exact_names_are_only_exact() {
        assert!(!looks_like_credential("STUDYLOOP_CONFIG"));
        assert!(is_denied("STUDYLOOP_CONFIG"));
        assert!(!is_denied("STUDYLOOP_CONFIGURED_THING"));
    }
}
