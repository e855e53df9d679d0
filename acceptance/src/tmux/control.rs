//! A tmux control-mode client (`tmux -C attach-session`): commands with framed
//! replies, and pane output pushed as events instead of polled.
//!
//! A reader thread turns the client's stdout into two streams: replies to our
//! own commands (in order, `%begin … %end|%error` with flags bit 1) and
//! [`Event`]s (`%output`, `%exit`, end of stream). The client attaches with
//! `-f ignore-size` so observing a session never resizes the harness's pane.
//! What it is not: it decides nothing about turns or replies (`crate::pane`).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::parse::{self, Line};
use super::{Tmux, TmuxError};

/// How long a control-mode command may take to answer.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Something tmux pushed to the control client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A pane wrote bytes (already octal-decoded).
    Output {
        /// The pane id, e.g. `%3`.
        pane: String,
        /// Raw terminal bytes, escape sequences included.
        bytes: Vec<u8>,
        /// When the reader thread saw them.
        at: Instant,
    },
    /// tmux announced the client is exiting (session closed, server killed, …).
    Exit {
        /// tmux's reason text, when it gave one.
        reason: Option<String>,
    },
    /// The client's stdout closed.
    Closed,
}

struct Reply {
    error: bool,
    lines: Vec<String>,
}

/// One control-mode client attached to one session.
pub struct ControlClient {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<Reply>,
    events: Receiver<Event>,
    socket: PathBuf,
    broken: Option<String>,
}

impl ControlClient {
    /// Attaches to `session` on `tmux`'s server.
    pub fn attach(tmux: &Tmux, session: &str) -> Result<Self, TmuxError> {
        let args = format!("-C attach-session -f ignore-size -t {session}");
        let mut child = tmux
            .command()
            .args(["-C", "attach-session", "-f", "ignore-size", "-t", session])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| TmuxError::Spawn {
                args: args.clone(),
                source,
            })?;
        let stdout = child.stdout.take().ok_or_else(|| TmuxError::Failed {
            args: args.clone(),
            socket: tmux.socket().to_owned(),
            message: "no stdout pipe".into(),
        })?;
        let (reply_tx, replies) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        std::thread::spawn(move || read_loop(BufReader::new(stdout), &reply_tx, &event_tx));
        let mut client = Self {
            stdin: child.stdin.take(),
            child,
            replies,
            events,
            socket: tmux.socket().to_owned(),
            broken: None,
        };
        // A no-op round trip proves the attach worked (a missing session makes
        // the client exit, which surfaces here as ControlClosed).
        client.command("display-message -p ok")?;
        Ok(client)
    }

    /// Sends one command line (already quoted) and returns its output lines.
    ///
    /// The line must be one command line and nothing else: a newline (or CR)
    /// would end it and make the rest further commands, an empty line detaches
    /// the client, and a NUL truncates it, so any control character or a blank
    /// line is refused before anything is written ([`TmuxError::UnsafeCommand`]).
    pub fn command(&mut self, line: &str) -> Result<Vec<String>, TmuxError> {
        check_line(line)?;
        if let Some(reason) = &self.broken {
            return Err(self.closed(line, reason.clone()));
        }
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.flush()),
            None => Err(std::io::Error::other("stdin already closed")),
        };
        if let Err(e) = written {
            self.broken = Some(format!("write failed: {e}"));
            return Err(self.closed(line, format!("write failed: {e}")));
        }
        match self.replies.recv_timeout(REPLY_TIMEOUT) {
            Ok(Reply {
                error: false,
                lines,
            }) => Ok(lines),
            Ok(Reply { error: true, lines }) => Err(TmuxError::Failed {
                args: line.to_owned(),
                socket: self.socket.clone(),
                message: lines.join(" / "),
            }),
            Err(RecvTimeoutError::Timeout) => {
                // Replies are matched by order: after a lost one, every later
                // reply would be misattributed, so the client is unusable.
                self.broken = Some("a reply timed out".into());
                Err(TmuxError::Timeout {
                    args: line.to_owned(),
                    socket: self.socket.clone(),
                    timeout: REPLY_TIMEOUT,
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.broken = Some("the client exited".into());
                Err(self.closed(line, "the client exited".into()))
            }
        }
    }

    /// The pushed events (pane output, exit). Read them from one thread.
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    fn closed(&self, command: &str, reason: String) -> TmuxError {
        TmuxError::ControlClosed {
            socket: self.socket.clone(),
            command: command.to_owned(),
            reason,
        }
    }
}

/// Refuses a line that is not exactly one control-mode command line.
fn check_line(line: &str) -> Result<(), TmuxError> {
    let what = match line.chars().find(|c| c.is_control()) {
        Some(c) => format!(
            "control character {}",
            studyloop_actors::turn_text::describe(c)
        ),
        None if line.trim().is_empty() => "no command (a blank line detaches the client)".into(),
        None => return Ok(()),
    };
    Err(TmuxError::UnsafeCommand {
        command: format!("{line:?}"),
        what,
    })
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        // Detaching a control client never touches the session; kill it rather
        // than wait on a server that may be wedged.
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_loop(mut out: impl BufRead, replies: &Sender<Reply>, events: &Sender<Event>) {
    // The open block: its `%begin` header and the lines so far.
    let mut block: Option<(parse::Header, Vec<String>)> = None;
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        match out.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        if let Some((begin, lines)) = block.as_mut() {
            match parse::parse_line(&buf) {
                // Only the line repeating this block's own header closes it: any
                // other `%end` inside is text the command printed (a pane's).
                Line::End { header, error } if header == *begin => {
                    if begin.ours() {
                        let lines = std::mem::take(lines);
                        let _ = replies.send(Reply { error, lines });
                    }
                    block = None;
                }
                _ => lines.push(String::from_utf8_lossy(&buf).into_owned()),
            }
            continue;
        }
        match parse::parse_line(&buf) {
            Line::Begin(header) => block = Some((header, Vec::new())),
            Line::Output { pane, bytes } => {
                let _ = events.send(Event::Output {
                    pane,
                    bytes,
                    at: Instant::now(),
                });
            }
            Line::Exit { reason } => {
                let _ = events.send(Event::Exit { reason });
            }
            Line::End { .. } | Line::Other => {}
        }
    }
    let _ = events.send(Event::Closed);
}

impl Tmux {
    /// Opens a control-mode client attached to `session` (here, beside the client it
    /// builds, so the server handle never names the control client).
    pub fn control(&self, session: &str) -> Result<ControlClient, TmuxError> {
        ControlClient::attach(self, session)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn only_a_single_visible_command_line_passes() {
        assert!(check_line("send-keys -t '%1' -l -- 'a;b #{x} $H'").is_ok());
        for (bad, named) in [
            ("set-buffer -- 'a\nrun-shell touch /tmp/x'", "U+000A (LF)"),
            ("display-message -p a\r", "U+000D (CR)"),
            ("send-keys -l -- 'a\0b'", "U+0000 (NUL)"),
            ("send-keys -l -- '\u{1b}[2J'", "U+001B (ESC)"),
            ("send-keys -l -- '\u{9b}2J'", "U+009B (CSI)"),
            ("", "blank line detaches"),
            ("   ", "blank line detaches"),
        ] {
            let err = check_line(bad).unwrap_err().to_string();
            assert!(err.contains(named), "{bad:?}: {err}");
        }
    }

    /// Issue 34 §3: a `capture-pane` reply of a pane that printed `%end` lines for
    /// every block number, with other times and flags, arrives whole and alone.
    #[test]
    fn a_pane_printing_end_lines_cannot_close_a_reply() {
        let mut stream = String::from("%begin 1796011190 7 1\n");
        for n in 0..20 {
            // Writing to a String cannot fail.
            let _ = write!(
                stream,
                "%end 1796011190 {n} 0\n%end 1796011189 {n} 1\n%error 17960111 {n} 1\n%begin 1796011190 {n} 1\n"
            );
        }
        stream.push_str("last pane line\n%end 1796011190 7 1\n");
        stream.push_str("%begin 1796011191 8 1\nsecond\n%end 1796011191 8 1\n");
        let (reply_tx, reply_rx) = mpsc::channel();
        let (event_tx, _events) = mpsc::channel();
        read_loop(stream.as_bytes(), &reply_tx, &event_tx);
        let first = reply_rx.try_recv().unwrap();
        assert!(!first.error);
        assert_eq!(first.lines.len(), 81, "{:?}", first.lines);
        assert_eq!(
            first.lines.last().map(String::as_str),
            Some("last pane line")
        );
        assert_eq!(reply_rx.try_recv().unwrap().lines, ["second"]);
        assert!(
            reply_rx.try_recv().is_err(),
            "a spoofed block produced a reply"
        );
    }
}
