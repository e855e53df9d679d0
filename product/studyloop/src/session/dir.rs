//! The per-session working directory `<session dir>/sessions/<name>/`: the
//! harness's cwd, holding the canonical persona, a `CLAUDE.md` note that says
//! what the directory is, and the `studyloop` shim that puts this install
//! first on the pane's PATH.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::SessionError;
use crate::fsutil;

/// Name of the canonical persona file inside the session dir.
pub const PERSONA_FILE: &str = "studyloop-persona.md";

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SessionError {
    let path = path.to_owned();
    move |source| SessionError::Io {
        action,
        path,
        source,
    }
}

const CLAUDE_MD: &str = "\
# StudyLoop study session

This directory is a StudyLoop study session's working directory, not a project.
The learner is studying with you; follow the mentor persona you were given.

- Log progress: `studyloop topic \"<concept>\" -s <learning|struggling|insight|win|parked> -n \"<note>\"`
- Park a tangent: `studyloop park \"<question>\"`
- End the session: `studyloop study --end`
";

/// Create the session dir (0700). Returns whether it was created now (a
/// rollback removes only a directory it created).
pub fn create(dir: &Path) -> Result<bool, SessionError> {
    let existed = dir.is_dir();
    fsutil::ensure_private_dir(dir).map_err(io("create the session directory", dir))?;
    Ok(!existed)
}

/// Write `CLAUDE.md`, the `studyloop` shim and the persona file; returns the
/// persona file path.
pub fn populate(dir: &Path, exe: &Path, persona_text: &str) -> Result<PathBuf, SessionError> {
    let claude_md = dir.join("CLAUDE.md");
    fsutil::atomic_write(&claude_md, CLAUDE_MD.as_bytes(), 0o600)
        .map_err(io("write", &claude_md))?;
    let shim = dir.join("studyloop");
    let script = format!(
        "#!/bin/sh\nexec {} \"$@\"\n",
        crate::shell::quote(&exe.to_string_lossy())
    );
    fsutil::atomic_write(&shim, script.as_bytes(), 0o700).map_err(io("write", &shim))?;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o700))
        .map_err(io("make executable", &shim))?;
    let persona = dir.join(PERSONA_FILE);
    fsutil::atomic_write(&persona, persona_text.as_bytes(), 0o600)
        .map_err(io("write", &persona))?;
    Ok(persona)
}
