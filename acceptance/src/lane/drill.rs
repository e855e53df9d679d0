//! `drill::<harness>` and `drill::<harness>::acp`: a drill's check result
//! reaches a real harness in a live session (issue 19 item 7, the module
//! contract's "Adding a module" walk). In a scratch world the real
//! `studyloop` starts a study session with the pinned harness — in tmux
//! (`drill::<h>`) or in `studyloop web` over ACP (`drill::<h>::acp`) — then
//! `module new`, `module add`, and `drill check` behind a real
//! pseudo-terminal (`script(1)`) where `yes` is typed at the consent prompt,
//! as a learner would. The check phase runs contained; the CLI must say
//! `check: passed (exit 0)` and `Mentor told.`; the stub provider's request
//! log must show one `practice_check` block that arrived bounded (≤ 8 KiB),
//! labelled as data, closed, with every output line prefixed `| ` and the
//! drill's id and result — the log records those facts, never the text.
//! Stub-provider mode only: only the stub's log proves what reached the model.

use std::time::{Duration, Instant};

use super::cli_tmux::{end, start_study, stash_driver};
use super::setup::{make_scratch, model_path, resolve_binary};
use super::web_acp::{open_session, start_server};
use super::{gated_trial, run_lane};
use crate::case::{Case, Checks, RunDirBundle, StepFailure, Steps};
use crate::evidence::Surface;
use crate::runner::{Requirement, TrialContext, TrialSpec};
use crate::selection::{AuthMode, HarnessName};

/// The scaffold's one drill (`studyloop module new my-drills`).
const DRILL: &str = "my-drills/getting-started/ready-01";
/// How long the harness gets to send the block on to its model.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);
/// The product's bound on one block.
const MAX_BLOCK: u64 = 8 * 1024;

/// The trial name for `harness` over tmux (`acp == false`) or ACP.
#[must_use]
pub(crate) fn trial_name(harness: HarnessName, acp: bool) -> String {
    if acp {
        format!("drill::{harness}::acp")
    } else {
        format!("drill::{harness}")
    }
}

/// The trials of `harness`: tmux always, ACP when it has an ACP path.
#[must_use]
pub fn trials(harness: HarnessName) -> Vec<TrialSpec> {
    let mut out = vec![gated_trial(
        trial_name(harness, false),
        harness,
        |ctx, h| run_lane(ctx, h, over_tmux),
    )];
    if let Some(acp) = crate::harness_spec::spec(harness).acp {
        out.push(
            TrialSpec::gated(trial_name(harness, true), move |ctx| run_acp(ctx, harness))
                .requires(Requirement::HarnessSelected(harness))
                .requires(Requirement::BinaryOnScratchPath {
                    binary: acp.argv[0],
                    fix: crate::harness_spec::install_hint(harness),
                }),
        );
    }
    out
}

fn run_acp(ctx: &TrialContext, harness: HarnessName) -> crate::runner::TrialReport {
    Case::new(ctx, harness, Surface::WebAcp)
        .run(&RunDirBundle::new(ctx), over_acp)
        .report()
}

fn stub_only(c: &Case<'_>) -> Result<(), StepFailure> {
    if c.ctx.selection.auth_mode == AuthMode::StubProvider {
        return Ok(());
    }
    Err(StepFailure::skipped(
        "the drill proof reads the stub provider's request log: run it with STUDYLOOP_ACC_AUTH_MODE=stub-provider (the default)",
    ))
}

fn over_tmux(lane: &mut Case<'_>) -> Result<(), StepFailure> {
    stub_only(lane)?;
    lane.step("scratch world", make_scratch)?;
    lane.step("harness binary and version", resolve_binary)?;
    model_path(lane, &[])?;
    let title = format!("Drill proof: {}", lane.harness);
    let (state, session, driver) = start_study(lane, &title)?;
    let told = module_and_check(lane);
    stash_driver(lane, &driver, "drill");
    // What the agent's pane shows after the delivery (the driver reads only
    // while it waits for a turn, so its stream stops before the paste).
    if let (Ok(tmux), Some(pane)) = (lane.tmux(), state.mux_main_pane())
        && let Ok(screen) = tmux.run(&["capture-pane", "-p", "-t", pane])
    {
        lane.record.attach("screens/drill-pane.txt", screen);
    }
    told?;
    drop(driver);
    lane.step("study --end", |l| end(l, &session))
}

/// The ACP walk, step by step (also the UAT cell `journey::drill`'s steps).
///
/// # Errors
/// The failing step; a skip outside stub-provider mode.
pub fn over_acp(case: &mut Case<'_>) -> Result<(), StepFailure> {
    stub_only(case)?;
    case.step("scratch world", make_scratch)?;
    case.step("harness binary and version", resolve_binary)?;
    model_path(case, &[])?;
    case.step("studyloop web", start_server)?;
    let told = open_session(case)?.and_then(|_| module_and_check(case));
    let stopped = case.step("stop the session socket", Case::stop_acp);
    told?;
    stopped.map(drop)
}

/// `module new`, `module add`, `drill check` with typed consent, then the
/// checks on the CLI's words and on the stub's log.
fn module_and_check(c: &mut Case<'_>) -> Result<(), StepFailure> {
    c.step("module new my-drills", |l| {
        crate::door::studyloop(l, "module-new", &["module", "new", "my-drills"]).map(drop)
    })?;
    c.step("module add my-drills", |l| {
        crate::door::studyloop(l, "module-add", &["module", "add", "my-drills"]).map(drop)
    })?;
    let before = c.stub_records().map_err(StepFailure::from_error)?.len();
    let said = c.step("drill check, yes typed on a terminal", typed_check)?;
    let seen = c.step("the block reaches the model (stub log)", |l| {
        wait_block(l, before)
    })?;
    c.verify(
        "the check's result reached the live mentor, bounded and labelled",
        Checks::new()
            .check("CLI: check: passed (exit 0)", |_: &mut Case<'_>| {
                expect(&said, "check: passed (exit 0)")
            })
            .check("CLI: Mentor told.", |_| expect(&said, "Mentor told."))
            .check("stub log: labelled as data and closed", |_| {
                match (seen.labelled, seen.closed) {
                    (true, true) => Ok(()),
                    other => Err(format!("(labelled, closed) = {other:?}: {seen:?}")),
                }
            })
            .check("stub log: at most 8 KiB", |_| match seen.bytes {
                b if b <= MAX_BLOCK => Ok(()),
                b => Err(format!("{b} bytes")),
            })
            .check("stub log: every output line prefixed `| `", |_| {
                match (seen.output_lines, seen.unprefixed_lines) {
                    (n, 0) if n >= 1 => Ok(()),
                    other => Err(format!("(output lines, unprefixed) = {other:?}")),
                }
            })
            .check("stub log: the drill and its result", |_| {
                match (seen.drill.as_deref(), seen.result.as_deref()) {
                    (Some(DRILL), Some("passed (exit 0)")) => Ok(()),
                    other => Err(format!("(drill, result) = {other:?}")),
                }
            }),
    )
}

fn expect(said: &str, want: &str) -> Result<(), String> {
    if said.contains(want) {
        return Ok(());
    }
    Err(format!("{want:?} not in the CLI's output: {said}"))
}

/// `studyloop drill check DRILL` behind `script(1)`'s pseudo-terminal, `yes`
/// typed at the prompt; returns what the terminal showed.
fn typed_check(l: &mut Case<'_>) -> Result<String, StepFailure> {
    let studyloop = crate::bins::path("studyloop").map_err(StepFailure::from_error)?;
    let line = format!("'{}' drill check {DRILL}", studyloop.display());
    let scratch = l.scratch()?;
    let mut cmd = scratch.command("sh");
    l.env.apply(&mut cmd).args([
        "-c",
        "printf 'yes\\n' | script -qec \"$0\" /dev/null",
        &line,
    ]);
    let done = scratch
        .run(&mut cmd, crate::door::CLI_TIMEOUT)
        .map_err(StepFailure::from_error)?;
    let out = done.stdout_text().replace('\r', "");
    l.record.attach(
        "product/drill-check.txt",
        format!(
            "$ {line}   (on a terminal; typed: yes)\nexit: {}\n--- terminal\n{out}--- stderr\n{}",
            done.status,
            done.stderr_text()
        ),
    );
    Ok(out)
}

/// Waits for a request after the first `before` records that carries a
/// `practice_check` block.
fn wait_block(
    l: &mut Case<'_>,
    before: usize,
) -> Result<studyloop_stubs::PracticeCheck, StepFailure> {
    let deadline = Instant::now() + BLOCK_TIMEOUT;
    loop {
        crate::interrupt::check("the practice_check block")
            .map_err(|e| StepFailure::cancelled(e.to_string()))?;
        let records = l.stub_records().map_err(StepFailure::from_error)?;
        if let Some(seen) = records
            .iter()
            .skip(before)
            .find_map(|r| r.practice_check.clone())
        {
            l.record
                .detail(serde_json::json!({ "practice_check": seen }));
            return Ok(seen);
        }
        if Instant::now() >= deadline {
            return Err(StepFailure::errored(format!(
                "no request carried a practice_check block within {BLOCK_TIMEOUT:?} ({} requests after the check)",
                records.len().saturating_sub(before)
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
