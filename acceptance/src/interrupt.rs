//! Ctrl-C for live lanes: the first SIGINT (or SIGTERM) to the runner marks
//! the run interrupted (the cancel flag, [`interrupted`]) and kills every live
//! lane's tmux server, so a driver blocked on pane output wakes at once (its
//! control client sees `%exit`). Every other blocking step polls the flag: a
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

use crate::tmux::Tmux;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static LIVE: Mutex<Vec<(u64, Tmux)>> = Mutex::new(Vec::new());
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// Installs the handler once per process (a no-op after the first call).
pub fn install() -> Result<(), String> {
    INSTALLED
        .get_or_init(|| {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
                .map_err(|e| format!("cannot install the SIGINT handler: {e}"))?;
            std::thread::Builder::new()
                .name("studyloop-interrupt".into())
                .spawn(move || {
                    for signal in signals.forever() {
                        if INTERRUPTED.swap(true, Ordering::SeqCst) {
                            eprintln!("studyloop-acceptance: second signal {signal}: exiting now");
                            std::process::exit(130);
                        }
                        eprintln!(
                            "studyloop-acceptance: signal {signal}: stopping live lanes (their evidence is still written); signal again to exit at once"
                        );
                        for (_, tmux) in live().iter() {
                            tmux.kill_server();
                        }
                    }
                })
                .map(drop)
                .map_err(|e| format!("cannot start the interrupt thread: {e}"))
        })
        .clone()
}

/// Whether the run was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// `Err(reason)` once the run is interrupted, for a wait loop to return at
/// once instead of waiting out its deadline; `waiting_for` names the wait.
pub fn check(waiting_for: &str) -> Result<(), String> {
    if interrupted() {
        Err(format!(
            "interrupted (SIGINT/SIGTERM to the runner) while waiting for {waiting_for}"
        ))
    } else {
        Ok(())
    }
}

/// Registers a lane's tmux server to be killed on interrupt until the guard drops.
pub fn watch(tmux: Tmux) -> Watch {
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    live().push((id, tmux.clone()));
    if interrupted() {
        // Raced with the signal: stop it now rather than after a full step.
        tmux.kill_server();
    }
    Watch(id)
}

/// Unregisters the server on drop.
#[derive(Debug)]
pub struct Watch(u64);

impl Drop for Watch {
    fn drop(&mut self) {
        live().retain(|(id, _)| *id != self.0);
    }
}

fn live() -> std::sync::MutexGuard<'static, Vec<(u64, Tmux)>> {
    // The list stays consistent even if a holder panicked.
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
