//! `journey::faults` (ungraded): a real harness over web ACP whose model is
//! `studyloop-stub-provider`, with faults switched on mid-conversation through the
//! stub's `--fault-file`: a 429, a 500, a stall and a truncated stream, one learner turn
//! each, every one followed by a healthy recovery turn. Each time the learner must see a
//! clear message (the console shows the product's `transport_error` text) or the reply
//! itself (the harness recovered on its own, recorded as such); the session must stay
//! consistent (the same live session in the state) and the journey either recovers or
//! ends cleanly. The end, the one `study_sessions` row and the transcript follow; every
//! fault and its recovery go to `faults/<n>-<name>.json`.
//!
//! Only stub-provider mode can inject faults: other modes skip by name.

use std::time::{Duration, Instant};

use serde_json::json;
use studyloop_acceptance::case::{Case, Destination, Finished, StepFailure, Steps};
use studyloop_acceptance::door::ProductDb;
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::lane::setup::make_world;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_actors::{Mentor, MentorError};

use super::product;
use super::study::{START_TIMEOUT, provision_with, resolve};
use super::web::{self, errored};

/// The label every artefact of this cell carries.
pub const LABEL: &str = "fault journey: grades nothing (studyloop-stub-provider, a stub, is the harness's model and injects the faults)";
const TOPIC: &str = "Fault drill: closures";
/// How long the stall holds each model request.
const STALL_MS: u64 = 8_000;

/// One injected fault: its name, the fault-file line, and the words a clear message for
/// it names (any one), in lower case.
pub struct Fault {
    /// Its name in the bundle.
    pub name: &'static str,
    /// The stub's fault-file line.
    pub line: String,
    /// A clear message names the cause in one of these words.
    pub cause: &'static [&'static str],
}

/// The four faults, in the order the journey injects them.
#[must_use]
pub fn faults() -> Vec<Fault> {
    vec![
        Fault {
            name: "rate-limit-429",
            line: "429".into(),
            cause: &["rate limit", "rate-limit", "429", "too many requests"],
        },
        Fault {
            name: "server-error-500",
            line: "500".into(),
            cause: &["server error", "500"],
        },
        Fault {
            name: "stall",
            line: format!("stall {STALL_MS}"),
            cause: &[
                "no answer",
                "timed out",
                "timeout",
                "stalled",
                "not answering",
            ],
        },
        Fault {
            name: "truncated-stream",
            line: "truncate 2".into(),
            cause: &[
                "cut off",
                "incomplete",
                "truncated",
                "ended early",
                "stream",
                "connection",
            ],
        },
    ]
}

/// Whether `message` is clear about `fault`: it names the cause and tells the learner
/// what to do (send again / try again / wait).
#[must_use]
pub fn is_clear(fault: &Fault, message: &str) -> bool {
    // Only the plain words count, not the technical detail the product appends.
    let m = message
        .split("(session/prompt")
        .next()
        .unwrap_or_default()
        .to_lowercase();
    let cause = fault.cause.iter().any(|w| m.contains(w));
    let action = [
        "send it again",
        "send your message again",
        "try again",
        "wait",
    ]
    .iter()
    .any(|w| m.contains(w));
    cause && action
}

/// Runs the cell with `harness` as a case into `dest`.
pub fn run(ctx: &TrialContext, harness: HarnessName, dest: &dyn Destination) -> Finished {
    let mut case = Case::new(ctx, harness, Surface::Journey);
    case.record.notes.push(LABEL.to_owned());
    case.run(dest, drive)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    if c.ctx.selection.auth_mode != AuthMode::StubProvider {
        return Err(StepFailure::skipped(format!(
            "faults are injected by studyloop-stub-provider: run in stub-provider mode (the default), not {}",
            c.ctx.selection.auth_mode.as_str()
        )));
    }
    c.step_doing(
        "scratch",
        "a scratch world for stub-provider mode",
        make_world,
    )?;
    c.step_doing(
        "harness",
        "the harness and its ACP binary, with --version",
        resolve,
    )?;
    let fault_file = c.scratch()?.tmp_dir().join("stub-fault");
    let flag = fault_file.display().to_string();
    c.step_doing(
        "provision",
        "the stub provider with --fault-file (no fault while the file is absent)",
        |c| provision_with(c, &["--fault-file", &flag]),
    )?;
    let opening = web::Opening {
        start_what: "POST /api/session/start (transport acp) with the real harness",
        persona_what: "attach the session socket; the persona is the first prompt",
        topic: TOPIC,
        agent: c.harness.as_str(),
        start_timeout: START_TIMEOUT,
        turn_timeout: c.spec.turn_timeout.max(Duration::from_millis(STALL_MS * 4)),
    };
    let started = web::open_session(c, opening, |_, reply| {
        if reply.trim().is_empty() {
            Err(errored("the persona turn got an empty reply"))
        } else {
            Ok(())
        }
    })?;
    c.step_doing(
        "healthy-turn",
        "one healthy learner turn before any fault",
        |c| turn(c, "What is a closure, in one sentence?").map(drop),
    )?;
    let mut ended_cleanly = false;
    for (n, fault) in faults().iter().enumerate() {
        let outcome = c.step_doing(
            &format!("fault-{}", fault.name),
            &format!("fault file `{}`; one learner turn; a clear message or the reply; the same live session", fault.line),
            |c| inject(c, n + 1, fault, &fault_file, &started.id),
        )?;
        if outcome == After::EndedCleanly {
            ended_cleanly = true;
            break;
        }
    }
    if !ended_cleanly {
        c.step_doing(
            "end",
            "`stop` on the socket; state ended; the agent exited",
            |c| web::end_session(c, &started).map(drop),
        )?;
    }
    c.step_doing(
        "transcript",
        "the socket's turn record: persona, healthy turn, each fault and recovery; no silent turn",
        transcript,
    )?;
    c.step_doing(
        "db-row",
        "exactly one study_sessions row, closed, for the session",
        |c| {
            let db = product::database(c)?;
            let record = ProductDb::open(&db)
                .and_then(|db| db.session_record(&started.id))
                .map_err(errored)?;
            c.record
                .attach_json("db/study_sessions.json", &record.study_sessions())?;
            record.one_closed_session().map(drop).map_err(errored)
        },
    )
}

/// Every turn the socket recorded has a reply or the error the learner saw; the
/// fault turns and their recoveries are all there.
fn transcript(c: &mut Case<'_>) -> Result<(), StepFailure> {
    let turns: Vec<serde_json::Value> = c
        .record
        .files
        .iter()
        .find(|(n, _)| n == "ws-turns.json")
        .and_then(|(_, b)| serde_json::from_slice(b).ok())
        .ok_or_else(|| errored("the bundle has no readable ws-turns.json"))?;
    let silent: Vec<usize> = turns
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            t["reply"].as_str().is_none_or(|r| r.trim().is_empty())
                && t["errors"].as_array().is_none_or(Vec::is_empty)
        })
        .map(|(i, _)| i)
        .collect();
    let faulted = c
        .record
        .files
        .iter()
        .filter(|(n, _)| n.starts_with("faults/"))
        .count();
    let want = 2 + 2 * faulted;
    c.record
        .detail(json!({"turns": turns.len(), "expected": want, "silent": silent}));
    if turns.len() == want && silent.is_empty() {
        Ok(())
    } else {
        Err(errored(format!(
            "the socket recorded {} turn(s) (expected {want}); silent turns at {silent:?}",
            turns.len()
        )))
    }
}

#[derive(Debug, PartialEq, Eq)]
enum After {
    Recovered,
    EndedCleanly,
}

fn turn(c: &mut Case<'_>, text: &str) -> Result<String, StepFailure> {
    c.with_acp(|_, m| m.send(text).map(|r| r.text).map_err(errored))
}

fn inject(
    c: &mut Case<'_>,
    n: usize,
    fault: &Fault,
    file: &std::path::Path,
    session: &str,
) -> Result<After, StepFailure> {
    std::fs::write(file, format!("{}\n", fault.line)).map_err(errored)?;
    let t0 = Instant::now();
    let during = c.with_acp(|_, m| {
        Ok(m.send(&format!(
            "Fault check {n}: why do closures capture variables?"
        )))
    });
    let during_ms = t0.elapsed().as_millis();
    std::fs::remove_file(file).map_err(errored)?;
    let during = during?;
    let state = web::session_state(c)?;
    let (shown, clear) = match &during {
        Ok(reply) => (json!({"reply": reply.text}), !reply.text.trim().is_empty()),
        Err(MentorError::Failed(m)) => (json!({"message": m}), is_clear(fault, m)),
        Err(e) => (json!({"message": e.to_string()}), false),
    };
    let consistent = state.study_session_id() == Some(session) && !state.is_ended();
    // Recovery: the fault is gone; the next turn must be answered, else end cleanly.
    let recovery = c.with_acp(|_, m| Ok(m.send("Thanks. Can you give one short example?")));
    let recovery = recovery?;
    let (after, recovery_json) = match &recovery {
        Ok(r) if !r.text.trim().is_empty() => (After::Recovered, json!({"reply": r.text})),
        other => (After::EndedCleanly, json!({"failed": format!("{other:?}")})),
    };
    let record = json!({
        "fault": fault.line, "during_ms": during_ms, "shown_to_learner": shown,
        "clear_or_answered": clear, "state_after_fault": {"mode": state.mode(), "study_session_id": state.study_session_id()},
        "consistent": consistent, "recovery": recovery_json, "after": format!("{after:?}"),
    });
    c.record
        .attach_json(&format!("faults/{n}-{}.json", fault.name), &record)?;
    c.record.detail(record);
    if !clear {
        return Err(errored(format!(
            "after the {} fault the learner saw {shown}, which neither names the cause ({}) with what to do, nor is the mentor's reply",
            fault.name,
            fault.cause.join(" / ")
        )));
    }
    if !consistent {
        return Err(errored(format!(
            "after the {} fault the session state is {state}",
            fault.name
        )));
    }
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_message_names_the_cause_and_what_to_do() {
        let f = faults();
        assert!(is_clear(
            &f[0],
            "The mentor's model is rate-limited (HTTP 429): wait a moment, then send your message again."
        ));
        assert!(!is_clear(
            &f[0],
            "session/prompt failed: Internal error (-32603)"
        ));
        assert!(!is_clear(&f[0], "rate limit"));
        assert!(!is_clear(&f[1], "try again"));
        assert!(!is_clear(
            &f[1],
            "The mentor's turn failed. Send your message again. (session/prompt failed: HTTP 500)"
        ));
        // JSON-RPC's generic "Internal error" names no cause.
        assert!(!is_clear(
            &f[1],
            "The mentor's turn failed. Send your message again. (Internal error (code -32603))"
        ));
        assert_eq!(
            f.iter().map(|f| f.name).collect::<Vec<_>>(),
            [
                "rate-limit-429",
                "server-error-500",
                "stall",
                "truncated-stream"
            ]
        );
    }
}
