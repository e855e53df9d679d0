//! Faithful replies in the one conversation: the reply a turn records (what
//! the learner reads, the transcript holds, the redactor scans and the
//! council grades) is the model's text, read from the transport's faithful
//! source, and scored against what the stub sent for that turn.
//!
//! - a tmux pane: the harness's session store or its screen extractor
//!   ([`transcript::record_turn`]); the screen stays the proof of display
//!   (the driver's nonce check);
//! - the session socket and the console: the assembled ACP message chunks
//!   ([`RecordedReply::acp`]; the console reads them from the last assistant
//!   message's `data-markdown`).
//!
//! Every turn's [`TurnFidelity`] goes into the case's record; the cell's
//! [`CellFidelity`] into the bundle, `results.jsonl` and the receipts.

use std::path::PathBuf;

use studyloop_actors::{Mentor, MentorError, MentorReply};
use studyloop_stubs::StubProvider;

use super::record::CheckRecord;
use super::{CaseRecord, StepFailure};
use crate::fidelity::{CellFidelity, TurnFidelity};
use crate::pane::{PaneDriver, TurnRecord};
use crate::selection::HarnessName;
use crate::transcript::{self, RecordedReply, TranscriptError, TurnTrace};

/// The transport a conversation runs over.
pub enum Transport<'m> {
    /// The harness's TUI in a tmux pane.
    Pane(&'m mut PaneDriver),
    /// The product's session WebSocket (ACP).
    Socket(&'m mut dyn Mentor),
    /// The SPA console in a browser (ACP chunks as the console holds them).
    Console(&'m mut dyn Mentor),
}

/// What the faithful reader needs beside the transport.
pub(crate) struct Reader<'a> {
    pub harness: HarnessName,
    /// The scratch HOME (the harness's session store lives there).
    pub home: PathBuf,
    /// The cell's stub provider (its request log holds every sent reply).
    pub stub: Option<&'a StubProvider>,
    pub seed: u64,
    /// What a test-double agent was told to send for ACP learner turn `k`
    /// (index `k - 1`), for a cell with no stub provider to log it
    /// ([`Case::scripted_replies`](super::Case::scripted_replies)).
    pub scripted: Option<&'a [String]>,
}

impl Reader<'_> {
    fn stub_log(&self) -> Vec<studyloop_stubs::LogRecord> {
        // No stub (real-auth) or an unreadable log leaves the verdict unknown.
        self.stub.and_then(|s| s.records().ok()).unwrap_or_default()
    }

    /// The faithful reply for a pane turn the driver just recorded, the
    /// session's `turn`-th (resumes included: what the store counts).
    ///
    /// # Errors
    /// [`TranscriptError`]: no reply could be read from the declared source.
    pub(crate) fn pane_turn(
        &self,
        r: &TurnRecord,
        turn: u32,
    ) -> Result<TurnFidelity, TranscriptError> {
        let trace = TurnTrace {
            home: &self.home,
            turn: u64::from(turn),
            screen: &r.screen,
            prompt: &r.prompt,
        };
        transcript::record_turn(self.harness, &trace, &self.stub_log(), self.seed)
    }

    /// The fidelity of ACP turn `turn` (the persona was stub turn 0): scored
    /// against the test double's script when it was given one, else against
    /// the stub provider's log.
    fn acp_turn(&self, text: String, turn: u64, prompt: &str) -> TurnFidelity {
        let recorded = RecordedReply::acp(text);
        match self.scripted {
            Some(script) => {
                let sent = usize::try_from(turn - 1)
                    .ok()
                    .and_then(|i| script.get(i))
                    .map(String::as_str);
                transcript::score_against(recorded, turn, sent)
            }
            None => {
                transcript::score_turn(recorded, turn, Some(prompt), &self.stub_log(), self.seed)
            }
        }
    }
}

/// A mentor that answers with the faithful reply and keeps each turn's
/// fidelity.
pub(crate) struct Faithful<'m, 'a> {
    pub transport: Transport<'m>,
    pub reader: Reader<'a>,
    /// ACP turns answered so far (the persona was stub turn 0).
    acp_turns: u64,
    pub turns: Vec<TurnFidelity>,
}

impl<'m, 'a> Faithful<'m, 'a> {
    pub(crate) fn new(transport: Transport<'m>, reader: Reader<'a>) -> Self {
        Self {
            transport,
            reader,
            acp_turns: 0,
            turns: Vec::new(),
        }
    }
}

impl Mentor for Faithful<'_, '_> {
    fn send(&mut self, learner_message: &str) -> Result<MentorReply, MentorError> {
        let turn = match &mut self.transport {
            Transport::Pane(driver) => {
                driver.send(learner_message)?;
                let record = driver
                    .records()
                    .last()
                    .ok_or_else(|| MentorError::Failed("the pane driver kept no turn".into()))?;
                // A conversation's driver starts the session: its turn k is
                // the session's k-th (the stub's, when it numbers them).
                self.reader
                    .pane_turn(record, record.stub_turn.unwrap_or(record.turn))
                    .map_err(|e| MentorError::Failed(e.to_string()))?
            }
            Transport::Socket(m) | Transport::Console(m) => {
                let reply = m.send(learner_message)?;
                self.acp_turns += 1;
                self.reader
                    .acp_turn(reply.text, self.acp_turns, learner_message)
            }
        };
        let reply = MentorReply::new(turn.text.clone());
        self.turns.push(turn);
        Ok(reply)
    }
}

/// Records `turns` in `record` (its per-turn fidelity) and, as checks of the
/// running step, one per scored turn against its floor; every turn below its
/// floor is named with its diff in the one failure returned.
///
/// # Errors
/// An errored failure listing each turn below its floor and its diff.
pub(crate) fn check_turns(
    record: &mut CaseRecord,
    turns: Vec<TurnFidelity>,
) -> Result<(), StepFailure> {
    let mut failed = Vec::new();
    for t in &turns {
        let Some(v) = &t.verdict else { continue };
        let error = (!v.pass).then(|| {
            format!(
                "turn {} ({:?}): fidelity {} fails its measure `{}` (floor {:.2}, {} letter(s)/digit(s) and {} other character(s) unmatched{}); {}",
                t.turn,
                t.source,
                v.ratio.map_or_else(|| "unknown".to_owned(), |r| format!("{r:.4}")),
                v.measure,
                v.floor,
                v.content_edits,
                v.glyph_edits,
                if v.kept_chrome.is_empty() {
                    String::new()
                } else {
                    format!("; chrome kept: {:?}", v.kept_chrome)
                },
                v.diff.as_deref().unwrap_or("no character differs")
            )
        });
        if let Some(e) = &error {
            failed.push(e.clone());
        }
        record.pending_checks.push(CheckRecord {
            name: format!("turn {} fidelity at its floor", t.turn),
            ok: error.is_none(),
            elapsed_ms: 0,
            error,
        });
    }
    record.fidelity.extend(turns);
    if failed.is_empty() {
        Ok(())
    } else {
        Err(StepFailure::errored(format!(
            "{} recorded repl{} below the fidelity floor: {}",
            failed.len(),
            if failed.len() == 1 { "y" } else { "ies" },
            failed.join("; ")
        )))
    }
}

/// The cell's fidelity over every recorded turn; `None` when it recorded no
/// turn (nothing to measure, not 0).
pub(crate) fn cell(record: &CaseRecord) -> Option<CellFidelity> {
    (!record.fidelity.is_empty()).then(|| CellFidelity::of(&record.fidelity))
}

/// The home a pane harness ran under (its session store), or an empty path
/// for transports that read none.
pub(crate) fn home_of(scratch: Option<&crate::scratch::Scratch>) -> PathBuf {
    scratch.map_or_else(PathBuf::new, |s| s.home().to_path_buf())
}

impl super::Case<'_> {
    /// Records the faithful reply of a pane turn driven outside a
    /// conversation (the cli-tmux lane's turn after resume: the session's
    /// `session_turn`-th, which the driver cannot know without a stub) and
    /// checks it against its floor, as [`converse`](super::converse) does.
    ///
    /// # Errors
    /// No reply could be read, or it is below its floor (with the diff).
    pub(crate) fn record_pane_turn(
        &mut self,
        turn: &TurnRecord,
        session_turn: u32,
    ) -> Result<(), StepFailure> {
        let reader = Reader {
            harness: self.harness,
            home: home_of(self.slots.scratch.as_ref()),
            stub: self.slots.stub.as_ref(),
            seed: self.seed,
            scripted: self.scripted_replies.as_deref(),
        };
        let t = reader
            .pane_turn(turn, session_turn)
            .map_err(StepFailure::from_error)?;
        check_turns(&mut self.record, vec![t])
    }
}
