//! The known secret values of the real environment: every variable whose name says it
//! holds a credential, so the [`Redactor`] can remove its exact value from anything a
//! seat sees or a summary carries, whatever the value's shape.

use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_redaction::{MIN_SECRET_LEN, RedactionRules, Redactor};

/// Name fragments that mark a credential-bearing variable, on top of the child-env
/// deny rules (`studyloop_credentials::looks_like_credential`). Broader on purpose:
/// the deny rules decide what a child may receive and keep a reference must-keep
/// list (`MONKEY`, `SSH_AUTH_SOCK`, ...); here over-matching only redacts a value
/// that was harmless, while under-matching would leak one.
const SECRET_NAME_PARTS: &[&str] = &[
    "JWT",
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
];

/// A redactor for `rules` that also replaces the value of every credential-named
/// variable in `env` (values shorter than [`MIN_SECRET_LEN`] are left to the patterns).
#[must_use]
pub fn redactor(rules: &RedactionRules, env: &CallerEnv) -> Redactor {
    let mut redactor = Redactor::new(rules);
    for (name, value) in env.iter() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        let upper = name.to_ascii_uppercase();
        if value.chars().count() < MIN_SECRET_LEN
            || !(studyloop_acceptance::scratch::looks_like_credential(name)
                || SECRET_NAME_PARTS.iter().any(|p| upper.contains(p)))
        {
            continue;
        }
        // A name the redactor refuses (odd characters) keeps the previous redactor: the
        // patterns still apply to the value.
        redactor = match redactor.clone().with_secret(name, value) {
            Ok(next) => next,
            Err(_) => redactor,
        };
    }
    redactor
}
