//! Every tmux call the product makes. Each runs `tmux` (found on the given
//! PATH) with exactly the given environment, so a caller's `TMUX_TMPDIR` picks
//! the socket and a test's private server is never confused with the user's.
//!
//! Session names are always targeted exactly (`=name`), never by prefix.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::env::{self, Env};

/// Oldest tmux we accept (`split-window -l 25%` needs 3.1).
pub const MIN_VERSION: (u32, u32) = (3, 1);

/// The session user option a study session is marked with at creation: its
/// study id, the identity a rollback checks before it kills a session.
pub const MARK_OPTION: &str = "@studyloop_id";

/// A failed tmux operation.
#[derive(Debug, thiserror::Error)]
pub enum TmuxError {
    /// No `tmux` on PATH.
    #[error("tmux not found on PATH; install tmux {}.{} or later (e.g. `apt-get install tmux`)", MIN_VERSION.0, MIN_VERSION.1)]
    NotFound,
    /// Too old.
    #[error("tmux {found} is too old; StudyLoop needs tmux {}.{} or later", MIN_VERSION.0, MIN_VERSION.1)]
    TooOld {
        /// The version string seen.
        found: String,
    },
    /// `tmux -V` printed something unexpected.
    #[error("cannot read the tmux version from `{0}`; check that `tmux -V` works")]
    UnknownVersion(String),
    /// Spawning tmux failed.
    #[error("cannot run tmux ({path}): {source}")]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// tmux ran and reported a failure.
    #[error("tmux {command} failed: {stderr}")]
    Failed {
        /// The subcommand.
        command: String,
        /// tmux's message.
        stderr: String,
    },
}

/// A tmux client bound to one environment.
#[derive(Debug, Clone)]
pub struct Tmux {
    bin: PathBuf,
    env: Env,
}

/// The panes of a new study session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPanes {
    /// The harness pane (`#{pane_id}`).
    pub main: String,
    /// The sidebar pane.
    pub sidebar: String,
}

fn stderr_line(out: &Output) -> String {
    let s = String::from_utf8_lossy(&out.stderr);
    let s = s.trim();
    if s.is_empty() {
        format!("exit status {}", out.status)
    } else {
        s.lines().next().unwrap_or_default().to_owned()
    }
}

/// Parse `tmux 3.3a` / `tmux next-3.4` into (major, minor).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.split_whitespace().nth(1)?;
    let v = v.trim_start_matches(|c: char| !c.is_ascii_digit());
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()
        .unwrap_or("0")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().unwrap_or(0)))
}

/// How long a pasted block settles in the agent's input box before Enter.
const PASTE_SETTLE_MS: u64 = 700;

impl Tmux {
    /// Find tmux on the PATH of `env`; every call will run with exactly `env`.
    pub fn new(env: &Env) -> Result<Self, TmuxError> {
        let bin = crate::procs::which(env, "tmux").ok_or(TmuxError::NotFound)?;
        Ok(Self {
            bin,
            env: env.clone(),
        })
    }

    /// The tmux binary in use.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.env_clear().envs(self.env.iter()).stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Result<Output, TmuxError> {
        self.command()
            .args(args)
            .output()
            .map_err(|source| TmuxError::Spawn {
                path: self.bin.clone(),
                source,
            })
    }

    fn run_ok(&self, args: &[&str]) -> Result<String, TmuxError> {
        let out = self.run(args)?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(TmuxError::Failed {
                command: args.first().copied().unwrap_or_default().to_owned(),
                stderr: stderr_line(&out),
            })
        }
    }

    /// `tmux -V`, checked against [`MIN_VERSION`]; returns the version text.
    pub fn check_version(&self) -> Result<String, TmuxError> {
        let text = self.run_ok(&["-V"])?.trim().to_owned();
        let v = parse_version(&text).ok_or_else(|| TmuxError::UnknownVersion(text.clone()))?;
        if v < MIN_VERSION {
            return Err(TmuxError::TooOld { found: text });
        }
        Ok(text)
    }

    /// Whether a session with exactly this name exists (no server = no).
    pub fn has_session(&self, name: &str) -> Result<bool, TmuxError> {
        Ok(self
            .run(&["has-session", "-t", &format!("={name}")])?
            .status
            .success())
    }

    /// Kill a session by exact name; a missing session or server is fine.
    pub fn kill_session(&self, name: &str) -> Result<(), TmuxError> {
        self.run(&["kill-session", "-t", &format!("={name}")])
            .map(drop)
    }

    /// The output lines of a listing command; a failure (no server, no such
    /// session) lists nothing.
    fn list(&self, args: &[&str]) -> Result<Vec<String>, TmuxError> {
        let out = self.run(args)?;
        if !out.status.success() {
            return Ok(Vec::new());
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Names of every session on the server (no server = none).
    pub fn list_sessions(&self) -> Result<Vec<String>, TmuxError> {
        self.list(&["list-sessions", "-F", "#{session_name}"])
    }

    /// The pane ids of session `name` in creation order (the study layout:
    /// main, then sidebar); empty when the session does not exist.
    pub fn panes(&self, name: &str) -> Result<Vec<String>, TmuxError> {
        self.list(&["list-panes", "-t", &format!("={name}:"), "-F", "#{pane_id}"])
    }

    /// Types `text` into `pane` as one bracketed paste (the agent's input box
    /// takes it whole, newlines included), then presses Enter. Used to hand a
    /// drill's `practice_check` block to the running agent.
    pub fn paste(&self, pane: &str, text: &str) -> Result<(), TmuxError> {
        let buffer = format!("studyloop-{}", crate::ids::random_hex(4));
        self.run_ok(&["set-buffer", "-b", &buffer, "--", text])?;
        // `-r`: newlines stay LF (tmux would turn them into CR, which some
        // agents, grok 0.0.34 measured, pass on to the model verbatim).
        self.run_ok(&["paste-buffer", "-d", "-p", "-r", "-b", &buffer, "-t", pane])?;
        // An agent's input box takes a moment to absorb a large paste: an
        // Enter in the same instant is swallowed by some (measured with the
        // drill:: lanes), and the block would sit unsent.
        std::thread::sleep(std::time::Duration::from_millis(PASTE_SETTLE_MS));
        self.run_ok(&["send-keys", "-t", pane, "Enter"]).map(drop)
    }

    /// The pid of the process running in `pane`, if the pane exists.
    pub fn pane_pid(&self, pane: &str) -> Result<Option<i32>, TmuxError> {
        let out = self.run(&["display-message", "-p", "-t", pane, "#{pane_pid}"])?;
        if !out.status.success() {
            return Ok(None);
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().parse().ok())
    }

    /// The StudyLoop id recorded on session `name` ([`MARK_OPTION`]); `None`
    /// when the session does not exist or carries none (not ours).
    pub fn session_mark(&self, name: &str) -> Result<Option<String>, TmuxError> {
        let out = self.run(&[
            "show-options",
            "-qv",
            "-t",
            &format!("={name}:"),
            MARK_OPTION,
        ])?;
        let mark = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !mark.is_empty()).then_some(mark))
    }

    /// Kill session `name` only when it carries `id` as its mark: what a
    /// journal names is trusted only as far as the session proves it is the
    /// one that operation created (a forged record naming the user's own
    /// session, or a same-named one made since, is left alone). Returns
    /// whether it was killed.
    pub fn kill_marked_session(&self, name: &str, id: &str) -> Result<bool, TmuxError> {
        if self.session_mark(name)?.as_deref() != Some(id) {
            return Ok(false);
        }
        self.kill_session(name).map(|()| true)
    }

    /// Create the study session in one tmux invocation: a detached session
    /// running `main_argv` in `dir`, marked with the study id `id`
    /// ([`MARK_OPTION`], in the same command queue, so no session of ours
    /// exists unmarked), a 25% sidebar on the right running `sidebar_argv`,
    /// and the main pane selected.
    pub fn new_study_session(
        &self,
        name: &str,
        id: &str,
        dir: &Path,
        main_argv: &[String],
        sidebar_argv: &[String],
    ) -> Result<SessionPanes, TmuxError> {
        let dir = dir.to_string_lossy();
        let target = format!("={name}:");
        let mut args: Vec<&str> = vec![
            "new-session",
            "-d",
            "-s",
            name,
            "-c",
            &dir,
            "-x",
            "200",
            "-y",
            "50",
            "-P",
            "-F",
            "#{pane_id}",
        ];
        args.extend(main_argv.iter().map(String::as_str));
        args.extend([";", "set-option", "-t", &target, MARK_OPTION, id]);
        args.extend([
            ";",
            "split-window",
            "-h",
            "-l",
            "25%",
            "-t",
            &target,
            "-c",
            &dir,
            "-P",
            "-F",
            "#{pane_id}",
        ]);
        args.extend(sidebar_argv.iter().map(String::as_str));
        args.extend([";", "last-pane", "-t", &target]);
        let out = self.run_ok(&args)?;
        let mut ids = out.lines().map(str::trim).filter(|l| l.starts_with('%'));
        match (ids.next(), ids.next()) {
            (Some(main), Some(sidebar)) => Ok(SessionPanes {
                main: main.to_owned(),
                sidebar: sidebar.to_owned(),
            }),
            _ => Err(TmuxError::Failed {
                command: "new-session".into(),
                stderr: format!("unexpected output `{}`", out.trim()),
            }),
        }
    }

    /// Put the user in front of the session: `switch-client` inside tmux,
    /// otherwise replace this process with `tmux attach-session`. Does
    /// nothing (returns false) when stdin is not a terminal.
    pub fn attach(&self, name: &str) -> Result<bool, TmuxError> {
        if !std::io::stdin().is_terminal() {
            return Ok(false);
        }
        let target = format!("={name}");
        if self.env.get_os(env::TMUX).is_some_and(|v| !v.is_empty()) {
            self.run_ok(&["switch-client", "-t", &target])?;
            return Ok(true);
        }
        use std::os::unix::process::CommandExt;
        let mut c = self.command();
        c.stdin(Stdio::inherit())
            .args(["attach-session", "-t", &target]);
        let err = c.exec();
        Err(TmuxError::Spawn {
            path: self.bin.clone(),
            source: err,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("tmux 3.3a"), Some((3, 3)));
        assert_eq!(parse_version("tmux 3.1"), Some((3, 1)));
        assert_eq!(parse_version("tmux next-3.5"), Some((3, 5)));
        assert_eq!(parse_version("tmux 2.9a"), Some((2, 9)));
        assert!(parse_version("tmux 2.9a").unwrap() < MIN_VERSION);
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn missing_tmux_is_a_clear_error() {
        let err = Tmux::new(&Env::from_pairs([("PATH", "/nonexistent")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tmux not found on PATH") && err.contains("3.1"),
            "{err}"
        );
    }
}
