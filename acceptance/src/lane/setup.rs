//! The first steps of every live lane (CLI/tmux and web ACP alike): the
//! cell's scratch world and its tmux, the harness binary with its version, and
//! the model path (the cell's own stub provider, or the operator's real auth)
//! provisioned into the scratch HOME and proven by the harness's authenticated probe
//! ([`model_path`]).

use std::time::Duration;

use studyloop_stubs::StubProvider;

use crate::bins;
use crate::case::{Case, PROBE_STEP, StepFailure, Steps};
use crate::harness_spec::auth_probe::ProbeError;
use crate::harness_spec::install_hint;
use crate::harness_spec::provision;
use crate::scratch::Scratch;
use crate::tmux::Tmux;

/// How long a harness's `--version` may take (a cold npm shim starts slowly; the
/// product's own calls have `crate::door::CLI_TIMEOUT`, of the same length).
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// A scratch world for the cell's auth mode in its slot, and its env.
///
/// # Errors
/// The world could not be made.
pub fn make_world(l: &mut Case<'_>) -> Result<(), StepFailure> {
    let scratch = Scratch::create_with(l.ctx.caller.clone(), l.ctx.selection.auth_mode)
        .map_err(|e| StepFailure::errored(format!("could not create a scratch world: {e}")))?;
    l.env = scratch.env();
    l.record
        .notes
        .push(format!("scratch root: {}", scratch.root().display()));
    l.slots.put_scratch(scratch);
    Ok(())
}

/// [`make_world`] plus the product's tmux server handle, both in their slots.
///
/// # Errors
/// The world or the tmux handle could not be made.
pub(crate) fn make_scratch(l: &mut Case<'_>) -> Result<(), StepFailure> {
    make_world(l)?;
    let tmux = Tmux::for_tmpdir(l.scratch()?.socket_dir(), l.env.iter())
        .map_err(StepFailure::from_error)?;
    l.slots.put_tmux(tmux);
    Ok(())
}

/// The harness binary on the cell's PATH and its `--version` line; missing
/// is a skip naming the install.
/// # Errors
/// A skip when the binary is missing; errored when `--version` cannot run.
pub fn resolve_binary(l: &mut Case<'_>) -> Result<(), StepFailure> {
    let h = l.harness;
    let binary = l.env.find_binary(h.binary()).ok_or_else(|| {
        StepFailure::skipped(format!(
            "{} not found on PATH ({})",
            h.binary(),
            install_hint(h)
        ))
    })?;
    let scratch = l.scratch()?;
    let mut cmd = scratch.command(&binary);
    cmd.arg("--version");
    let done = scratch
        .run(&mut cmd, VERSION_TIMEOUT)
        .map_err(StepFailure::from_error)?;
    let text = format!("{}{}", done.stdout_text(), done.stderr_text());
    l.record.facts.harness_version = text
        .lines()
        .map(str::trim)
        .find(|s| s.bytes().any(|b| b.is_ascii_digit()))
        .map(str::to_owned);
    l.record.facts.binary_path = Some(binary.display().to_string());
    l.binary = Some(binary);
    Ok(())
}

/// The model path for the selected auth mode, written into the scratch HOME.
/// # Errors
/// A skip when the harness has no recipe for the mode; errored otherwise.
pub(crate) fn provision_harness(l: &mut Case<'_>) -> Result<(), StepFailure> {
    provision_harness_with(l, &[])
}

/// As [`provision_harness`]; in stub-provider mode the stub also gets
/// `stub_args` (e.g. `--tool-script <file>`: the mentor's scripted tool calls, or a
/// journey's `--fault-file`).
/// # Errors
/// As [`provision_harness`].
pub fn provision_harness_with(l: &mut Case<'_>, stub_args: &[&str]) -> Result<(), StepFailure> {
    let mode = l.ctx.selection.auth_mode;
    if mode.stub_mentor() {
        if l.spec.stub_config.is_none() {
            return Err(StepFailure::skipped(format!(
                "{} has no stub-provider recipe: it cannot be installed here",
                l.harness
            )));
        }
        let binary = bins::path("studyloop-stub-provider").map_err(StepFailure::from_error)?;
        let scratch = l.scratch()?;
        let dir = scratch.root().join("stub");
        let seed = l.seed.to_string();
        // STUDYLOOP_ACC_STUB_FAULT: the fault file exists from the start, so every model
        // request meets the fault (a journey's own `--fault-file` keeps its own switch).
        let fault_file = dir.join("fault");
        let selected_fault = l.ctx.selection.stub_fault.as_deref();
        if let Some(line) = selected_fault {
            if stub_args.contains(&"--fault-file") {
                return Err(StepFailure::errored(format!(
                    "STUDYLOOP_ACC_STUB_FAULT={line:?} cannot apply to this case: it switches its own stub faults (--fault-file); unset it for this cell"
                )));
            }
            provision::write_private(&fault_file, format!("{line}\n").as_bytes()).map_err(|e| {
                StepFailure::errored(format!(
                    "cannot write the stub fault file {}: {e}",
                    fault_file.display()
                ))
            })?;
        }
        // The world's env and its own process group: a Ctrl-C does not kill
        // it under the harness, and its HOME marks it for the reaper.
        let cmd = scratch.command(&binary);
        // Lanes and journeys meet realistic Markdown replies (issue 13), not the echo line.
        let mut args = vec!["--seed", seed.as_str(), "--replies", "realistic"];
        args.extend_from_slice(stub_args);
        let fault_arg = fault_file.display().to_string();
        if selected_fault.is_some() {
            args.extend(["--fault-file", fault_arg.as_str()]);
        }
        let stub = StubProvider::spawn_command(cmd, &dir, args).map_err(StepFailure::from_error)?;
        if let Some(pid) = stub.pid() {
            scratch.adopt_group(pid);
        }
        l.record.facts.seeds.push(("stub_nonce".into(), l.seed));
        l.slots.put_stub(stub);
        if let Some(line) = selected_fault {
            l.record
                .notes
                .push(format!("stub fault (STUDYLOOP_ACC_STUB_FAULT): {line}"));
        }
    }
    let url = l.slots.stub.as_ref().map(StubProvider::base_url);
    let home = l.scratch()?.home().to_owned();
    let done = provision::provision(l.spec, mode, &home, url.as_deref(), &l.env)
        .map_err(StepFailure::from_error)?;
    for (name, value) in &done.env {
        l.env = std::mem::take(&mut l.env)
            .with_var(name, value)
            .map_err(StepFailure::from_error)?;
    }
    l.record.notes.extend(done.notes);
    let (env, trust) =
        crate::scratch::grok_trust::real_auth_opt_in(mode, l.harness, std::mem::take(&mut l.env))
            .map_err(StepFailure::from_error)?;
    l.env = env;
    if let Some(trust) = trust {
        l.record.notes.push(format!(
            "grok real-auth: {}=1 (grok's trust dialog cannot be answered unattended); this world's entries are removed from {} on close",
            crate::scratch::grok_trust::TRUST_VAR,
            trust.file().display()
        ));
        l.slots
            .scratch
            .as_mut()
            .ok_or_else(|| StepFailure::errored("no scratch world"))?
            .restore_grok_trust_on_close(trust);
    }
    l.provisioned = true;
    Ok(())
}

/// The harness's one-shot mode answers through the provisioned model path
/// (real-auth: the operator's; stub-provider and local-model: the stub, proven by its
/// reply). A harness that says it is not signed in is a named skip ("not logged in: …;
/// run …"), never an error.
/// # Errors
/// A skip when not logged in; errored when the probe fails otherwise.
pub(crate) fn authenticated_probe(l: &mut Case<'_>) -> Result<(), StepFailure> {
    let done = l.probe_login("probe").map_err(|e| match e {
        ProbeError::NotLoggedIn(out) => StepFailure::skipped(out.to_string()),
        other => StepFailure::from_error(other),
    })?;
    l.record.notes.push(format!(
        "authenticated probe: {} ms, reply {:?}",
        done.elapsed.as_millis(),
        done.reply
    ));
    Ok(())
}

/// The model path of every lane, as two recorded steps: provisioning for the auth
/// mode (`stub_args` as in [`provision_harness_with`]), then, wherever the mode allows
/// (`Case::can_probe_login`), the authenticated probe, so a harness that is not signed
/// in is a named skip before anything is driven.
/// # Errors
/// The failing step's.
pub(crate) fn model_path(l: &mut Case<'_>, stub_args: &[&str]) -> Result<(), StepFailure> {
    l.step("provision harness for the auth mode", |c| {
        provision_harness_with(c, stub_args)
    })?;
    if l.can_probe_login() {
        l.step(PROBE_STEP, authenticated_probe)?;
    }
    Ok(())
}
