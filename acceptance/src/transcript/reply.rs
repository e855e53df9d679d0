//! A turn's recorded mentor reply: read from the source the harness table declares
//! (ACP chunks, the session store, or the screen), scored against what the stub sent.

// Scoring lives in the leaf `crate::fidelity` (evidence records it too); it is
// named there, one path for each item.
use crate::fidelity;
use crate::fidelity::SourceKind;

use super::{screen, store};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::selection::HarnessName;

pub use crate::harness_spec::reply_source::ReplySource;

/// One turn's mentor reply as recorded, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedReply {
    /// The reply text.
    pub text: String,
    /// Its source.
    pub source: SourceKind,
}

impl RecordedReply {
    /// A reply assembled from ACP message chunks (the web lanes already hold
    /// them; this only labels the source).
    pub fn acp(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            source: SourceKind::Acp,
        }
    }
}

/// What one CLI turn left behind for [`mentor_reply`] to read.
#[derive(Debug, Clone, Copy)]
pub struct TurnTrace<'a> {
    /// The scratch HOME the harness ran under (its store lives there).
    pub home: &'a Path,
    /// The turn number as the stub counts it: real learner turns in the
    /// session so far, including those before a resume (1-based).
    pub turn: u64,
    /// The pane capture after the turn (with scrollback).
    pub screen: &'a str,
    /// What the learner typed this turn (locates the reply on screen).
    pub prompt: &'a str,
}

/// Why no reply could be recorded for a turn.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The session store is missing, unreadable or malformed.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The screen held no reply for the turn.
    #[error(
        "{harness}: no mentor reply for turn {turn} on screen after the prompt {prompt:?} (the screen extractor found the echo but no reply lines, or no echo)"
    )]
    NotOnScreen {
        /// The harness.
        harness: HarnessName,
        /// The turn.
        turn: u64,
        /// The prompt looked for.
        prompt: String,
    },
}

/// How long a store read waits for the harness to finish writing the turn.
const STORE_WAIT: Duration = Duration::from_secs(10);
/// Two reads this far apart that agree mean the harness is done writing (a
/// streaming store, like opencode's, grows the reply row as it arrives).
const SETTLE: Duration = Duration::from_millis(150);

/// The mentor reply for one CLI turn from the source the harness table
/// declares for `harness`: its session store under `trace.home` (waiting up
/// to 10 s for the turn to appear and settle), else its screen extractor over
/// `trace.screen`. Call it after the pane driver saw the turn end.
///
/// # Errors
/// [`TranscriptError`]: the store has no such turn (or cannot be read), or
/// the screen shows none.
pub fn mentor_reply(
    harness: HarnessName,
    trace: &TurnTrace<'_>,
) -> Result<RecordedReply, TranscriptError> {
    let deadline = Instant::now() + STORE_WAIT;
    let mut last = read_reply(harness, trace);
    loop {
        let settled = last.is_ok();
        if last
            .as_ref()
            .is_ok_and(|r| r.source != SourceKind::SessionStore)
            || Instant::now() >= deadline
        {
            return last;
        }
        std::thread::sleep(SETTLE);
        let next = read_reply(harness, trace);
        if settled && next.as_ref().ok() == last.as_ref().ok() {
            return next;
        }
        last = next;
    }
}

/// One read of the declared source, without waiting (benches, tests).
///
/// # Errors
/// As [`mentor_reply`].
pub fn read_reply(
    harness: HarnessName,
    trace: &TurnTrace<'_>,
) -> Result<RecordedReply, TranscriptError> {
    match crate::harness_spec::spec(harness).reply_source {
        ReplySource::Store(format) => Ok(RecordedReply {
            text: store::reply(format, trace.home, trace.turn)?,
            source: SourceKind::SessionStore,
        }),
        ReplySource::Screen(chrome) => screen::extract(chrome, trace.screen, trace.prompt)
            .map(|text| RecordedReply {
                text,
                source: SourceKind::Screen,
            })
            .ok_or_else(|| TranscriptError::NotOnScreen {
                harness,
                turn: trace.turn,
                prompt: trace.prompt.to_owned(),
            }),
    }
}

/// The one call a CLI lane makes after each turn: the recorded reply from
/// the harness's declared source ([`mentor_reply`]) scored against what the
/// stub sent for that turn (`stub_log`: its request log; empty in real-auth
/// mode, which leaves the verdict unknown).
///
/// # Errors
/// [`TranscriptError`] when no reply could be recorded.
pub(crate) fn record_turn(
    harness: HarnessName,
    trace: &TurnTrace<'_>,
    stub_log: &[studyloop_stubs::LogRecord],
    seed: u64,
) -> Result<fidelity::TurnFidelity, TranscriptError> {
    let recorded = mentor_reply(harness, trace)?;
    Ok(score_turn(
        recorded,
        trace.turn,
        Some(trace.prompt),
        stub_log,
        seed,
    ))
}

/// Scores a reply recorded from any source (the ACP surfaces label theirs
/// with [`RecordedReply::acp`]) against what the stub sent as turn `turn` in
/// answer to `prompt` ([`sent_reply`]); the verdict is unknown (`None`) when
/// the log has no answer for it.
#[must_use]
pub(crate) fn score_turn(
    recorded: RecordedReply,
    turn: u64,
    prompt: Option<&str>,
    stub_log: &[studyloop_stubs::LogRecord],
    seed: u64,
) -> fidelity::TurnFidelity {
    score_against(recorded, turn, sent_reply(stub_log, seed, turn, prompt))
}

/// Scores a reply recorded as turn `turn` against `sent`, the text its
/// mentor sent for it by whichever record says so (the stub provider's log,
/// or the script a test-double agent was given); `None` leaves the verdict
/// unknown, never a pass.
#[must_use]
pub(crate) fn score_against(
    recorded: RecordedReply,
    turn: u64,
    sent: Option<&str>,
) -> fidelity::TurnFidelity {
    let verdict = sent.map(|sent| fidelity::score(sent, &recorded.text, recorded.source));
    fidelity::TurnFidelity {
        turn,
        source: recorded.source,
        text: recorded.text,
        verdict,
    }
}

/// The text the stub sent as turn `n` under `seed` in answer to `prompt`
/// (its request log keeps every reply whole): the answer whose marker is
/// `MENTOR-REPLY <n> <nonce>`, preferring, in order, the one whose marker
/// line echoes the prompt's first words (another request can carry the same
/// turn number: the lane's one-shot availability probe before the session, a
/// title request beside it), then the request that carried exactly `n`
/// learner turns.
pub(crate) fn sent_reply<'r>(
    records: &'r [studyloop_stubs::LogRecord],
    seed: u64,
    n: u64,
    prompt: Option<&str>,
) -> Option<&'r str> {
    let prefix = format!("MENTOR-REPLY {n} {}", studyloop_stubs::nonce(seed, n));
    let answered = || {
        records
            .iter()
            .filter_map(|r| r.reply.as_deref().map(|t| (r, t)))
            .filter(|(_, t)| t.starts_with(&prefix))
    };
    let marker = prompt.map(|p| studyloop_stubs::marker_line(seed, n, Some(p)));
    let echoes = |t: &str| {
        marker
            .as_deref()
            .is_some_and(|m| t.lines().next() == Some(m))
    };
    answered()
        .find(|(r, t)| echoes(t) && r.user_turns == n)
        .or_else(|| answered().find(|(_, t)| echoes(t)))
        .or_else(|| answered().find(|(r, _)| r.user_turns == n))
        .or_else(|| answered().next())
        .map(|(_, t)| t)
}
