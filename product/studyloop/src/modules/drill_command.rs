//! `studyloop drill PHASE MODULE/DECK/TASK`: plan → show → typed consent →
//! (refuse a kubeconfig-context target) → run → verdict → for a check, the
//! `practice_check` block to the mentor. Exit codes: 0 passed / ok, 1 the
//! check failed (task not complete) or the cleanup failed, 2 could not run
//! (declined, refused, timed out, crashed, setup failed).

use std::fmt::Write as _;
use std::io::Write as _;

use super::block::{self, CheckResult};
use super::deliver::deliver;
use super::drill::{self, Plan};
use super::error::ModuleError;
use super::runner::{self, Outcome};
use super::store::Store;
use super::usage;
use crate::context::Ctx;

/// `studyloop drill` arguments.
#[derive(Debug, clap::Args)]
pub struct DrillArgs {
    /// setup, check or cleanup.
    pub phase: String,
    /// MODULE/DECK/TASK, e.g. my-drills/getting-started/ready-01.
    pub drill: String,
}

fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(crate::term::text(text).as_bytes());
    let _ = o.flush();
}

/// Runs one drill phase; returns the exit code.
pub(crate) fn run(ctx: &Ctx, args: &DrillArgs) -> Result<u8, ModuleError> {
    let plan = drill::plan(&ctx.env, &args.phase, &args.drill)?;
    out(&drill::describe(&plan));
    let tty = rustix::termios::isatty(std::io::stdin());
    let yes = drill::consent(tty, &mut std::io::stdin().lock(), &mut std::io::stdout())?;
    if !yes {
        out("Not run: the answer was not yes.\n");
        return Ok(2);
    }
    if plan.target == "kubeconfig-context" {
        out(
            "Refused: this drill targets a kubeconfig-context cluster, and creating that disposable cluster is not wired yet; nothing ran.\n",
        );
        return Ok(2);
    }
    let store = Store::new(&ctx.env)?;
    let attempt = runner::attempt(&store.dir, &plan)?;
    let outcome = runner::run(&plan, &attempt)?;
    show(&outcome);
    let (code, verdict, detail) = verdict(&plan, &outcome);
    out(&format!("{}: {verdict} ({detail})\n", plan.phase));
    if plan.phase == "check" {
        let text = block::render(&CheckResult {
            drill: &plan.drill,
            attempt: &attempt.id,
            verdict,
            detail: &detail,
            output: &outcome.output,
        });
        match deliver(&ctx.env, &text) {
            Ok(()) => out("Mentor told.\n"),
            Err(why) => out(&format!("Mentor not told: {why}\n")),
        }
    }
    if plan.phase == "cleanup" {
        runner::close(&attempt)?;
        out("Attempt closed.\n");
    }
    Ok(code)
}

fn show(o: &Outcome) {
    let mut text = String::new();
    // The learner's terminal gets the output inert (no escape sequences, no
    // break or bidi control posing as a line of StudyLoop's own).
    for line in crate::term::text(&o.output).lines() {
        text.push_str("| ");
        text.push_str(line);
        text.push('\n');
    }
    if o.truncated {
        let _ = writeln!(text, "| … (output capped at {} bytes)", runner::MAX_OUTPUT);
    }
    if let Some(n) = o.stopped.filter(|n| *n > 0) {
        let _ = writeln!(text, "Stopped {n} process(es) the phase left running.");
    }
    out(&text);
}

/// (exit code, verdict, detail). A timeout is an error, never a fail.
fn verdict(plan: &Plan, o: &Outcome) -> (u8, &'static str, String) {
    let detail = match (o.timed_out, o.code) {
        _ if o.over_disk.is_some() => format!(
            "stopped: the attempt outgrew its disk bound ({} MiB in {} entries at most); an error, not a fail",
            usage::MAX_ATTEMPT_BYTES >> 20,
            usage::MAX_ATTEMPT_ENTRIES
        ),
        (true, _) => format!(
            "timed out after {} s; a timeout is an error, not a fail",
            plan.timeout_seconds
        ),
        (false, Some(c)) => format!("exit {c}"),
        (false, None) => "killed by a signal".to_owned(),
    };
    let code = if o.timed_out || o.over_disk.is_some() {
        None
    } else {
        o.code
    };
    match (plan.phase, code) {
        ("check", Some(0)) => (0, "passed", detail),
        ("check", Some(1)) => (1, "failed", detail),
        ("cleanup", Some(0)) | ("setup", Some(0)) => (0, "ok", detail),
        ("cleanup", _) => (1, "cleanup failed; the attempt closes anyway", detail),
        _ => (2, "error", detail),
    }
}
