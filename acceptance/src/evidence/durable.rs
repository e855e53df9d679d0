//! The durable UAT evidence root, resolved from the real environment.

use std::path::PathBuf;

use crate::caller_env::CallerEnv;
use crate::evidence::RunId;
use crate::selection::UAT_EVIDENCE_ROOT;

/// Why no durable root could be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurableRootError {
    /// The override is a relative path, which would depend on the cwd.
    #[error(
        "{UAT_EVIDENCE_ROOT}={value:?} is not an absolute path (set it to an absolute directory, or unset it for ~/.local/share/studyloop/uat)"
    )]
    RelativeOverride {
        /// The value given.
        value: String,
    },
    /// Neither the override nor an absolute HOME is set.
    #[error(
        "cannot resolve the UAT evidence root: {UAT_EVIDENCE_ROOT} is unset and HOME is unset or relative (set one of them)"
    )]
    Unresolved,
}

/// `<STUDYLOOP_UAT_EVIDENCE_ROOT>/<run-id>` when the override is set (trimmed,
/// non-empty), else `<HOME>/.local/share/studyloop/uat/<run-id>`.
///
/// It reads only the map it is given: pass the real environment captured before
/// any scratch world exists, never a scratch child's env (a different type).
/// `STUDYLOOP_STATE_DIR` is never consulted, so a scratch state dir cannot
/// relocate the root.
pub fn durable_root(real_env: &CallerEnv, run_id: &RunId) -> Result<PathBuf, DurableRootError> {
    if let Some(value) = real_env.var(UAT_EVIDENCE_ROOT) {
        let trimmed = value.trim();
        if !trimmed.is_empty() {
            let root = PathBuf::from(trimmed);
            if !root.is_absolute() {
                return Err(DurableRootError::RelativeOverride { value });
            }
            return Ok(root.join(run_id.as_str()));
        }
    }
    match real_env.var_os("HOME").map(PathBuf::from) {
        Some(home) if home.is_absolute() => Ok(home
            .join(".local/share/studyloop/uat")
            .join(run_id.as_str())),
        _ => Err(DurableRootError::Unresolved),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_wins_and_is_trimmed() {
        let id = RunId::generate();
        let env =
            CallerEnv::from_pairs([(UAT_EVIDENCE_ROOT, " /srv/evidence "), ("HOME", "/home/x")]);
        assert_eq!(
            durable_root(&env, &id),
            Ok(PathBuf::from("/srv/evidence").join(id.as_str()))
        );
    }

    #[test]
    fn home_default_and_state_dir_is_ignored() {
        let id = RunId::generate();
        let env = CallerEnv::from_pairs([
            (UAT_EVIDENCE_ROOT, "  "),
            ("HOME", "/home/x"),
            (
                "STUDYLOOP_STATE_DIR",
                "/tmp/sl-acc-zzz/home/.local/share/studyloop",
            ),
        ]);
        assert_eq!(
            durable_root(&env, &id),
            Ok(PathBuf::from("/home/x/.local/share/studyloop/uat").join(id.as_str()))
        );
    }

    #[test]
    fn relative_or_missing_is_an_error() {
        let id = RunId::generate();
        let rel = CallerEnv::from_pairs([(UAT_EVIDENCE_ROOT, "evidence")]);
        assert!(matches!(
            durable_root(&rel, &id),
            Err(DurableRootError::RelativeOverride { .. })
        ));
        assert_eq!(
            durable_root(&CallerEnv::default(), &id),
            Err(DurableRootError::Unresolved)
        );
    }
}
