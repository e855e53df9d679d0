//! The harness actor's private tmux server: every call passes `-S <socket>`
//! explicitly and runs with the actor's own environment (`env_clear` + the
//! given variables), never touching the process environment or the user's
//! tmux server. Every call is bounded by a timeout.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::error::HarnessActorError;
use super::screen::Capture;

/// One tmux call may take this long before it is killed.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The session's name on the private server.
pub(crate) const SESSION: &str = "studyloop-actor";

/// Lines of scrollback kept; the read cursor is absolute, so history must not
/// be trimmed under it during a conversation.
const HISTORY_LIMIT: &str = "200000";

#[derive(Debug)]
pub(crate) struct Tmux {
    program: PathBuf,
    socket: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl Tmux {
    pub fn new(program: PathBuf, socket: PathBuf, env: Vec<(OsString, OsString)>) -> Self {
        Self {
            program,
            socket,
            env,
        }
    }

    /// Runs `tmux -S <socket> <args>`; stdout on success, an error naming the
    /// call and tmux's stderr otherwise.
    pub fn call<I, S>(&self, args: I) -> Result<String, HarnessActorError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let what = args
            .first()
            .map_or_else(String::new, |a| a.to_string_lossy().into_owned());
        let mut child = Command::new(&self.program)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .arg("-S")
            .arg(&self.socket)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| HarnessActorError::Spawn {
                program: self.program.clone(),
                detail: e.to_string(),
            })?;
        // Drain both pipes on threads: a long capture would otherwise fill the
        // pipe and deadlock against our wait.
        let out = drain(child.stdout.take());
        let err = drain(child.stderr.take());
        let deadline = Instant::now() + CALL_TIMEOUT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(HarnessActorError::CallTimeout {
                        call: what,
                        waited: CALL_TIMEOUT,
                    });
                }
                Err(e) => {
                    return Err(HarnessActorError::Wait {
                        call: what,
                        detail: e.to_string(),
                    });
                }
            }
        };
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        if status.success() {
            Ok(stdout)
        } else {
            Err(HarnessActorError::Call {
                call: what,
                status: status.to_string(),
                stderr: stderr.trim().to_owned(),
            })
        }
    }

    /// Starts the private server and the session running `command` (a shell
    /// command line, run by `/bin/sh -c` whatever the user's `SHELL`). The
    /// server reads no config file; history is large and a pane whose program
    /// exits stays readable.
    pub fn start(&self, command: &str) -> Result<(), HarnessActorError> {
        let script = linger_after(command);
        self.call([
            "-f",
            "/dev/null",
            "start-server",
            ";",
            "set-option",
            "-g",
            "history-limit",
            HISTORY_LIMIT,
            ";",
            "set-option",
            "-g",
            "remain-on-exit",
            "on",
            ";",
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            "200",
            "-y",
            "50",
            // Several arguments: tmux execs them as they are, no second shell.
            "/bin/sh",
            "-c",
            script.as_str(),
        ])
        .map(drop)
    }

    /// Types `text` literally (no key-name interpretation), then Enter.
    ///
    /// The text travels as one argv argument, which tmux does not parse as
    /// command language (no `;` splitting inside, no quotes, no `#{…}`, no
    /// `$`); only an argument *ending* in `;` is a separator, handled by
    /// [`escape_trailing_semicolon`]. A newline is typed as Enter, which is
    /// how the line-oriented second harness reads a multi-line reply. A
    /// control character other than newline and tab is refused: typed, it is
    /// a key (`C-c`, `C-d`) or the start of an escape sequence in that program.
    pub(crate) fn type_line(&self, text: &str) -> Result<(), HarnessActorError> {
        crate::turn_text::check_controls(text)
            .map_err(|fault| HarnessActorError::Untypable(fault.to_string()))?;
        let literal = escape_trailing_semicolon(text);
        self.call([
            "send-keys",
            "-t",
            SESSION,
            "-l",
            "--",
            literal.as_str(),
            ";",
            "send-keys",
            "-t",
            SESSION,
            "Enter",
        ])
        .map(drop)
    }

    /// The whole pane history with wrapped lines joined, plus the cursor column
    /// and whether the program exited, in one tmux call (one consistent view).
    pub fn capture(&self) -> Result<Capture, HarnessActorError> {
        let out = self.call([
            "capture-pane",
            "-p",
            "-J",
            "-S",
            "-",
            "-t",
            SESSION,
            ";",
            "display-message",
            "-p",
            "-t",
            SESSION,
            "#{cursor_x} #{pane_dead}",
        ])?;
        let mut lines: Vec<String> = out.lines().map(str::to_owned).collect();
        let status = lines.pop().unwrap_or_default();
        let mut fields = status.split_whitespace();
        let cursor_x = fields
            .next()
            .and_then(|x| x.parse().ok())
            .ok_or_else(|| HarnessActorError::StatusLine(status.clone()))?;
        let dead = fields.next() == Some("1");
        Ok(Capture {
            lines,
            cursor_x,
            dead,
        })
    }

    /// Stops the private server (and the harness in it). Safe to call twice.
    pub fn kill_server(&self) {
        let _ = self.call(["kill-server"]);
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// How long the pane's shell outlives `command`. The last words of a program
/// that exits at once after them (the sentinel) sit in the pty's buffer
/// until the kernel's flip-buffer work passes them on to tmux; when the pane's
/// last process has exited by then, tmux 3.3 marks the pane dead, closes the
/// pty and those words are lost. Measured: `echo STUDYLOOP_ACTOR_DONE` lost its
/// line in 26 of 300 runs with both cores loaded, and in none with the linger.
const LINGER: &str = "0.3";

/// `command` as a script whose shell waits [`LINGER`] seconds after it and
/// exits with its status. The command runs in a subshell, so its own `exit`
/// or `exec` ends only that; newlines, not `;`, delimit it, so a trailing
/// comment or `&` keeps its meaning.
fn linger_after(command: &str) -> String {
    format!("(\n{command}\n)\nstatus=$?\nsleep {LINGER}\nexit \"$status\"")
}

/// tmux treats an argument ending in `;` as a command separator; a trailing
/// `\;` stands for a literal `;`. So `P;` is sent as `P\;`.
fn escape_trailing_semicolon(text: &str) -> String {
    match text.strip_suffix(';') {
        Some(prefix) => format!("{prefix}\\;"),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linger_keeps_the_command_and_its_exit_status() {
        let run = |command: &str| {
            std::process::Command::new("/bin/sh")
                .args(["-c", &linger_after(command)])
                .output()
                .unwrap()
        };
        let out = run("echo hi # a trailing comment");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
        assert_eq!(run("false").status.code(), Some(1));
        // `exit` and `exec` end the subshell only: the linger still runs.
        let started = std::time::Instant::now();
        assert_eq!(run("exit 7").status.code(), Some(7));
        assert_eq!(run("exec sh -c 'exit 5'").status.code(), Some(5));
        assert!(started.elapsed() >= std::time::Duration::from_millis(600));
    }

    #[test]
    fn only_a_trailing_semicolon_is_escaped() {
        assert_eq!(escape_trailing_semicolon("a;b"), "a;b");
        assert_eq!(escape_trailing_semicolon("end;"), "end\\;");
        assert_eq!(escape_trailing_semicolon("odd\\;"), "odd\\\\;");
        assert_eq!(escape_trailing_semicolon(";"), "\\;");
    }
}
