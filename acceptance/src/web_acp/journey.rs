//! The browser journey of the web ACP surface: the SPA in real Chromium
//! starts an ACP session from the Dashboard form, delivers the persona itself
//! (as the product's console does), and [`BrowserMentor`] types each learner
//! message into the console and reads the turn's finished assistant text,
//! answering any permission request the console shows as the learner would
//! (the console never answers one itself). Every step leaves a screenshot and
//! the page HTML in [`Snapshots`].
//!
//! Waits use the console's `data-*` attributes (`data-connected`, `data-mode`,
//! `data-busy`, `data-turns`), the stable contract between the SPA and its
//! drivers.

use std::time::Duration;

use serde_json::Value;
use studyloop_actors::{Mentor, MentorError, MentorReply};

use super::browser::{Browser, BrowserError};

/// Screenshots and HTML per step, as bundle files (`browser/NN-name.png|html`).
#[derive(Debug, Default)]
pub struct Snapshots {
    /// `(relative path, bytes)`.
    pub files: Vec<(String, Vec<u8>)>,
    count: usize,
}

impl Snapshots {
    /// Records the page now under `name`.
    ///
    /// # Errors
    /// [`BrowserError`] when the browser cannot capture.
    pub fn take(&mut self, browser: &Browser, name: &str) -> Result<(), BrowserError> {
        self.count += 1;
        let (png, html) = browser.snapshot()?;
        let stem = format!("browser/{:02}-{name}", self.count);
        self.files.push((format!("{stem}.png"), png));
        self.files.push((format!("{stem}.html"), html.into_bytes()));
        Ok(())
    }
}

/// Starts an ACP session for `agent` through the Dashboard form (its
/// "Resume my last session on this topic" box ticked when `resume`) and waits
/// until the console has delivered the persona (one finished turn).
///
/// # Errors
/// [`BrowserError`] naming the step that failed.
pub fn start_acp_session(
    browser: &Browser,
    shots: &mut Snapshots,
    base_url: &str,
    session: (&str, &str, bool),
    timeout: Duration,
) -> Result<(), BrowserError> {
    submit_acp_start(browser, shots, base_url, session)?;
    let ready = "#agent-console[data-connected='true'][data-mode='acp-chat'][data-busy='false'][data-turns='1']";
    let waited = wait_answering_permissions(browser, ready, timeout);
    shots.take(browser, "console-after-persona")?;
    waited.map(drop)
}

/// The first half of [`start_acp_session`]: a fresh page load, the Dashboard
/// form filled and submitted. Returns at once (the persona turn may still be
/// running, or waiting for the learner).
///
/// # Errors
/// [`BrowserError`] naming the step that failed.
pub fn submit_acp_start(
    browser: &Browser,
    shots: &mut Snapshots,
    base_url: &str,
    (topic, agent, resume): (&str, &str, bool),
) -> Result<(), BrowserError> {
    // A fresh page load: the console's turn counter starts at 0 for this
    // session even when the same tab held an earlier one.
    browser.goto("about:blank")?;
    browser.goto(&format!("{base_url}/#dashboard"))?;
    browser.wait_for(
        "body[data-agent-resolved] #start-form:not([hidden])",
        Duration::from_secs(15),
    )?;
    browser.fill("#start-topic", topic)?;
    // Selects by value: the picker lists every harness, installed or not.
    browser.eval(
        "document.getElementById('start-agent').value = arguments[0];\
         document.getElementById('start-transport').value = 'acp';\
         document.getElementById('start-purpose').value = 'study';\
         document.getElementById('start-resume').checked = arguments[1];",
        vec![Value::from(agent), Value::from(resume)],
    )?;
    shots.take(browser, "dashboard-filled")?;
    browser.click("#start-submit")
}

/// Waits up to `timeout` for an element matching `ready`, answering every
/// permission request the console shows as the learner would: by clicking one
/// of its buttons (allow once, else allow always, else the first). The console
/// never answers one itself (issue 27 item 7), so a journey whose agent asks
/// needs the learner's hand. Returns how many requests were answered.
///
/// # Errors
/// [`BrowserError::Step`] (`wait for …`) when `ready` never appears.
pub fn wait_answering_permissions(
    browser: &Browser,
    ready: &str,
    timeout: Duration,
) -> Result<u32, BrowserError> {
    const LOOK: &str = "if (document.querySelector(arguments[0])) return 'ready';\
        const b = [...document.querySelectorAll('#acp-log .acp-msg[data-role=\"permission\"][data-status=\"pending\"] button:not([disabled])')];\
        const pick = b.find(x => x.dataset.kind === 'allow_once') || b.find(x => x.dataset.kind === 'allow_always') || b[0];\
        if (!pick) return 'waiting';\
        document.querySelectorAll('[data-learner-pick]').forEach(x => x.removeAttribute('data-learner-pick'));\
        pick.dataset.learnerPick = '1';\
        return 'pick';";
    let deadline = std::time::Instant::now() + timeout;
    let mut answered = 0;
    loop {
        match browser.eval(LOOK, vec![Value::from(ready)])?.as_str() {
            Some("ready") => return Ok(answered),
            Some("pick") => {
                browser.click("[data-learner-pick]")?;
                answered += 1;
            }
            _ if std::time::Instant::now() >= deadline => {
                return Err(BrowserError::Step {
                    step: format!("wait for {ready}"),
                    detail: format!("not shown within {timeout:?}"),
                });
            }
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
        if let Err(e) = crate::interrupt::check(&format!("the page to show {ready}")) {
            return Err(BrowserError::Step {
                step: format!("wait for {ready}"),
                detail: e.to_string(),
            });
        }
    }
}

/// The SPA console as the learner actor's mentor.
#[derive(Debug)]
pub struct BrowserMentor<'b> {
    browser: &'b Browser,
    /// Per-step evidence.
    pub shots: Snapshots,
    turn_timeout: Duration,
    turns_done: u32,
}

impl<'b> BrowserMentor<'b> {
    /// A mentor over a console that has finished `turns_done` turns (1 after the persona).
    #[must_use]
    pub fn new(
        browser: &'b Browser,
        shots: Snapshots,
        turn_timeout: Duration,
        turns_done: u32,
    ) -> Self {
        Self {
            browser,
            shots,
            turn_timeout,
            turns_done,
        }
    }

    fn turn(&mut self, text: &str) -> Result<String, BrowserError> {
        self.browser
            .wait_for("#agent-console[data-busy='false']", self.turn_timeout)?;
        self.browser.fill("#console-input", text)?;
        self.browser.click("#console-send")?;
        self.turns_done += 1;
        let done = format!("#agent-console[data-turns='{}']", self.turns_done);
        let waited = wait_answering_permissions(self.browser, &done, self.turn_timeout);
        self.shots
            .take(self.browser, &format!("turn-{}", self.turns_done - 1))?;
        waited?;
        self.last_reply()
    }

    /// The last turn's finished assistant text (its Markdown source): the
    /// turn's text bubbles joined by a blank line (a tool call or a permission
    /// request between two stretches of text splits them into two bubbles).
    ///
    /// # Errors
    /// [`BrowserError`] when there is none, naming any error the console shows.
    pub fn last_reply(&self) -> Result<String, BrowserError> {
        let last = self.browser.eval(
            "const a = [...document.querySelectorAll('.acp-msg[data-role=\"assistant\"][data-status=\"final\"]')];\
             const turn = a.length ? a[a.length - 1].dataset.turn : null;\
             const e = [...document.querySelectorAll('.acp-msg[data-role=\"system\"]')]\
               .map(x => x.textContent).filter(t => t.startsWith('Error:'));\
             return {reply: a.filter(x => x.dataset.turn === turn).map(x => x.dataset.markdown || '')\
               .filter(t => t).join('\\n\\n'), errors: e};",
            Vec::new(),
        )?;
        let reply = last["reply"].as_str().unwrap_or_default().to_owned();
        if reply.is_empty() {
            return Err(BrowserError::Step {
                step: "read the reply".into(),
                detail: format!("no assistant text; console errors: {}", last["errors"]),
            });
        }
        Ok(reply)
    }

    /// Ends the session from the console's button and waits for `stopped`.
    ///
    /// # Errors
    /// [`BrowserError`].
    pub fn end(&mut self) -> Result<(), BrowserError> {
        self.browser.click("#console-stop")?;
        let waited = self.browser.wait_for(
            "#agent-console[data-stopped='true']",
            Duration::from_secs(20),
        );
        self.shots.take(self.browser, "ended")?;
        waited
    }
}

impl Mentor for BrowserMentor<'_> {
    fn send(&mut self, learner_message: &str) -> Result<MentorReply, MentorError> {
        match self.turn(learner_message) {
            Ok(reply) => Ok(MentorReply::new(reply)),
            Err(BrowserError::Step { step, detail }) if step.starts_with("wait for") => {
                Err(MentorError::TurnTimeout {
                    waited: self.turn_timeout,
                    detail: format!("{step}: {detail}"),
                })
            }
            Err(e) => Err(MentorError::Failed(e.to_string())),
        }
    }
}
