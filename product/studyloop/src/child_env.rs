//! The environment a harness child gets. Two operations, one place:
//!
//! - [`strip_hatches`]: always applied: the test hatches
//!   (`STUDYLOOP_TEST_AGENT_CMD`, `STUDYLOOP_TEST_ACP_CMD`) never reach a child.
//! - [`scrub`]: the credential deny-list of reference §4.1, applied to web PTY
//!   and ACP children and, when asked with `--scrub-env`, to the tmux pane.
//!
//! It is a deny-list (everything else passes unchanged), not an allow-list.
//! The acceptance tier has its own copy of these rules for its scratch env (it
//! must not link the product); keep the two tables in step.

use std::ffi::OsStr;

use crate::env::{self, Env};

/// Dropped by exact name.
pub const DENY_EXACT: &[&str] = &[
    env::STUDYLOOP_TEST_AGENT_CMD,
    env::STUDYLOOP_TEST_ACP_CMD,
    env::STUDYLOOP_CONFIG,
    "DATABASE_URL",
];

/// Dropped when the lowercased name ends with one of these.
const DENY_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "access_key",
    "credentials",
    "private_key",
];

/// Dropped when one of these appears as `_`-delimited segments anywhere.
const DENY_SEGMENTS: &[&str] = &[
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

/// Dropped when the name, lowercased with `_` removed, contains one of these.
const DENY_SQUASHED: &[&str] = &[
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

/// Whether a variable named `name` must not reach a scrubbed child.
pub fn is_denied(name: &str) -> bool {
    if DENY_EXACT.contains(&name) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    // `key` counts only as a whole last segment, so MONKEY survives and SIGNING_KEY does not.
    if DENY_SUFFIXES.iter().any(|s| lower.ends_with(s)) || lower == "key" || lower.ends_with("_key")
    {
        return true;
    }
    let framed = format!("_{lower}_");
    if DENY_SEGMENTS
        .iter()
        .any(|s| framed.contains(&format!("_{s}_")))
    {
        return true;
    }
    let squashed = lower.replace('_', "");
    DENY_SQUASHED.iter().any(|s| squashed.contains(s))
}

fn denied_os(name: &OsStr) -> bool {
    is_denied(&name.to_string_lossy())
}

/// Remove the test hatches (always done for every child).
pub fn strip_hatches(env: &mut Env) {
    env.remove(env::STUDYLOOP_TEST_AGENT_CMD);
    env.remove(env::STUDYLOOP_TEST_ACP_CMD);
}

/// A copy of `caller` without any denied variable (reference `build_child_env`).
pub fn scrub(caller: &Env) -> Env {
    let mut out = caller.clone();
    out.retain(|k| !denied_os(k));
    out
}

/// The names in `env` that [`scrub`] would drop (for `unset` in a pane script).
pub fn denied_names(env: &Env) -> Vec<String> {
    env.iter()
        .filter(|(k, _)| denied_os(k))
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MUST_KEEP: &[&str] = &[
        "PATH",
        "HOME",
        "TERM",
        "LANG",
        "USER",
        "SHELL",
        "MONKEY",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "TMUX_TMPDIR",
        "XDG_CONFIG_HOME",
        "STUDYLOOP_STATE_DIR",
        "STUDYLOOP_SESSION_DIR",
        "STUDYLOOP_DB",
        "SSH_AUTH_SOCK",
        "GROK_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "KEYS",
        "SECRETARY",
        "TOKENS_USED",
        "PI_OFFLINE",
    ];

    const MUST_DROP: &[&str] = &[
        "STUDYLOOP_TEST_AGENT_CMD",
        "STUDYLOOP_TEST_ACP_CMD",
        "STUDYLOOP_CONFIG",
        "DATABASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "LITELLM_API_KEY",
        "GROK_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AUTHORIZATION",
        "DB_PASSWORD",
        "MYSQL_PWD_PASSWD",
        "SIGNING_KEY",
        "KEY",
        "key",
        "MY_JWT",
        "SESSION_COOKIE",
        "OAUTH_CLIENT_ID",
        "CLIENT_SECRET",
        "GH_PRIVATE_KEY",
        "OPENAIAPIKEY",
        "MyApiKeyValue",
        "X_SECRET_KEY_ID",
        "REFRESH_TOKEN_FILE",
        "ID_TOKEN_PATH",
        "NPM_AUTHTOKEN",
        "SLACK_CLIENTSECRET2",
    ];

    #[test]
    fn must_keep_names_survive() {
        for name in MUST_KEEP {
            assert!(!is_denied(name), "{name} must be kept");
        }
    }

    #[test]
    fn must_drop_names_are_dropped() {
        for name in MUST_DROP {
            assert!(is_denied(name), "{name} must be dropped");
        }
    }

    #[test]
    fn scrub_and_strip() {
        let caller = Env::from_pairs([
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk"),
            ("STUDYLOOP_TEST_AGENT_CMD", "x"),
        ]);
        let scrubbed = scrub(&caller);
        assert_eq!(scrubbed, Env::from_pairs([("PATH", "/bin")]));
        assert_eq!(
            denied_names(&caller),
            vec![
                "OPENAI_API_KEY".to_owned(),
                "STUDYLOOP_TEST_AGENT_CMD".to_owned()
            ]
        );
        let mut e = caller.clone();
        strip_hatches(&mut e);
        assert_eq!(
            e,
            Env::from_pairs([("PATH", "/bin"), ("OPENAI_API_KEY", "sk")])
        );
    }
}
