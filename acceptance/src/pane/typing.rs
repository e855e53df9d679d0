//! Typing text into the pane so that it can only ever arrive as text.
//!
//! The control-mode client reads one tmux command per line, in tmux's command
//! language: a newline inside a turn would end the command and make the next
//! line a command of its own (`run-shell …` runs; a blank line detaches the
//! client). So a turn never travels on the command line as such:
//! - one line of printable text goes as a single-quoted `send-keys -l`
//!   argument (tmux expands nothing inside single quotes, and sends `-l` text
//!   as literal keys, so `;`, `#{…}`, `$`, `~`, `\` and quotes are inert);
//! - anything with a newline or a tab is written to a 0600 file in the
//!   driver's private 0700 directory, loaded with `load-buffer` and pasted with
//!   `paste-buffer -d` the way the harness takes a multi-line paste
//!   ([`PasteMode`]): one bracketed paste, or line by line with the harness's
//!   newline key between the lines.
//!
//! `ControlClient::command` refuses any line with a control character in it,
//! so a mistake here is an error, not a tmux command.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use super::{PaneDriver, PaneError, PasteMode};
use crate::tmux::parse::quote;

/// The tmux buffer a paste goes through (`-d` deletes it after each paste).
const BUFFER: &str = "studyloop-turn";

impl PaneDriver {
    /// Types `text` (already checked by `turn_text::check` for turns) without
    /// pressing Enter.
    pub(super) fn type_text(&mut self, text: &str) -> Result<(), PaneError> {
        if !text.chars().any(char::is_control) {
            return self.send_literal(text);
        }
        match self.paste {
            PasteMode::Bracketed => self.paste(text, "-p"),
            PasteMode::BracketedLf => self.paste(text, "-p -r"),
            PasteMode::Lines { newline } => {
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        self.named_key(newline)?;
                    }
                    if line.chars().any(char::is_control) {
                        // A tab: pasted without brackets, so it stays a tab.
                        self.paste(line, "")?;
                    } else if !line.is_empty() {
                        self.send_literal(line)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Presses one named key (`Enter`, `C-c`, `S-Enter`).
    pub(super) fn named_key(&mut self, key: &str) -> Result<(), PaneError> {
        let cmd = format!("send-keys -t {} {}", quote(&self.pane), quote(key));
        self.control.command(&cmd)?;
        Ok(())
    }

    /// One line of printable text as one literal, single-quoted argument.
    fn send_literal(&mut self, text: &str) -> Result<(), PaneError> {
        let cmd = format!("send-keys -t {} -l -- {}", quote(&self.pane), quote(text));
        self.control.command(&cmd)?;
        Ok(())
    }

    /// Loads `text` into [`BUFFER`] from a private file and pastes it with
    /// `flags` (`-p`: bracketed, which tmux does only if the program asked for
    /// bracketed paste; `-r`: newlines stay LF).
    fn paste(&mut self, text: &str, flags: &str) -> Result<(), PaneError> {
        let path = self.write_paste_file(text)?;
        let shown = path.to_str().map(quote);
        let loaded = match &shown {
            Some(file) => self
                .control
                .command(&format!("load-buffer -b {BUFFER} {file}")),
            None => Ok(Vec::new()),
        };
        // tmux has read the file once load-buffer answered.
        let _ = std::fs::remove_file(&path);
        if shown.is_none() {
            return Err(PaneError::PasteFile {
                path,
                source: std::io::Error::other("the path is not UTF-8"),
            });
        }
        loaded?;
        let pane = quote(&self.pane);
        self.control
            .command(&format!("paste-buffer {flags} -d -b {BUFFER} -t {pane}"))?;
        Ok(())
    }

    /// Writes `text` to a new 0600 file in the driver's private directory
    /// (created 0700 on first use, removed with the driver).
    fn write_paste_file(&mut self, text: &str) -> Result<PathBuf, PaneError> {
        let failed = |path: PathBuf| move |source| PaneError::PasteFile { path, source };
        let dir = match &self.paste_dir {
            Some(dir) => dir.path().to_owned(),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("sl-paste-")
                    .permissions(std::fs::Permissions::from_mode(0o700))
                    .tempdir()
                    .map_err(failed(std::env::temp_dir().join("sl-paste-*")))?;
                let path = dir.path().to_owned();
                self.paste_dir = Some(dir);
                path
            }
        };
        self.pastes += 1;
        let path = dir.join(format!("turn-{}.txt", self.pastes));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(failed(path.clone()))?;
        Ok(path)
    }
}
