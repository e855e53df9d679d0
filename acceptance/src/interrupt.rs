//! Ctrl-C for every live case (cli-tmux and web lanes, probes, UAT journeys):
//! the first SIGINT (or SIGTERM) to the runner marks the run interrupted (the
//! cancel flag, [`interrupted`]) and stops every watched resource: a case's
//! tmux server is killed, so a driver blocked on pane output wakes at once
//! (its control client sees `%exit`); a product server or browser gets SIGTERM
//! to its process group, so a blocked HTTP call or socket read ends. The
//! case engine (`crate::case`) installs the handler and watches each resource
//! it puts in a slot. Every other blocking step polls the flag: a
//! child run through `Scratch::run` (the authenticated probe, `--version`,
//! product commands) has its process group killed within milliseconds, and
//! the lane's waits return. The step fails as `cancelled` and the lane's outer
//! finally stops the stub, writes the evidence and sweeps the scratch tree.
//! Lanes that start after the interrupt end as cancelled before building
//! anything. A second signal exits at once (status 130) for an operator who
//! will not wait.
//!
//! Why the children are spared: a terminal's Ctrl-C goes to the whole
//! foreground process group. Every child the runner starts (harness, product,
//! stub provider) leads its own group, so only the runner sees the signal and
//! stops them in order; a stub killed by the signal left its harness retrying
//! against a dead port for the probe's full 90 s.
//!
//! What it is not: process-group bookkeeping (the scratch world does that);
//! this only turns a signal into the normal cleanup path instead of a kill.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use rustix::process::{Pid, Signal, kill_process_group};

use crate::tmux::Tmux;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static LIVE: Mutex<Vec<(u64, Stop)>> = Mutex::new(Vec::new());
static INSTALLED: OnceLock<Result<(), InterruptError>> = OnceLock::new();

/// Why the handler could not be installed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterruptError {
    /// The signal handler could not be registered.
    #[error(
        "cannot install the SIGINT handler: {0} (a Ctrl-C will kill the runner without cleanup)"
    )]
    Handler(String),
    /// The thread that turns signals into cleanup could not start.
    #[error(
        "cannot start the interrupt thread: {0} (a Ctrl-C will kill the runner without cleanup)"
    )]
    Thread(String),
}

/// A wait cut short by the interrupt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("interrupted (SIGINT/SIGTERM to the runner) while waiting for {waiting_for}")]
pub struct Interrupted {
    /// What the wait was for.
    pub(crate) waiting_for: String,
}

/// What the handler stops for a watched resource.
#[derive(Debug, Clone)]
pub enum Stop {
    /// A tmux server: killed (its clients see `%exit`).
    Tmux(Tmux),
    /// A child's process group (product server, browser driver): SIGTERM.
    Group(i32),
}

impl Stop {
    fn now(&self) {
        match self {
            Self::Tmux(tmux) => tmux.kill_server(),
            Self::Group(pgid) => {
                if let Some(group) = Pid::from_raw(*pgid) {
                    let _ = kill_process_group(group, Signal::TERM);
                }
            }
        }
    }
}

/// Installs the handler once per process (a no-op after the first call).
///
/// # Errors
/// [`InterruptError`] when the signal cannot be caught here.
pub fn install() -> Result<(), InterruptError> {
    INSTALLED
        .get_or_init(|| {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
                .map_err(|e| InterruptError::Handler(e.to_string()))?;
            std::thread::Builder::new()
                .name("studyloop-interrupt".into())
                .spawn(move || {
                    for signal in signals.forever() {
                        if INTERRUPTED.swap(true, Ordering::SeqCst) {
                            eprintln!("studyloop-acceptance: second signal {signal}: exiting now");
                            std::process::exit(130);
                        }
                        eprintln!(
                            "studyloop-acceptance: signal {signal}: stopping live cases (their evidence is still written); signal again to exit at once"
                        );
                        for (_, stop) in live().iter() {
                            stop.now();
                        }
                    }
                })
                .map(drop)
                .map_err(|e| InterruptError::Thread(e.to_string()))
        })
        .clone()
}

/// Whether the run was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// `Err` once the run is interrupted, for a wait loop to return at once
/// instead of waiting out its deadline; `waiting_for` names the wait.
///
/// # Errors
/// [`Interrupted`] naming the wait.
pub fn check(waiting_for: &str) -> Result<(), Interrupted> {
    if interrupted() {
        Err(Interrupted {
            waiting_for: waiting_for.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Registers a resource to be stopped on interrupt until the guard drops.
pub fn watch(stop: Stop) -> Watch {
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    live().push((id, stop.clone()));
    if interrupted() {
        // Raced with the signal: stop it now rather than after a full step.
        stop.now();
    }
    Watch(id)
}

/// Unregisters the resource on drop.
#[derive(Debug)]
pub struct Watch(u64);

impl Drop for Watch {
    fn drop(&mut self) {
        live().retain(|(id, _)| *id != self.0);
    }
}

fn live() -> std::sync::MutexGuard<'static, Vec<(u64, Stop)>> {
    // The list stays consistent even if a holder panicked.
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
