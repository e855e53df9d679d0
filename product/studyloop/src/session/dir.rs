//! The per-session working directory `<session dir>/sessions/<name>/`: the
//! harness's cwd, holding the canonical persona, a `CLAUDE.md` note that says
//! what the directory is, and the `studyloop` shim that puts this install
//! first on the pane's PATH.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::SessionError;
use super::load::io;
use crate::fsutil;

/// Name of the canonical persona file inside the session dir.
pub const PERSONA_FILE: &str = "studyloop-persona.md";

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

/// Write `CLAUDE.md`, the `studyloop` shim, the spec dir (with its
/// `.gitignore`) and the persona file; returns the persona file path.
pub fn populate(dir: &Path, exe: &Path, persona_text: &str) -> Result<PathBuf, SessionError> {
    super::spec::ensure(dir)?;
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

/// The session dir's name when `dir` is exactly a direct child of
/// `sessions_root` (no `..`, no nesting) and is not a symlink. State and
/// journal values name the dir; nothing outside the sessions root may be
/// deleted because a file says so.
pub(crate) fn confined_name<'a>(
    sessions_root: &Path,
    dir: &'a Path,
) -> Option<&'a std::ffi::OsStr> {
    let name = match dir.components().next_back()? {
        std::path::Component::Normal(n) => n,
        _ => return None,
    };
    // Neither the root (studyloop creates it as a plain directory) nor the
    // session dir may be a symlink: either would move the delete elsewhere.
    (dir.parent()? == sessions_root && !sessions_root.is_symlink() && !dir.is_symlink())
        .then_some(name)
}

/// Remove the directory `dir` (a session dir this start created) when it is
/// confined to `sessions_root`. `remove_dir_all` removes symlinks inside it
/// without following them.
pub(crate) fn remove_confined_dir(sessions_root: &Path, dir: &Path) -> std::io::Result<()> {
    if confined_name(sessions_root, dir).is_none() {
        return Ok(());
    }
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Remove `file` only when it sits directly inside a confined session dir:
/// the dir is opened relative to the sessions root with `O_NOFOLLOW`, and the
/// name is unlinked relative to that descriptor, so neither a symlinked
/// directory nor a symlinked file reaches outside (a symlink itself is
/// removed, never its target). Returns whether `file` qualified.
pub(crate) fn remove_inside(
    sessions_root: &Path,
    dir: &Path,
    file: &Path,
) -> std::io::Result<bool> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let (Some(dir_name), Some(parent), Some(std::path::Component::Normal(file_name))) = (
        confined_name(sessions_root, dir),
        file.parent(),
        file.components().next_back(),
    ) else {
        return Ok(false);
    };
    if parent != dir {
        return Ok(false);
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let root = match rustix::fs::open(sessions_root, flags | OFlags::NOFOLLOW, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(true),
        Err(e) => return Err(e.into()),
    };
    let dir_fd = match rustix::fs::openat(&root, dir_name, flags | OFlags::NOFOLLOW, Mode::empty())
    {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(true),
        Err(e) => return Err(e.into()),
    };
    match rustix::fs::unlinkat(&dir_fd, file_name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_only_inside_a_confined_dir_and_never_through_a_link() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("sessions");
        let dir = root.join("study-x-1");
        std::fs::create_dir_all(&dir).unwrap();
        let outside = t.path().join("thesis.md");
        std::fs::write(&outside, "keep").unwrap();
        // Outside the dir, `..` tricks, a symlinked dir and a symlinked file.
        assert!(!remove_inside(&root, &dir, &outside).unwrap());
        assert!(!remove_inside(&root, &dir, &dir.join("../../thesis.md")).unwrap());
        assert!(!remove_inside(&root, &root.join("../x"), &outside).unwrap());
        std::os::unix::fs::symlink(t.path(), root.join("study-link")).unwrap();
        let _ = remove_inside(
            &root,
            &root.join("study-link"),
            &root.join("study-link/thesis.md"),
        );
        std::os::unix::fs::symlink(&outside, dir.join("p.md")).unwrap();
        assert!(remove_inside(&root, &dir, &dir.join("p.md")).unwrap());
        assert!(outside.exists() && !dir.join("p.md").exists());
        std::fs::write(dir.join(PERSONA_FILE), "x").unwrap();
        assert!(remove_inside(&root, &dir, &dir.join(PERSONA_FILE)).unwrap());
        assert!(!dir.join(PERSONA_FILE).exists());
        remove_confined_dir(&root, &root.join("study-link")).unwrap();
        assert!(outside.exists());
        remove_confined_dir(&root, &dir).unwrap();
        assert!(!dir.exists() && outside.exists());
        // A sessions root replaced by a symlink is not followed either.
        let moved = t.path().join("elsewhere");
        std::fs::create_dir_all(moved.join("study-y-2")).unwrap();
        std::fs::write(moved.join("study-y-2").join(PERSONA_FILE), "keep").unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&moved, &root).unwrap();
        let d = root.join("study-y-2");
        assert!(!remove_inside(&root, &d, &d.join(PERSONA_FILE)).unwrap());
        remove_confined_dir(&root, &d).unwrap();
        assert!(moved.join("study-y-2").join(PERSONA_FILE).exists());
    }
}
