//! The driver's vocabulary: markers, limits, the reply proof, turn records and
//! errors. Data only; the behaviour is in the parent module.

use std::time::Duration;

use regex::Regex;
use serde::Serialize;

use crate::tmux::TmuxError;

/// The screen markers the driver waits on.
#[derive(Debug, Clone)]
pub struct Markers {
    /// Shown once the harness accepts input.
    pub ready: Regex,
    /// Shown in the bottom lines whenever the harness waits for input.
    pub idle: Option<Regex>,
    /// Shown in the bottom lines while the harness is working.
    pub busy: Option<Regex>,
}

/// Timing and ceiling of a driven conversation.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long to wait for the ready marker.
    pub ready_timeout: Duration,
    /// How long one turn may take from Enter to a detected reply.
    pub turn_timeout: Duration,
    /// How long to wait for the typed text to echo before pressing Enter anyway.
    pub echo_timeout: Duration,
    /// No output for this long = the screen has settled.
    pub quiet: Duration,
    /// How long the screen must stay quiet once the ready marker shows: some
    /// TUIs (Ink) draw their prompt before their input handler is live, and an
    /// Enter typed in that gap is lost.
    pub ready_quiet: Duration,
    /// How long the screen must stay quiet once the typed text has echoed before
    /// Enter is pressed. An Ink TUI on a loaded machine reads typed text in
    /// chunks and repaints after it: an Enter that lands in the same read as the
    /// tail of the text is taken as part of a paste and never submits. The
    /// settled screen is also the baseline the Enter retry compares against.
    pub typed_quiet: Duration,
    /// Turns this driver will send at most.
    pub max_turns: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            ready_timeout: Duration::from_secs(60),
            turn_timeout: Duration::from_secs(90),
            echo_timeout: Duration::from_secs(3),
            quiet: Duration::from_millis(30),
            ready_quiet: Duration::from_millis(300),
            typed_quiet: Duration::from_millis(200),
            max_turns: 8,
        }
    }
}

/// How a harness takes a turn that spans lines (declared per harness in
/// `crate::harness_spec::SPECS`). Either way the text travels to tmux in a buffer
/// loaded from a private file, never on the control-mode command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasteMode {
    /// One bracketed paste (`paste-buffer -p`) with each newline sent as CR,
    /// as a terminal pastes: a TUI that enabled bracketed paste keeps the
    /// newlines in its input box, and only the separate Enter submits.
    Bracketed,
    /// The same paste with each newline kept as LF (`paste-buffer -r`): for a
    /// TUI that inserts a pasted chunk verbatim, where a CR would reach the
    /// model as a CR (and a lone one would submit).
    BracketedLf,
    /// Line by line, pressing `newline` (a tmux key name, e.g. `C-j`)
    /// between lines: for a TUI that treats any paste as an attachment (wraps
    /// it, collapses it), so that the turn arrives as typed text.
    Lines {
        /// The key the harness reads as "new line, do not submit".
        newline: &'static str,
    },
}

/// Builds the on-screen proof for stub turn `n` answering `prompt`.
pub type MarkerFn = Box<dyn Fn(u32, &str) -> String + Send>;

/// What proves a turn was answered by the model.
pub enum Proof {
    /// Stub-provider mode: `marker(n, prompt)` (the start of the stub's reply to
    /// its `n`-th user turn: turn number, nonce and the prompt's first words)
    /// must be on screen, whitespace-collapsed. The prompt words matter: a TUI
    /// may show a side request's answer (a session title) carrying a later
    /// turn's nonce. `next_turn` is the stub turn number of the next turn sent
    /// (1 in a fresh session; history length + 1 after a resume).
    StubMarker {
        /// Builds the on-screen proof for stub turn `n` answering `prompt`.
        marker: MarkerFn,
        /// The stub turn number of the next turn.
        next_turn: u32,
    },
    /// No stub (scrubbed or real-auth): new lines that are not the echo.
    NewContent,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurnOutcome {
    /// The reply rule held.
    Replied,
    /// The per-turn timeout passed first.
    TimedOut,
    /// The harness showed a refused login and went idle without a reply.
    LoginRefused,
}

/// One turn as evidence (`turns.json` holds a list of these).
#[derive(Debug, Clone, Serialize)]
pub struct TurnRecord {
    /// 1-based turn number within this driver.
    pub turn: u32,
    /// The stub's turn number for this turn (stub-provider mode only).
    pub stub_turn: Option<u32>,
    /// The on-screen proof required (stub marker), if any.
    pub marker: Option<String>,
    /// What was typed.
    pub prompt: String,
    /// The reply as read off the screen (`None` when none was detected).
    pub reply: Option<String>,
    /// The whole captured screen when the turn ended.
    pub screen: String,
    /// From Enter to the decision.
    pub elapsed_ms: u64,
    /// From the last pane output to the decision (the detection latency).
    pub(crate) settle_ms: Option<u64>,
    /// Replied or timed out.
    pub outcome: TurnOutcome,
}

/// Why driving the pane stopped.
#[derive(Debug, thiserror::Error)]
pub enum PaneError {
    /// The ready marker never appeared.
    #[error(
        "pane {pane} never showed the ready marker /{marker}/ within {timeout:?}; last screen lines: {tail}"
    )]
    NotReady {
        /// The pane id.
        pane: String,
        /// The ready regex.
        marker: String,
        /// The limit that passed.
        timeout: Duration,
        /// The bottom of the screen when it gave up.
        tail: String,
    },
    /// A turn got no reply in time (its screen is in the records).
    #[error(
        "turn {turn} on pane {pane} exceeded {timeout:?} without a reply (screen recorded); the run ends as budget-exhausted, not retried"
    )]
    TurnTimeout {
        /// The 1-based turn.
        turn: u32,
        /// The pane id.
        pane: String,
        /// The limit that passed.
        timeout: Duration,
    },
    /// The harness answered the turn with a refused login on its screen and went idle:
    /// no reply can follow, so the turn ends now instead of at its timeout.
    #[error(
        "turn {turn} on pane {pane} got no reply: the harness showed a refused login ({evidence}) and went idle (screen recorded)"
    )]
    LoginRefused {
        /// The 1-based turn.
        turn: u32,
        /// The pane id.
        pane: String,
        /// The screen line that says so (printable, at most 200 characters).
        evidence: String,
    },
    /// The ceiling was reached; the turn was not sent.
    #[error(
        "turn budget exhausted: {max} turns already sent on pane {pane}; the turn was not sent"
    )]
    TurnCeiling {
        /// The ceiling.
        max: u32,
        /// The pane id.
        pane: String,
    },
    /// The session or the control client went away.
    #[error("tmux session of pane {pane} ended ({reason}) while {phase}")]
    Gone {
        /// The pane id.
        pane: String,
        /// tmux's reason, as known.
        reason: String,
        /// What the driver was doing.
        phase: &'static str,
    },
    /// The turn's text cannot be typed safely; nothing was sent.
    #[error("turn {turn} for pane {pane} was not sent: its text {fault}")]
    UnsafeTurn {
        /// The 1-based turn.
        turn: u32,
        /// The pane id.
        pane: String,
        /// The offending character, or that nothing is visible.
        fault: studyloop_actors::turn_text::TextFault,
    },
    /// The private file a multi-line turn is loaded from could not be written.
    #[error("cannot write the private paste file {path}: {source}")]
    PasteFile {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// tmux itself failed.
    #[error(transparent)]
    Tmux(#[from] TmuxError),
}

/// A key to send: literal text or a named key (`Enter`, `C-c`, `C-d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Typed literally (`send-keys -l`).
    Text(&'static str),
    /// A tmux key name.
    Named(&'static str),
}

/// Finds, in the text a harness printed, the line saying its login was refused (the
/// driver holds one; the screen reader applies it).
pub type Refusal = fn(&str) -> Option<String>;
