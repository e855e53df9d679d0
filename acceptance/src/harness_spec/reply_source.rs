//! Where each harness's recorded mentor replies come from, as data of the
//! harness table: its session-store format or its screen chrome. The readers
//! that use this data are `crate::transcript` (`store`, `screen`); the types
//! live here so the table names them without importing the readers (which
//! look the table up: one direction, no circle).

/// Where a harness's recorded mentor replies come from on the CLI surface:
/// declared per harness in the harness table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplySource {
    /// The harness's own session store under the scratch HOME.
    Store(StoreFormat),
    /// The screen, through this harness's chrome rules.
    Screen(&'static Chrome),
}

/// A pinned harness's session-store format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFormat {
    /// codex 0.171.0 rollout JSONL.
    CodexRollout,
    /// Claude Code 2.1.332 project session JSONL.
    ClaudeProjects,
    /// pi 0.73.1 session JSONL.
    PiSessions,
    /// opencode 1.18.33 SQLite database.
    OpencodeDb,
}

/// One harness's screen chrome (regular expressions, matched per line).
#[derive(Debug, PartialEq, Eq)]
pub struct Chrome {
    /// The line that echoes the learner's prompt starts like this (after
    /// leading spaces), e.g. grok's `> `.
    pub(crate) echo_prefix: &'static str,
    /// The first reply line starts with this bullet (after leading spaces).
    pub(crate) reply_bullet: &'static str,
    /// A line matching this ends the reply (the input box, a spinner, the
    /// next prompt's echo, the status line).
    pub end: &'static str,
    /// Lines matching this inside the reply are chrome (a streaming cursor).
    pub(crate) noise: &'static str,
    /// Columns the TUI keeps free right of its text, relative to the widest
    /// line on screen.
    pub(crate) right_margin: usize,
}

/// grok 0.0.34 (Ink): `> prompt` echo, `⏺ ` reply bullet, 4-column reply
/// margin, the rounded input box, the `esc to interrupt` spinner line and the
/// `⏸ auto-edit` status line; `█` is its streaming cursor.
pub const GROK: Chrome = Chrome {
    echo_prefix: "> ",
    reply_bullet: "⏺ ",
    // The echo sits at column 2, a quote inside the reply at 4 or more.
    end: r"^\s*(╭|│|╰)|^ {0,3}> |esc to interrupt|⏸ auto-edit",
    noise: r"^\s*█\s*$",
    right_margin: 2,
};

/// A harness whose screen was never measured here (kiro cannot be installed):
/// common box-drawing borders and spinners, no bullet. Its fidelity is
/// recorded, never assumed.
pub const UNMEASURED: Chrome = Chrome {
    echo_prefix: "",
    reply_bullet: "",
    end: r"^\s*(╭|│|╰|┃|╹|─{3,})|esc to interrupt|ctrl\+c",
    noise: r"^\s*[█▌▍]\s*$",
    right_margin: 2,
};
