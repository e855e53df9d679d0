//! The commented `config.yaml` written by `studyloop config init`, and the
//! writer itself (0600 file in a 0700 dir, never overwriting without `--force`).

use std::path::Path;

use super::error::ConfigError;

/// The commented template written by `config init`. It passes the scope gate
/// (`memory.default_scope: unclassified`), as the newer reference spec requires.
pub const TEMPLATE: &str = "\
# StudyLoop configuration (written by `studyloop config init`).
# Paths may start with ~/ . Unknown top-level keys are reported by `studyloop doctor`.

# Up to three active study topics: bare names or {name, slug}.
topics: []

# Context scope for the history database. `studyloop study` refuses to start
# without one (SESSION_CONTEXT_SCOPE, a project root below, or default_scope).
memory:
  default_scope: unclassified   # personal | work | unclassified
  projects: {}
  #   my-project:
  #     scope: work
  #     roots: [/abs/path/to/project]

# Harness detection order when --agent and STUDYLOOP_AGENT are absent.
agents:
  priority: [kiro, codex, claude, pi, opencode, grok]

# state_dir: ~/.local/share/studyloop
# session_db: ~/.config/studyloop/sessions.db
# web_port: 8567
";

/// Write [`TEMPLATE`] to `path` (0600, parent 0700). Refuses to overwrite an
/// existing file unless `force`.
pub fn init(path: &Path, force: bool) -> Result<(), ConfigError> {
    if path.exists() && !force {
        return Err(ConfigError::Exists(path.to_owned()));
    }
    let write_err = |source| ConfigError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(parent) = path.parent() {
        crate::fsutil::ensure_private_dir(parent).map_err(write_err)?;
    }
    crate::fsutil::atomic_write(path, TEMPLATE.as_bytes(), 0o600).map_err(write_err)
}
