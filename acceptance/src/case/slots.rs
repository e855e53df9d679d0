//! The resources a case starts, one typed slot each, released in ONE fixed
//! order — the reverse of how a case builds them: browser, ACP session, tmux
//! server, product server, stub provider, then leftover processes and the
//! scratch world last (everything else lives inside it). The same order runs
//! from `Case::finish`, from `Drop` (a panic that escaped the engine) and
//! after a Ctrl-C: putting a resource in its slot also watches it for the
//! interrupt handler (`crate::interrupt`), which stops it at once so a step
//! blocked on it wakes, and the case then finishes through this release.

use std::path::PathBuf;
use std::time::Duration;

use studyloop_stubs::StubProvider;

use super::record::CaseRecord;
use crate::interrupt::{self, Stop, Watch};
use crate::scratch::Scratch;
use crate::tmux::Tmux;
use crate::web_acp::browser::Browser;
use crate::web_acp::{AcpMentor, Stopped, WebServer};

/// SIGTERM grace for the product server.
const SERVER_STOP_GRACE: Duration = Duration::from_secs(15);
/// How long stray processes get between SIGTERM and SIGKILL before the sweep.
const LEFTOVER_GRACE: Duration = Duration::from_millis(1500);

/// A case's resources. Fields are declared in release order, so even a plain
/// drop releases them in it.
#[derive(Default)]
pub struct Slots {
    /// Headless Chromium (browser lanes).
    pub browser: Option<Browser>,
    /// The session socket as the learner's mentor (web cases).
    pub acp: Option<AcpMentor>,
    /// The product's tmux server (cli-tmux lanes).
    pub tmux: Option<Tmux>,
    /// `studyloop web` (web cases).
    pub server: Option<WebServer>,
    /// The cell's own stub model provider (stub-provider mode).
    pub stub: Option<StubProvider>,
    /// The scratch world everything else runs in.
    pub scratch: Option<Scratch>,
    watches: Vec<Watch>,
}

/// What a release found: facts for notes and problems for the cleanup proof.
#[derive(Debug, Default)]
pub struct Released {
    /// The scratch root, when there was a world.
    pub root: Option<PathBuf>,
    /// The product server's exit code on SIGTERM (`Some(None)`: killed).
    pub(crate) server_exit: Option<Option<i32>>,
    /// Processes stopped after the tmux server (they had left its group).
    pub stopped: Vec<String>,
    /// Why the sweep refused, if it did.
    pub sweep: Option<String>,
    /// Package-registry URLs the harness fetched from the scratch HOME (read before
    /// the sweep; a hermetic case must have none).
    pub registry_fetches: Vec<String>,
    /// A real-auth grok cell: its real trust file and the entries of this world still
    /// in it after the close (`Err`: the file could not be read).
    pub grok_trust_left: Option<(PathBuf, Result<Vec<String>, String>)>,
}

impl Slots {
    /// Puts the scratch world in its slot.
    pub fn put_scratch(&mut self, scratch: Scratch) -> &Scratch {
        self.scratch.insert(scratch)
    }

    /// Puts the tmux server in its slot; a Ctrl-C kills it.
    pub(crate) fn put_tmux(&mut self, tmux: Tmux) -> &Tmux {
        self.watches
            .push(interrupt::watch(Stop::Tmux(tmux.clone())));
        self.tmux.insert(tmux)
    }

    /// Puts the product server in its slot; a Ctrl-C sends its group SIGTERM.
    pub(crate) fn put_server(&mut self, server: WebServer) -> &mut WebServer {
        self.watch_group(server.pid());
        self.server.insert(server)
    }

    /// Puts the browser in its slot; a Ctrl-C sends its group SIGTERM.
    pub fn put_browser(&mut self, browser: Browser) -> &Browser {
        self.watch_group(browser.pid());
        self.browser.insert(browser)
    }

    /// Puts the stub provider in its slot. It is NOT stopped by a Ctrl-C
    /// (a harness would retry against a dead port); it goes after them.
    pub(crate) fn put_stub(&mut self, stub: StubProvider) -> &StubProvider {
        self.stub.insert(stub)
    }

    /// Puts the session socket in its slot.
    pub fn put_acp(&mut self, acp: AcpMentor) -> &mut AcpMentor {
        self.acp.insert(acp)
    }

    fn watch_group(&mut self, pid: u32) {
        if let Ok(pgid) = i32::try_from(pid) {
            self.watches.push(interrupt::watch(Stop::Group(pgid)));
        }
    }

    /// Releases every slot in the fixed order, keeping what the resources
    /// left (socket frames, server log, stub request log) in `record`.
    pub fn release(&mut self, record: &mut CaseRecord) -> Released {
        let mut out = Released {
            root: self.scratch.as_ref().map(|s| s.root().to_owned()),
            ..Released::default()
        };
        if let Some(browser) = self.browser.take() {
            browser.close();
        }
        if let Some(acp) = self.acp.take()
            && let Err(e) = keep_socket_evidence(record, &acp.stop())
        {
            record.notes.push(e.to_string());
        }
        // The harness runs in the product's tmux panes: stop their process
        // groups and the server before anything is swept.
        if let Some(tmux) = self.tmux.take() {
            tmux.kill_server();
        }
        if let Some(mut server) = self.server.take() {
            out.server_exit = Some(server.stop(SERVER_STOP_GRACE));
            record.attach("product/web-server.log", server.output());
        }
        if let Some(mut stub) = self.stub.take() {
            if let Ok(log) = std::fs::read(stub.log_path()) {
                record.attach("stub-requests.jsonl", log);
            }
            stub.stop();
        }
        if let Some(root) = &out.root {
            // A harness may have forked out of its pane's process group, or be
            // flushing its session files; stop it before the sweep races it.
            out.stopped = crate::scratch::leftovers::stop_leftovers(root, LEFTOVER_GRACE);
        }
        if let Some(scratch) = self.scratch.take() {
            let trust = scratch.grok_trust().cloned();
            out.registry_fetches = crate::scratch::registry::registry_fetches(scratch.home());
            out.sweep = scratch
                .close()
                .err()
                .map(|e| format!("the scratch sweep refused: {e}"));
            if let (Some(trust), Some(root)) = (trust, &out.root) {
                let left = trust.entries_inside(root).map_err(|e| e.to_string());
                out.grok_trust_left = Some((trust.file().to_owned(), left));
            }
        }
        self.watches.clear();
        out
    }
}

/// Keeps a stopped session socket's turns (`ws-turns.json`) and frames
/// (`ws-frames.jsonl`) in `record`.
///
/// # Errors
/// [`Unserialisable`] naming the file (nothing empty is written for it).
pub(crate) fn keep_socket_evidence(
    record: &mut CaseRecord,
    done: &Stopped,
) -> Result<(), Unserialisable> {
    let failed = |file| {
        move |e: serde_json::Error| Unserialisable {
            file,
            detail: e.to_string(),
        }
    };
    record.attach(
        "ws-turns.json",
        done.turns_json().map_err(failed("ws-turns.json"))?,
    );
    record.attach(
        "ws-frames.jsonl",
        done.frames_jsonl().map_err(failed("ws-frames.jsonl"))?,
    );
    Ok(())
}

/// An evidence file that could not be serialised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("serialising {file}: {detail}")]
pub struct Unserialisable {
    /// The bundle file.
    pub file: &'static str,
    /// The serde error.
    pub detail: String,
}

impl Drop for Slots {
    fn drop(&mut self) {
        // Only reached when a case never finished (a panic in the engine
        // itself): release in the same order, the evidence is lost anyway.
        let mut scrap = CaseRecord::default();
        let _ = self.release(&mut scrap);
    }
}
