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
        // StudyLoop's own selection knobs are words, not credentials, whatever their
        // names say (`STUDYLOOP_ACC_AUTH_MODE=local-model` made every summary that
        // records its auth mode "leak" it, so no local-model run could be graded).
        let knob = studyloop_acceptance::selection::ENV_VARS
            .iter()
            .any(|d| d.name == name);
        if knob
            || value.chars().count() < MIN_SECRET_LEN
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_knobs_are_not_secrets_but_keys_beside_them_are() {
        let rules = RedactionRules::load_default().unwrap();
        let key = "sk-local-0123456789abcdef0123456789abcdef";
        let env = CallerEnv::from_pairs([
            ("STUDYLOOP_ACC_AUTH_MODE", "local-model"),
            ("STUDYLOOP_ACC_REAL_AUTH", "1"),
            ("LITELLM_API_KEY", key),
            ("MY_AUTH_WORD", "local-model-two"),
        ]);
        let r = redactor(&rules, &env);
        assert_eq!(r.redact("auth mode local-model"), "auth mode local-model");
        let out = r.redact(&format!("key {key} and local-model-two"));
        assert!(
            !out.contains(key) && !out.contains("local-model-two"),
            "{out}"
        );
    }
}
