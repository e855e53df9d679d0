//! The first steps of every live lane (CLI/tmux and web ACP alike): the
//! cell's scratch world and its tmux, the harness binary with its version, and
//! the model path (the cell's own stub provider, or the operator's real auth)
//! provisioned into the scratch HOME.

use studyloop_stubs::StubProvider;

use super::cli_tmux::CLI_TIMEOUT;
use super::{Lane, LaneFailure};
use crate::bins;
use crate::harness::provision;
use crate::probe::install_hint;
use crate::scratch::Scratch;
use crate::selection::AuthMode;
use crate::tmux::Tmux;

/// A scratch world for the cell, its tmux, and the interrupt watch on it.
pub(crate) fn make_scratch(l: &mut Lane<'_>) -> Result<(), LaneFailure> {
    let scratch = Scratch::create_with(l.ctx.caller.clone(), l.ctx.selection.auth_mode)
        .map_err(|e| LaneFailure::errored(format!("could not create a scratch world: {e}")))?;
    l.env = scratch.env();
    let tmux = Tmux::for_tmpdir(scratch.socket_dir(), l.env.iter())
        .map_err(|e| LaneFailure::errored(e.to_string()))?;
    l.watch = Some(crate::interrupt::watch(tmux.clone()));
    l.tmux = Some(tmux);
    l.notes
        .push(format!("scratch root: {}", scratch.root().display()));
    l.scratch = Some(scratch);
    Ok(())
}

/// The harness binary on the cell's PATH and its `--version` line; missing
/// is a skip naming the install.
pub(crate) fn resolve_binary(l: &mut Lane<'_>) -> Result<(), LaneFailure> {
    let h = l.harness;
    let binary = l.env.find_binary(h.binary()).ok_or_else(|| {
        LaneFailure::skipped(format!(
            "{} not found on PATH ({})",
            h.binary(),
            install_hint(h)
        ))
    })?;
    let scratch = l.scratch()?;
    let mut cmd = scratch.command(&binary);
    cmd.arg("--version");
    let done = scratch
        .run(&mut cmd, CLI_TIMEOUT)
        .map_err(|e| LaneFailure::errored(e.to_string()))?;
    let text = format!("{}{}", done.stdout_text(), done.stderr_text());
    l.version = text
        .lines()
        .map(str::trim)
        .find(|s| s.bytes().any(|b| b.is_ascii_digit()))
        .map(str::to_owned);
    l.binary = Some(binary);
    Ok(())
}

/// The model path for the selected auth mode, written into the scratch HOME.
pub(crate) fn provision_harness(l: &mut Lane<'_>) -> Result<(), LaneFailure> {
    let mode = l.ctx.selection.auth_mode;
    if mode == AuthMode::StubProvider {
        if l.spec.stub_config.is_none() {
            return Err(LaneFailure::skipped(format!(
                "{} has no stub-provider recipe: it cannot be installed here",
                l.harness
            )));
        }
        let binary = bins::path("studyloop-stub-provider")
            .map_err(|e| LaneFailure::errored(e.to_string()))?;
        let scratch = l.scratch()?;
        let dir = scratch.root().join("stub");
        let seed = l.seed.to_string();
        // The world's env and its own process group: a Ctrl-C does not kill
        // it under the harness, and its HOME marks it for the reaper.
        let cmd = scratch.command(&binary);
        // issue 13 (h-stub): lanes meet realistic Markdown replies, not the echo line.
        let args = ["--seed", seed.as_str(), "--replies", "realistic"];
        let stub = StubProvider::spawn_command(cmd, &dir, args)
            .map_err(|e| LaneFailure::errored(e.to_string()))?;
        if let Some(pid) = stub.pid() {
            scratch.adopt_group(pid);
        }
        l.stub = Some(stub);
    }
    let url = l.stub.as_ref().map(StubProvider::base_url);
    let home = l.scratch()?.home().to_owned();
    let done = provision::provision(l.spec, mode, &home, url.as_deref(), &l.env)
        .map_err(|e| LaneFailure::errored(e.to_string()))?;
    for (name, value) in &done.env {
        l.env = std::mem::take(&mut l.env)
            .with_var(name, value)
            .map_err(|e| LaneFailure::errored(e.to_string()))?;
    }
    l.notes.extend(done.notes);
    Ok(())
}
