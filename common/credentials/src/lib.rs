//! The credential deny rules: which environment variable names a StudyLoop child
//! must never receive.
//!
//! One table, shared by the two places that build child environments: the
//! product (`studyloop`'s `child_env`, applied to web PTY and ACP children and,
//! with `--scrub-env`, to the tmux pane) and the acceptance tier's scratch world
//! (`studyloop-acceptance`, guarding the one door that copies a caller variable in
//! by name). It is a pure function of a name, with no dependencies and no I/O, so
//! sharing it does not make the acceptance tier link the product's behaviour.
//!
//! The rules are the reference product's (anchor-product §4.1): exact names, a
//! suffix rule, a segment rule and a squashed rule, all case-insensitive. They are
//! deliberately broad: stripping `AUTHORIZATION_ENDPOINT` or `COOKIE_FILE` is an
//! accepted over-strip; `MONKEY`, `TOKENIZERS_PARALLELISM` and `TURKEY_DATA` must
//! survive. This crate decides; it does not build environments.

/// Names dropped exactly: the product's stub-agent test hatches and pointers
/// that would move a child off its scratch config or database.
pub const EXACT_DENY: [&str; 5] = [
    "STUDYLOOP_TEST_AGENT_CMD",
    "STUDYLOOP_TEST_ACP_CMD",
    "STUDYLOOP_TEST_KILL_AT",
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
#[must_use]
pub fn is_denied(name: &str) -> bool {
    EXACT_DENY.contains(&name) || looks_like_credential(name)
}

/// The suffix, segment and squashed rules alone.
#[must_use]
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
    const MUST_KEEP: &[&str] = &[
        "USER",
        "SHELL",
        "TMUX_TMPDIR",
        "STUDYLOOP_STATE_DIR",
        "STUDYLOOP_SESSION_DIR",
        "STUDYLOOP_DB",
        "GROK_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "KEYS",
        "SECRETARY",
        "TOKENS_USED",
        "PI_OFFLINE",
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
    const MUST_DROP: &[(&str, &str)] = &[
        ("ANTHROPIC_AUTH_TOKEN", "suffix token"),
        ("GROK_API_KEY", "suffix api_key"),
        ("AWS_ACCESS_KEY_ID", "segment access_key"),
        ("GH_TOKEN", "suffix token"),
        ("MYSQL_PWD_PASSWD", "suffix passwd"),
        ("KEY", "suffix whole-name key"),
        ("MY_JWT", "segment jwt"),
        ("SESSION_COOKIE", "segment cookie"),
        ("OAUTH_CLIENT_ID", "segment oauth"),
        ("CLIENT_SECRET", "suffix secret"),
        ("GH_PRIVATE_KEY", "suffix private_key"),
        ("MyApiKeyValue", "squashed apikey"),
        ("X_SECRET_KEY_ID", "segment secret_key"),
        ("REFRESH_TOKEN_FILE", "segment refresh_token"),
        ("ID_TOKEN_PATH", "segment id_token"),
        ("NPM_AUTHTOKEN", "squashed authtoken"),
        ("SLACK_CLIENTSECRET2", "squashed clientsecret"),
        ("STUDYLOOP_TEST_AGENT_CMD", "exact"),
        ("STUDYLOOP_TEST_ACP_CMD", "exact"),
        ("STUDYLOOP_TEST_KILL_AT", "exact"),
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
        for &name in MUST_KEEP {
            assert!(!is_denied(name), "{name} was denied but must be kept");
        }
    }

    #[test]
    fn must_drop_names_are_denied() {
        for &(name, rule) in MUST_DROP {
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
