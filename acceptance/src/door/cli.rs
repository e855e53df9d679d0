//! The product's own CLI, run in a case's scratch env: the one way lanes and
//! journeys call `studyloop <args>`, under one timeout. Each call's transcript
//! (argv, exit, stdout, stderr) goes to `product/<tag>.txt` in the bundle.

use std::time::Duration;

use crate::bins;
use crate::case::{Case, StepFailure};

/// How long one `studyloop` CLI call may take (a start waits for the harness's pane;
/// an end for its teardown).
pub const CLI_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `studyloop <args>` in `c`'s env; returns its stdout.
///
/// # Errors
/// The binary is not built, the call timed out or was interrupted, or it
/// exited non-zero (the message quotes the end of its stderr).
pub fn studyloop(c: &mut Case<'_>, tag: &str, args: &[&str]) -> Result<String, StepFailure> {
    let studyloop = bins::path("studyloop").map_err(StepFailure::from_error)?;
    let scratch = c.scratch()?;
    let mut cmd = scratch.command(&studyloop);
    c.env.apply(&mut cmd).args(args);
    let done = scratch
        .run(&mut cmd, CLI_TIMEOUT)
        .map_err(StepFailure::from_error)?;
    let (out, err) = (done.stdout_text(), done.stderr_text());
    c.record.attach(
        format!("product/{tag}.txt"),
        format!(
            "$ studyloop {}\nexit: {}\n--- stdout\n{out}--- stderr\n{err}",
            args.join(" "),
            done.status
        ),
    );
    if done.status.success() {
        return Ok(out);
    }
    let tail: Vec<&str> = err.lines().rev().take(3).collect();
    Err(StepFailure::errored(format!(
        "`studyloop {}` exited {}: {}",
        args.join(" "),
        done.status,
        tail.join(" / ")
    )))
}

/// The `result` of what `studyloop COMMAND --json` printed: the product's success
/// envelope `{"schema_version": 1, "command", "result"}`
/// (docs/schemas/envelope.schema.json), named `command` (`status`, `search`, …).
///
/// # Errors
/// The output is not JSON, is the failure `{"error": …}`, or is not that command's
/// success; the message quotes the start of it.
pub fn json_result(out: &str, command: &str) -> Result<serde_json::Value, String> {
    let v: serde_json::Value = serde_json::from_str(out)
        .map_err(|e| format!("`{command} --json` printed no JSON ({e}): {out:.300}"))?;
    if v["schema_version"] != 1 || v["command"] != command {
        return Err(format!(
            "`{command} --json` printed no `{command}` success envelope: {out:.300}"
        ));
    }
    Ok(v["result"].clone())
}
