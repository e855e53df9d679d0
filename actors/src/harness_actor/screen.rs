//! Reading the second harness's output from tmux captures: an absolute line
//! cursor over the whole pane history (so scrolling never shifts it), the echo
//! of what was typed skipped in order, blank lines ignored, and a line still
//! being written (the cursor is on it) left for the next capture.
//!
//! Pure: it takes capture text and returns events; `tmux` does the I/O.

use super::error::HarnessActorError;
use super::sentinel::DONE_SENTINEL;
use std::collections::VecDeque;

/// What the next unread line was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// A learner message.
    Line(String),
    /// The sentinel.
    Done,
}

/// One capture of the pane: every line from the top of history (wrapped lines
/// joined), plus where the cursor is and whether the program has exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Capture {
    pub lines: Vec<String>,
    pub cursor_x: u32,
    pub dead: bool,
}

/// Cursor and pending-echo state across captures.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    consumed: usize,
    pending_echo: VecDeque<String>,
}

impl Reader {
    /// Queues the echo of typed `text`: one pane line per embedded line break.
    /// Blank lines are not queued (they are skipped anyway, and a queued blank
    /// would never match and block every later line).
    pub fn typed(&mut self, text: &str) {
        self.pending_echo.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        );
    }

    /// The next unread event in `capture`, if any; an error when the history
    /// shrank below the cursor (tmux's history limit dropped lines).
    pub fn next(&mut self, capture: &Capture) -> Result<Option<Event>, HarnessActorError> {
        let complete = complete_lines(capture);
        if complete < self.consumed {
            return Err(HarnessActorError::HistoryShrank {
                complete,
                consumed: self.consumed,
            });
        }
        while self.consumed < complete {
            let line = capture.lines[self.consumed].trim();
            self.consumed += 1;
            if line.is_empty() {
                continue;
            }
            if self.pending_echo.front().is_some_and(|echo| echo == line) {
                self.pending_echo.pop_front();
                continue;
            }
            if line == DONE_SENTINEL {
                return Ok(Some(Event::Done));
            }
            return Ok(Some(Event::Line(line.to_owned())));
        }
        Ok(None)
    }
}

/// What tmux writes into a pane whose program exited under `remain-on-exit`
/// (`Pane is dead (status 0, <date>)`, or `(signal N, …)`): tmux's words, not
/// the harness's, so never a learner line.
const DEAD_PANE_STATUS: &str = "Pane is dead (";

/// How many leading lines are complete: trailing blank rows are padding, and
/// when the cursor is mid-line (x > 0) the last non-blank line is still being
/// written. A dead pane's lines are all complete, but for tmux's status line.
fn complete_lines(capture: &Capture) -> usize {
    let filled = capture
        .lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    if capture.dead {
        let tmux_status = filled > 0 && capture.lines[filled - 1].starts_with(DEAD_PANE_STATUS);
        filled - usize::from(tmux_status)
    } else if capture.cursor_x > 0 {
        filled.saturating_sub(1)
    } else {
        filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(lines: &[&str], cursor_x: u32) -> Capture {
        Capture {
            lines: lines.iter().map(|s| (*s).to_owned()).collect(),
            cursor_x,
            dead: false,
        }
    }

    #[test]
    fn skips_echo_and_blank_lines_and_waits_for_partial_lines() {
        let mut r = Reader::default();
        assert_eq!(
            r.next(&cap(&["hello mentor", "", ""], 0)).unwrap(),
            Some(Event::Line("hello mentor".into()))
        );
        assert_eq!(r.next(&cap(&["hello mentor", "", ""], 0)).unwrap(), None);
        r.typed("para one\n\npara two");
        let screen = [
            "hello mentor",
            "para one",
            "",
            "para two",
            "got it",
            "half a li",
        ];
        assert_eq!(
            r.next(&cap(&screen, 9)).unwrap(),
            Some(Event::Line("got it".into()))
        );
        assert_eq!(
            r.next(&cap(&screen, 9)).unwrap(),
            None,
            "the cursor is on the partial line"
        );
        let screen = [
            "hello mentor",
            "para one",
            "",
            "para two",
            "got it",
            "half a line",
            STUDYLOOP_DONE_ROW,
            "",
        ];
        assert_eq!(
            r.next(&cap(&screen, 0)).unwrap(),
            Some(Event::Line("half a line".into()))
        );
        assert_eq!(r.next(&cap(&screen, 0)).unwrap(), Some(Event::Done));
    }

    const STUDYLOOP_DONE_ROW: &str = "  STUDYLOOP_ACTOR_DONE  ";

    #[test]
    fn the_cursor_is_absolute_so_scrolling_never_shifts_it() {
        let mut r = Reader::default();
        let many: Vec<String> = (0..500).map(|i| format!("line {i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        for i in 0..500 {
            assert_eq!(
                r.next(&cap(&refs, 0)).unwrap(),
                Some(Event::Line(format!("line {i}")))
            );
        }
        assert_eq!(r.next(&cap(&refs, 0)).unwrap(), None);
        let err = r.next(&cap(&refs[..10], 0)).unwrap_err();
        assert!(err.to_string().contains("history-limit"), "{err}");
    }

    #[test]
    fn a_dead_pane_has_no_partial_line() {
        let mut r = Reader::default();
        let capture = Capture {
            lines: vec!["last words".into()],
            cursor_x: 10,
            dead: true,
        };
        assert_eq!(
            r.next(&capture).unwrap(),
            Some(Event::Line("last words".into()))
        );
    }

    #[test]
    fn tmux_dead_pane_status_is_not_a_learner_line() {
        let mut r = Reader::default();
        let capture = Capture {
            lines: vec![
                "last words".into(),
                String::new(),
                "Pane is dead (status 0, Mon Nov 30 07:13:09 2026)".into(),
                String::new(),
            ],
            cursor_x: 0,
            dead: true,
        };
        assert_eq!(
            r.next(&capture).unwrap(),
            Some(Event::Line("last words".into()))
        );
        assert_eq!(r.next(&capture).unwrap(), None);
        // The same words from a live harness are its own.
        let mut r = Reader::default();
        let live = cap(&["Pane is dead (status 0, quoted)", ""], 0);
        assert_eq!(
            r.next(&live).unwrap(),
            Some(Event::Line("Pane is dead (status 0, quoted)".into()))
        );
    }
}
