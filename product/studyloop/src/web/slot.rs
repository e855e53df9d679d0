//! The one live web session of this server process ("the slot"): its
//! transport (PTY or ACP), who is attached, and how it ends.
//!
//! Rules (reference §5.2): only the newest WebSocket consumes events (an
//! older one is told `attach_superseded`); a plain disconnect holds the session
//! for a grace period in case the browser returns; a session nobody ever
//! attached to is released after the same period. Ending is idempotent: the
//! first caller takes the session out of the slot, stops the transport (whole
//! process group) and runs the end hook (the product's common end path) once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::watch;

use super::acp::AcpSession;
use super::pty::PtySession;

/// How long a detached or never-attached session is held.
pub const ATTACH_GRACE: Duration = Duration::from_secs(90);

/// What the web layer knows about the live session (also the JSON of `state`).
#[derive(Debug, Clone, Serialize)]
pub struct LiveInfo {
    /// The study session id.
    pub study_session_id: String,
    /// The topic.
    pub topic: String,
    /// Energy 1..10.
    pub energy: u8,
    /// The harness name.
    pub agent: String,
    /// `pty` or `acp`.
    pub transport: &'static str,
    /// `focus` or `planning`.
    pub purpose: String,
    /// `study` or `body-double`.
    pub origin: String,
    /// RFC 3339 start time.
    pub started_at: String,
}

/// The running child.
#[derive(Debug)]
pub enum Transport {
    /// A terminal.
    Pty(PtySession),
    /// An ACP agent.
    Acp(AcpSession),
}

/// A live session in the slot.
#[derive(Debug)]
pub struct Live {
    /// Its description.
    pub info: LiveInfo,
    /// Its child.
    pub transport: Transport,
    attach: watch::Sender<u64>,
    detached_at: Mutex<Option<Instant>>,
    attached_ever: AtomicBool,
    created: Instant,
    drill: Mutex<Option<DrillBinding>>,
}

/// The Labs drill bound to a live session (`web::labs`): server-side state,
/// so every tab and a reload see the same active drill. It lives and dies
/// with the session.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DrillBinding {
    /// `module/deck/task`, as `GET /api/labs` lists it.
    pub id: String,
    /// The commands the learner runs in their terminal, in phase order.
    pub commands: Vec<String>,
    /// Whether Start drill started this session (rather than binding a live one).
    pub started_session: bool,
    /// RFC 3339 time of the binding.
    pub at: String,
}

impl Live {
    /// Wraps a started transport; nobody is attached yet.
    #[must_use]
    pub fn new(info: LiveInfo, transport: Transport) -> Self {
        Self {
            info,
            transport,
            attach: watch::Sender::new(0),
            detached_at: Mutex::new(None),
            attached_ever: AtomicBool::new(false),
            created: Instant::now(),
            drill: Mutex::new(None),
        }
    }

    /// The bound drill, if any.
    #[must_use]
    pub fn drill(&self) -> Option<DrillBinding> {
        self.drill
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Binds `binding` (replacing any other); returns the one it replaced.
    pub fn bind_drill(&self, binding: DrillBinding) -> Option<DrillBinding> {
        self.drill
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .replace(binding)
    }

    /// Unbinds the drill; returns it.
    pub fn unbind_drill(&self) -> Option<DrillBinding> {
        self.drill
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// Hands `text` to the agent: to an ACP agent as one prompt, to a PTY as
    /// typed input followed by Enter (how a `practice_check` block and the
    /// Labs notices reach the mentor).
    ///
    /// # Errors
    /// The transport's error, as text.
    pub fn tell(&self, text: &str) -> Result<(), String> {
        match &self.transport {
            Transport::Acp(a) => a.prompt(text).map_err(|e| e.to_string()),
            Transport::Pty(p) => p
                .write(format!("{text}\r").as_bytes())
                .map_err(|e| e.to_string()),
        }
    }

    /// Registers a new socket as the consumer; returns its generation and a
    /// receiver that changes when a newer socket attaches.
    pub fn attach(&self) -> (u64, watch::Receiver<u64>) {
        let mut generation = 0;
        self.attach.send_modify(|g| {
            *g += 1;
            generation = *g;
        });
        self.attached_ever.store(true, Ordering::Release);
        *self
            .detached_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        (generation, self.attach.subscribe())
    }

    /// Marks socket `generation` as gone (ignored if a newer one took over).
    pub fn detach(&self, generation: u64) {
        if *self.attach.borrow() == generation {
            *self
                .detached_at
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        }
    }

    /// Whether a browser is attached right now.
    #[must_use]
    pub fn detached(&self) -> bool {
        !self.attached_ever.load(Ordering::Acquire)
            || self
                .detached_at
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .is_some()
    }

    /// Whether the grace period ran out (detached, or never attached, too long).
    #[must_use]
    pub fn abandoned(&self, grace: Duration) -> bool {
        if !self.attached_ever.load(Ordering::Acquire) {
            return self.created.elapsed() > grace;
        }
        self.detached_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|t| t.elapsed() > grace)
    }

    /// Whether the child has already ended by itself.
    #[must_use]
    pub fn child_ended(&self) -> bool {
        match &self.transport {
            Transport::Pty(p) => p.events().is_closed() || p.has_exited(),
            Transport::Acp(a) => a.has_stopped(),
        }
    }

    /// The child's pid (`child_pid` in the state file).
    #[must_use]
    pub fn child_pid(&self) -> Option<u32> {
        match &self.transport {
            Transport::Pty(p) => Some(p.pid()),
            Transport::Acp(a) => a.agent_pid(),
        }
    }

    async fn stop_transport(self: &Arc<Self>) {
        match &self.transport {
            Transport::Acp(a) => a.stop().await,
            Transport::Pty(_) => {
                // The PTY stop blocks on waits; keep it off the async workers.
                let me = self.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    if let Transport::Pty(p) = &me.transport {
                        p.stop_blocking(Duration::from_secs(2));
                    }
                })
                .await;
            }
        }
    }
}

/// What happens after a live session is taken out of the slot: the product's
/// common end path (notes, DB row, state `ended`). Runs on a blocking thread.
pub type EndHook =
    Arc<dyn Fn(&LiveInfo, &str) -> Result<(), crate::session::SessionError> + Send + Sync>;

/// How the last session ended (for `state` when idle).
#[derive(Debug, Clone, Serialize)]
pub struct Release {
    /// Its id.
    pub study_session_id: String,
    /// Its topic.
    pub topic: String,
    /// Why it ended: `ended` (asked), `exit` (the child ended), `abandoned`, `superseded`.
    pub reason: String,
    /// When.
    pub at: String,
    /// The end hook's error, if it failed.
    pub error: Option<String>,
}

/// The slot.
pub struct Slot {
    live: Mutex<Option<Arc<Live>>>,
    last: Mutex<Option<Release>>,
    on_end: EndHook,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("live", &self.current().map(|l| l.info.clone()))
            .finish()
    }
}

impl Slot {
    /// An empty slot whose sessions end through `on_end`.
    #[must_use]
    pub fn new(on_end: EndHook) -> Self {
        Self {
            live: Mutex::new(None),
            last: Mutex::new(None),
            on_end,
        }
    }

    /// The live session, if any.
    #[must_use]
    pub fn current(&self) -> Option<Arc<Live>> {
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Puts a session in the slot; `Err` gives it back when one is already live.
    ///
    /// # Errors
    /// The rejected session, so the caller can stop it.
    pub fn occupy(&self, live: Arc<Live>) -> Result<(), Arc<Live>> {
        let mut slot = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_some() {
            return Err(live);
        }
        *slot = Some(live);
        Ok(())
    }

    /// The last release, when the slot is idle.
    #[must_use]
    pub fn last_release(&self) -> Option<Release> {
        self.last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Ends the live session `id` (or any, with `None`): takes it out, stops
    /// the child's group, runs the end hook. `None` if nothing matched.
    pub async fn end(&self, id: Option<&str>, reason: &str, run_hook: bool) -> Option<LiveInfo> {
        let live = {
            let mut slot = self
                .live
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match (&*slot, id) {
                (Some(l), Some(id)) if l.info.study_session_id != id => return None,
                (None, _) => return None,
                _ => slot.take()?,
            }
        };
        live.stop_transport().await;
        let error = if run_hook {
            let (hook, info, why) = (self.on_end.clone(), live.info.clone(), reason.to_owned());
            // `last_release.error` is the JSON a reader sees: the typed error's message.
            match tokio::task::spawn_blocking(move || hook(&info, &why)).await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(e) => Some(format!("end hook panicked: {e}")),
            }
        } else {
            None
        };
        *self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Release {
            study_session_id: live.info.study_session_id.clone(),
            topic: live.info.topic.clone(),
            reason: reason.to_owned(),
            at: crate::clock::now().to_string(),
            error,
        });
        Some(live.info.clone())
    }

    /// One reaper pass: ends a session whose child exited, or that was
    /// abandoned past `grace`.
    pub async fn reap(&self, grace: Duration) {
        let Some(live) = self.current() else { return };
        let id = live.info.study_session_id.clone();
        if live.child_ended() {
            self.end(Some(&id), "exit", true).await;
        } else if live.abandoned(grace) {
            self.end(Some(&id), "abandoned", true).await;
        }
    }
}
