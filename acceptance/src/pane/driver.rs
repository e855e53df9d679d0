//! [`PaneDriver`]: one pane driven through a tmux control-mode client: type a turn, wait
//! for the reply to settle, keep the bounded raw stream and the per-turn records.

use std::time::{Duration, Instant};

use super::{
    Key, Limits, Markers, PaneError, PasteMode, Proof, Refusal, TurnOutcome, TurnRecord, screen,
};
use crate::tmux::parse::quote;
use crate::tmux::{ControlClient, Event, Tmux, TmuxError};

/// How long an Enter may go without any screen change before it is resent.
const ENTER_RETRY: Duration = Duration::from_secs(2);
/// How often it is resent at most.
const ENTER_RETRIES: u32 = 2;

/// Cap on the raw output kept for evidence (the tail is what matters).
const STREAM_CAP: usize = 8 << 20;

/// Drives one pane through a control-mode client.
pub struct PaneDriver {
    pub(super) control: ControlClient,
    pub(super) pane: String,
    pub(super) markers: Markers,
    pub(super) limits: Limits,
    pub(super) proof: Proof,
    pub(super) records: Vec<TurnRecord>,
    pub(super) stream: Vec<u8>,
    /// The same output with its timing, from the start (`cast`).
    pub(super) cast: super::cast::Cast,
    /// The pane's size when the driver attached (columns, rows), when tmux said.
    pub(super) size: Option<(u16, u16)>,
    /// How many recorded bytes each turn record had seen, in record order.
    pub(super) turn_ends: Vec<usize>,
    pub(super) paste: PasteMode,
    /// The private directory multi-line turns are loaded from (on first use).
    pub(super) paste_dir: Option<tempfile::TempDir>,
    pub(super) pastes: u64,
    /// Reads a turn's new screen lines for a refused login (`with_refusal`).
    pub(super) refusal: Option<Refusal>,
}

struct Settled {
    screen: String,
    settle: Option<Duration>,
}

enum WaitEnd {
    TimedOut(String),
    Gone(String),
}

impl PaneDriver {
    /// Attaches a control client to `session` and drives `pane` in it.
    pub fn attach(
        tmux: &Tmux,
        session: &str,
        pane: &str,
        markers: Markers,
        limits: Limits,
        proof: Proof,
    ) -> Result<Self, PaneError> {
        let mut driver = Self {
            control: tmux.control(session)?,
            pane: pane.to_owned(),
            markers,
            limits,
            proof,
            records: Vec::new(),
            stream: Vec::new(),
            cast: super::cast::Cast::new(),
            size: None,
            turn_ends: Vec::new(),
            paste: PasteMode::Bracketed,
            paste_dir: None,
            pastes: 0,
            refusal: None,
        };
        driver.size = driver.query_size();
        Ok(driver)
    }

    /// The pane's size from tmux (`None` when it does not answer).
    fn query_size(&mut self) -> Option<(u16, u16)> {
        let cmd = format!(
            "display-message -p -t {} '#{{pane_width}} #{{pane_height}}'",
            quote(&self.pane)
        );
        let lines = self.control.command(&cmd).ok()?;
        let (w, h) = lines.first()?.trim().split_once(' ')?;
        Some((w.parse().ok()?, h.parse().ok()?))
    }

    /// The screen after each turn, rendered from the recorded stream by a
    /// terminal emulator (one per record; `None` past the recording's cap).
    pub fn rendered_screens(&self) -> Vec<Option<String>> {
        let size = self.size.unwrap_or((80, 24));
        let bytes = self.cast.bytes();
        self.turn_ends
            .iter()
            .map(|end| (*end <= bytes.len()).then(|| super::render::render(&bytes[..*end], size)))
            .collect()
    }

    /// The pane's recording as an asciinema v2 `.cast` (80×24 when tmux never
    /// said the pane's size).
    pub fn cast(&self) -> Vec<u8> {
        self.cast.to_asciicast(self.size.unwrap_or((80, 24)))
    }

    /// [`Self::cast`] gzipped, as the bundle holds it (`.cast.gz`).
    pub fn cast_gz(&self) -> Vec<u8> {
        self.cast.to_asciicast_gz(self.size.unwrap_or((80, 24)))
    }

    /// How this harness takes a multi-line turn (the harness table's
    /// `paste`); bracketed paste unless set.
    #[must_use]
    pub fn with_paste(mut self, paste: PasteMode) -> Self {
        self.paste = paste;
        self
    }

    /// A turn whose new screen lines show a refused login (as `refusal` reads them),
    /// with no reply and the harness idle, ends at once as [`PaneError::LoginRefused`]
    /// instead of at its timeout: no reply can follow (the lanes pass the harness
    /// login phrases, `harness_spec::login`).
    #[must_use]
    pub fn with_refusal(mut self, refusal: Refusal) -> Self {
        self.refusal = Some(refusal);
        self
    }

    /// The turns so far (timed-out ones included).
    pub fn records(&self) -> &[TurnRecord] {
        &self.records
    }

    /// The raw bytes the pane wrote while driven (capped to the last 8 MiB).
    pub fn stream(&self) -> &[u8] {
        &self.stream
    }

    /// The pane id.
    pub fn pane(&self) -> &str {
        &self.pane
    }

    /// The current screen, plain text with wrapped lines joined.
    pub fn capture(&mut self) -> Result<String, TmuxError> {
        let cmd = format!("capture-pane -p -J -t {} -S -", quote(&self.pane));
        let mut lines = self.control.command(&cmd)?;
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        Ok(lines.join("\n"))
    }

    /// Waits for the ready marker; returns how long it took.
    pub fn wait_ready(&mut self) -> Result<Duration, PaneError> {
        let start = Instant::now();
        let ready = self.markers.ready.clone();
        let quiet = self.limits.ready_quiet.max(self.limits.quiet);
        match self.wait(start + self.limits.ready_timeout, quiet, |s| {
            ready.is_match(s)
        }) {
            Ok(_) => Ok(start.elapsed()),
            Err(WaitEnd::TimedOut(s)) => Err(PaneError::NotReady {
                pane: self.pane.clone(),
                marker: ready.as_str().to_owned(),
                timeout: self.limits.ready_timeout,
                tail: screen::tail(&s, 5),
            }),
            Err(WaitEnd::Gone(reason)) => Err(self.gone(reason, "waiting for the ready marker")),
        }
    }

    /// Sends one learner turn and waits for the mentor's reply.
    pub fn send_turn(&mut self, prompt: &str) -> Result<&TurnRecord, PaneError> {
        let turn = u32::try_from(self.records.len()).unwrap_or(u32::MAX) + 1;
        if turn > self.limits.max_turns {
            return Err(PaneError::TurnCeiling {
                max: self.limits.max_turns,
                pane: self.pane.clone(),
            });
        }
        if let Err(fault) = studyloop_actors::turn_text::check(prompt) {
            return Err(PaneError::UnsafeTurn {
                turn,
                pane: self.pane.clone(),
                fault,
            });
        }
        let (stub_turn, marker) = match &self.proof {
            Proof::StubMarker { marker, next_turn } => (
                Some(*next_turn),
                Some(screen::squash(&marker(*next_turn, prompt))),
            ),
            Proof::NewContent => (None, None),
        };
        self.drain();
        let baseline = self.capture()?;
        let from = baseline
            .lines()
            .count()
            .saturating_sub(screen::MARKER_WINDOW);
        self.type_text(prompt)?;
        let echo_deadline = Instant::now() + self.limits.echo_timeout;
        let typed = match self.wait(echo_deadline, self.limits.typed_quiet, |s| {
            screen::shows_echo(s, prompt)
        }) {
            Ok(Settled { screen, .. }) | Err(WaitEnd::TimedOut(screen)) => screen,
            Err(WaitEnd::Gone(reason)) => return Err(self.gone(reason, "typing a turn")),
        };
        self.named_key("Enter")?;
        let start = Instant::now();
        // An Ink TUI under load can still drop an Enter: if the settled screen
        // `typed` has not changed at all after ENTER_RETRY, press Enter again (an
        // Enter on an already-submitted, empty input is a no-op in every harness
        // here).
        for _ in 0..ENTER_RETRIES {
            match self.wait(Instant::now() + ENTER_RETRY, Duration::ZERO, |s| s != typed) {
                Ok(_) => break,
                Err(WaitEnd::TimedOut(_)) => self.named_key("Enter")?,
                Err(WaitEnd::Gone(_)) => break,
            }
        }
        let (idle, busy) = (self.markers.idle.clone(), self.markers.busy.clone());
        let refusal = self.refusal;
        let proved = |s: &str| match &marker {
            Some(m) => screen::squash(s).contains(m.as_str()),
            None => !screen::new_lines(&baseline, s, prompt).is_empty(),
        };
        // Idle with the proof, or idle with a refused login and no proof: after that
        // no reply comes (the harness gave up), so waiting out the turn timeout would
        // only cost time (a logged-out codex took the whole 90 s).
        let done = |s: &str| {
            (proved(s) || screen::login_refusal(refusal, &baseline, s, prompt).is_some())
                && screen::is_idle(s, idle.as_ref(), busy.as_ref())
        };
        let waited = self.wait(start + self.limits.turn_timeout, self.limits.quiet, done);
        let refused = match &waited {
            Ok(Settled { screen: s, .. }) if !proved(s) => {
                screen::login_refusal(refusal, &baseline, s, prompt)
            }
            _ => None,
        };
        let elapsed_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut record = TurnRecord {
            turn,
            stub_turn,
            marker: marker.clone(),
            prompt: prompt.to_owned(),
            reply: None,
            screen: String::new(),
            elapsed_ms,
            settle_ms: None,
            outcome: TurnOutcome::TimedOut,
        };
        if let (Some(evidence), Ok(Settled { screen: s, .. })) = (refused, &waited) {
            record.screen = s.clone();
            record.outcome = TurnOutcome::LoginRefused;
            self.records.push(record);
            self.turn_ends.push(self.cast.len());
            return Err(PaneError::LoginRefused {
                turn,
                pane: self.pane.clone(),
                evidence,
            });
        }
        match waited {
            Ok(Settled { screen: s, settle }) => {
                record.reply = screen::extract_reply(
                    &s,
                    from,
                    prompt,
                    self.markers.idle.as_ref(),
                    marker.as_deref(),
                );
                record.settle_ms = settle.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                record.screen = s;
                record.outcome = TurnOutcome::Replied;
                if let Proof::StubMarker { next_turn, .. } = &mut self.proof {
                    *next_turn += 1;
                }
                self.records.push(record);
                self.turn_ends.push(self.cast.len());
                Ok(self.records.last().expect("just pushed"))
            }
            Err(end) => {
                // Record the screen FIRST: the evidence of a stuck turn is the
                // point of the timeout path.
                let gone = match end {
                    WaitEnd::TimedOut(s) => {
                        record.screen = s;
                        None
                    }
                    WaitEnd::Gone(reason) => {
                        record.screen = self.capture().unwrap_or_default();
                        Some(reason)
                    }
                };
                self.records.push(record);
                self.turn_ends.push(self.cast.len());
                Err(match gone {
                    Some(reason) => self.gone(reason, "waiting for a reply"),
                    None => PaneError::TurnTimeout {
                        turn,
                        pane: self.pane.clone(),
                        timeout: self.limits.turn_timeout,
                    },
                })
            }
        }
    }

    /// Sends keys one by one, letting the screen settle in between (a TUI's
    /// popup must render before the Enter that picks from it).
    pub(crate) fn send_keys(&mut self, keys: &[Key]) -> Result<(), PaneError> {
        for key in keys {
            match key {
                Key::Text(t) => self.type_text(t)?,
                Key::Named(k) => self.named_key(k)?,
            }
            let settle = Instant::now() + Duration::from_millis(400);
            if let Err(WaitEnd::Gone(_)) = self.wait(settle, Duration::from_millis(150), |_| true) {
                // The harness exiting on an exit key is the expected outcome.
                break;
            }
        }
        Ok(())
    }

    /// Pending output events are folded into the stream log and dropped.
    fn drain(&mut self) {
        while let Ok(event) = self.control.events().try_recv() {
            if let Event::Output { pane, bytes, at } = event {
                self.log_output(&pane, &bytes, at);
            }
        }
    }

    fn log_output(&mut self, pane: &str, bytes: &[u8], at: Instant) {
        if pane == self.pane {
            self.cast.push(at, bytes);
            self.stream.extend_from_slice(bytes);
            if self.stream.len() > STREAM_CAP {
                let cut = self.stream.len() - STREAM_CAP;
                self.stream.drain(..cut);
            }
        }
    }

    /// Blocks on pushed events until `done(screen)` holds and the pane has
    /// been quiet for `quiet`, or `deadline` passes.
    fn wait(
        &mut self,
        deadline: Instant,
        quiet: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Result<Settled, WaitEnd> {
        let mut screen = self.capture().map_err(|e| WaitEnd::Gone(e.to_string()))?;
        let mut ok = done(&screen);
        let mut last_output: Option<Instant> = None;
        let quiet_from = Instant::now();
        loop {
            let now = Instant::now();
            let settled_at = last_output.unwrap_or(quiet_from) + quiet;
            if ok && now >= settled_at {
                return Ok(Settled {
                    screen,
                    settle: last_output.map(|t| now - t),
                });
            }
            if now >= deadline {
                return Err(WaitEnd::TimedOut(screen));
            }
            let until = if ok {
                settled_at.min(deadline)
            } else {
                deadline
            };
            match self.control.events().recv_timeout(until - now) {
                Ok(Event::Output { pane, bytes, at }) => {
                    self.log_output(&pane, &bytes, at);
                    if pane != self.pane {
                        continue;
                    }
                    last_output = Some(at);
                    // One capture per burst: fold everything already queued.
                    while let Ok(event) = self.control.events().try_recv() {
                        match event {
                            Event::Output { pane, bytes, at } => {
                                self.log_output(&pane, &bytes, at);
                                if pane == self.pane {
                                    last_output = Some(at);
                                }
                            }
                            Event::Exit { reason } => {
                                return Err(WaitEnd::Gone(reason.unwrap_or_else(|| "exit".into())));
                            }
                            Event::Closed => {
                                return Err(WaitEnd::Gone("control client closed".into()));
                            }
                        }
                    }
                    screen = self.capture().map_err(|e| WaitEnd::Gone(e.to_string()))?;
                    ok = done(&screen);
                }
                Ok(Event::Exit { reason }) => {
                    return Err(WaitEnd::Gone(reason.unwrap_or_else(|| "exit".into())));
                }
                Ok(Event::Closed) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(WaitEnd::Gone("control client closed".into()));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    fn gone(&self, reason: String, phase: &'static str) -> PaneError {
        PaneError::Gone {
            pane: self.pane.clone(),
            reason,
            phase,
        }
    }
}
