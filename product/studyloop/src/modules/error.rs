//! What can go wrong with a module command before (or instead of) a list of
//! findings: the path, the tree's bounds, the config dir, the lockfile. Every
//! message names the bad value and what to do.

use std::path::{Path, PathBuf};

/// A module command failed; the message is one line.
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    /// The module path does not exist or cannot be opened.
    #[error("cannot open module `{}`: {source}; pass the path of a module directory (one holding module.yaml)", path.display())]
    Open {
        /// The path given.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The module path is not a directory.
    #[error("module `{}` is {what}, not a directory; pass the path of a module directory (one holding module.yaml)", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
        /// What it is instead.
        what: &'static str,
    },
    /// The tree is larger or deeper than any module may be.
    #[error("module `{}` exceeds a bound: {what} (limit {limit}); a module is a small directory of data, remove the bulk and retry", path.display())]
    TooBig {
        /// The module root.
        path: PathBuf,
        /// Which bound, with the value found.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// Reading or writing a file failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        /// What was being done ("cannot read", "cannot write").
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A name that is not a module id.
    #[error(
        "`{0}` is not a module id; use 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit (e.g. my-drills)"
    )]
    BadId(String),
    /// `module new` would overwrite something.
    #[error("`{}` already exists; pick another name or remove it first", .0.display())]
    Exists(PathBuf),
    /// `module check` found violations where nothing may be written.
    #[error("module `{}` does not conform ({count} finding(s)); run `studyloop module check {}` and fix each one; nothing was installed", path.display(), path.display())]
    NotConforming {
        /// The module path.
        path: PathBuf,
        /// How many findings.
        count: usize,
    },
    /// The id is installed already with other content.
    #[error(
        "module `{id}` is already installed (digest {digest}); run `studyloop module remove {id}` first to replace it"
    )]
    AlreadyInstalled {
        /// The module id.
        id: String,
        /// The installed digest.
        digest: String,
    },
    /// The id is not in the lockfile.
    #[error("module `{id}` is not installed; installed: {installed}")]
    NotInstalled {
        /// The id asked for.
        id: String,
        /// The installed ids, or `none`.
        installed: String,
    },
    /// The lockfile does not parse.
    #[error("the module lockfile `{}` is damaged: {detail}; move it aside and re-add the modules with `studyloop module add PATH`", path.display())]
    BadLockfile {
        /// The lockfile.
        path: PathBuf,
        /// The parser's message.
        detail: String,
    },
    /// A snapshot's content no longer matches its digest.
    #[error(
        "the snapshot of module `{id}` was changed after install (expected digest {expected}, found {found}); run `studyloop module remove {id}` and add it again"
    )]
    Tampered {
        /// The module id.
        id: String,
        /// The digest in the lockfile.
        expected: String,
        /// What the snapshot hashes to now (or why it cannot be hashed).
        found: String,
    },
    /// The shipped secret patterns (MC009) did not load.
    #[error("cannot load the secret patterns for MC009: {0}")]
    Rules(#[from] studyloop_redaction::RedactionError),
    /// A drill reference that is not `module/deck/task`.
    #[error(
        "`{0}` is not a drill; name one as MODULE/DECK/TASK (e.g. my-drills/getting-started/ready-01)"
    )]
    BadDrill(String),
    /// A phase name outside the three.
    #[error("phase `{0}` is not accepted; use one of: setup, check, cleanup")]
    BadPhase(String),
    /// The deck or task is not in the installed module.
    #[error("{what} `{name}` is not in module `{module}`; it has: {known}")]
    UnknownDrill {
        /// `deck` or `task`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The module.
        module: String,
        /// The names it has.
        known: String,
    },
    /// The task has no command for this phase.
    #[error("drill `{drill}` has no {phase} phase; it has: {has}")]
    NoPhase {
        /// The drill.
        drill: String,
        /// The phase asked for.
        phase: String,
        /// The phases it has.
        has: String,
    },
    /// A declared prerequisite is not on PATH.
    #[error(
        "prerequisite `{0}` is not on your PATH; install it (the module declares it) and retry; nothing ran"
    )]
    MissingPrerequisite(String),
    /// Consent cannot be asked.
    #[error(
        "stdin is not a terminal: a drill phase runs only after you type yes at the prompt (there is no --yes); run it in your own terminal; nothing ran"
    )]
    NotATerminal,
    /// The phase could not be started or watched.
    #[error("cannot run `{program}`: {source}; nothing further ran")]
    Spawn {
        /// The executable.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The phase cannot be contained here, so it is not run at all.
    #[error(
        "cannot contain the phase: could not {step}: {source}; nothing ran. A phase runs only inside its own user, mount and PID namespaces (Linux 5.12 or later with unprivileged user namespaces: `unshare -r -m -p -f true` must succeed; check the sysctls user.max_user_namespaces and kernel.apparmor_restrict_unprivileged_userns)"
    )]
    Contain {
        /// The containment step that failed.
        step: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The config dir cannot be resolved.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
}

/// The `map_err` of a file operation: `ModuleError::Io` naming `action` and `path`.
pub(crate) fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ModuleError {
    let path = path.to_owned();
    move |source| ModuleError::Io {
        action,
        path,
        source,
    }
}
