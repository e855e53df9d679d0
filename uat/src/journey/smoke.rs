//! `journey::smoke`: a MECHANICS CHECK THAT GRADES NOTHING. The product's web server
//! in a scratch world, `studyloop-stub-acp` (a test double, behind the product's
//! `STUDYLOOP_TEST_ACP_CMD` hatch) as the mentor with canned replies, the v1 turn
//! script's prompts sent by the scripted actor through the session socket, and the full
//! bundle plus its redacted summary in the durable root. It proves the pieces compose;
//! no model and no real harness take part, so there is nothing to grade.

use std::time::Duration;

use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::case::{Case, Destination, Finished, StepFailure, Steps};
use studyloop_acceptance::catalogue;
use studyloop_acceptance::evidence::Surface;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::scratch::{Scratch, TestHatch};
use studyloop_acceptance::selection::{AuthMode, HarnessName};
use studyloop_actors::ActorKind;
use studyloop_stubs::acp::knobs;

use super::web::{self, errored};

/// The label every smoke artefact carries.
pub const LABEL: &str = "mechanics check: grades nothing (studyloop-stub-acp, a test double, played the mentor with canned replies; no model, no real harness)";
/// The topic the smoke starts.
const TOPIC: &str = "UAT smoke";
/// An ACP-capable agent for the start; the hatch replaces its argv with the stub.
const AGENT: HarnessName = HarnessName::Codex;
/// The stub's reply to the persona prompt.
pub const PERSONA_ACK: &str = "UAT smoke: persona received.";
/// Per-turn limit (the stub answers at once).
const TURN_TIMEOUT: Duration = Duration::from_secs(20);

/// The stub's canned reply to learner prompt `n` (1-based) of `prompt`.
#[must_use]
pub fn canned_reply(n: usize, prompt: &str) -> String {
    format!("UAT smoke canned reply {n}: noted \"{prompt}\".")
}

/// `STUB_ACP_PROMPT_UPDATES_SEQ` for the persona then `prompts`: one
/// `agent_message_chunk` per prompt.
#[must_use]
pub fn updates_seq(prompts: &[String]) -> Value {
    let chunk = |text: String| json!([{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}]);
    let mut seq = vec![chunk(PERSONA_ACK.to_owned())];
    seq.extend(
        prompts
            .iter()
            .enumerate()
            .map(|(i, p)| chunk(canned_reply(i + 1, p))),
    );
    Value::Array(seq)
}

/// Runs the smoke as a case into `dest`; how it ended (finish step included).
pub fn run(ctx: &TrialContext, dest: &dyn Destination) -> Finished {
    let mut case = Case::new(ctx, AGENT, Surface::Journey);
    // The scripted learner and a test double: no model on either side.
    case.actor = ActorKind::Scripted;
    let facts = &mut case.record.facts;
    facts.harness = Some("studyloop-stub-acp".into());
    facts.auth_mode = None;
    facts.actor_backend = Some(ActorKind::Scripted.as_str().to_owned());
    case.record.notes.push(LABEL.to_owned());
    case.run(dest, drive)
}

fn drive(c: &mut Case<'_>) -> Result<(), StepFailure> {
    let script = catalogue::default_turn_script().map_err(errored)?;
    let prompts = script.prompts();
    // No stub provider logs what the double sends: its canned replies are the
    // record each reply's fidelity is scored against (the same texts the
    // `conversation` step compares whole).
    c.scripted_replies = Some(
        prompts
            .iter()
            .enumerate()
            .map(|(i, p)| canned_reply(i + 1, p))
            .collect(),
    );
    let stub = bins::path("studyloop-stub-acp").map_err(errored)?;
    c.record.facts.binary_path = Some(stub.display().to_string());
    let frames_log = c.step_doing(
        "scratch",
        "a scrubbed scratch world (own HOME, state dir, sockets)",
        |c| {
            let scratch =
                Scratch::create_with(c.ctx.caller.clone(), AuthMode::Scrubbed).map_err(errored)?;
            let frames_log = scratch.tmp_dir().join("stub-acp-frames.jsonl");
            c.env = scratch
                .env()
                .with_test_hatch(TestHatch::AcpCmd, format!("'{}'", stub.display()))
                .with_var(
                    knobs::STUB_ACP_PROMPT_UPDATES_SEQ,
                    updates_seq(&prompts).to_string(),
                )
                .and_then(|e| e.with_var(knobs::STUB_ACP_LOG, &frames_log))
                .map_err(errored)?;
            c.slots.put_scratch(scratch);
            Ok(frames_log)
        },
    )?;
    let opening = web::Opening {
        start_what: "POST /api/session/start (transport acp); the stub replaces the agent's argv",
        persona_what: "attach the session socket and send the persona first",
        topic: TOPIC,
        agent: AGENT.as_str(),
        start_timeout: web::HTTP_TIMEOUT,
        turn_timeout: TURN_TIMEOUT,
    };
    let started = web::open_session(c, opening, persona)?;
    let talked = c.step_doing(
        "conversation",
        "the scripted actor sends the v1 turn script; each canned reply must come back exactly",
        |c| conversation(c, &prompts),
    );
    let ended = c.step_doing(
        "end",
        "`stop` on the socket; state ended; the agent exited",
        |c| web::end_session(c, &started),
    );
    talked?;
    ended?;
    let log = std::fs::read(&frames_log).map_err(|e| {
        errored(format!(
            "reading the stub's frame log {}: {e}",
            frames_log.display()
        ))
    })?;
    c.record.attach("stub-acp-frames.jsonl", log.clone());
    c.step_doing(
        "stub-received",
        "the stub's own log shows the persona, then each prompt, in order",
        |c| stub_received(c, &log, &started.persona, &prompts),
    )
}

fn persona(c: &mut Case<'_>, reply: &str) -> Result<(), StepFailure> {
    let agent = web::agent(c);
    c.record.detail(json!({"agent": agent, "reply": reply}));
    if reply == PERSONA_ACK {
        Ok(())
    } else {
        Err(errored(format!(
            "the persona turn answered {reply:?}, expected {PERSONA_ACK:?}"
        )))
    }
}

fn conversation(c: &mut Case<'_>, prompts: &[String]) -> Result<(), StepFailure> {
    let talk = web::talk(c).map_err(|mut e| {
        e.message = format!("the conversation failed: {}", e.message);
        e
    })?;
    let got: Vec<String> = talk.replies.into_iter().map(|r| r.text).collect();
    // Exactly the canned replies of the prompts the budget allowed, in order.
    let want: Vec<String> = prompts
        .iter()
        .take(got.len().max(1))
        .enumerate()
        .map(|(i, p)| canned_reply(i + 1, p))
        .collect();
    if got != want {
        return Err(errored(format!(
            "replies {got:?} differ from the canned {want:?}"
        )));
    }
    // Every reply is scored against its canned text: a turn left unknown
    // would fail a release sign-off whose every other cell is genuine.
    let unscored: Vec<u64> = c
        .record
        .fidelity
        .iter()
        .filter(|t| t.verdict.is_none())
        .map(|t| t.turn)
        .collect();
    if unscored.is_empty() && !c.record.fidelity.is_empty() {
        Ok(())
    } else {
        Err(errored(format!(
            "turn(s) {unscored:?} of {} recorded have no fidelity verdict; each is scored against its canned reply",
            c.record.fidelity.len()
        )))
    }
}

/// The prompt texts the stub logged, in order (from its inbound `session/prompt` frames).
fn logged_prompts(log: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(log)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|f| f["method"] == "session/prompt")
        .filter_map(|f| {
            f["params"]["prompt"].as_array().map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<String>()
            })
        })
        .collect()
}

fn stub_received(
    c: &mut Case<'_>,
    log: &[u8],
    persona: &str,
    prompts: &[String],
) -> Result<(), StepFailure> {
    let got = logged_prompts(log);
    let sent = c.record.transcript.as_ref().map_or(0, |t| t.turns.len());
    let mut want = vec![persona.to_owned()];
    want.extend(prompts.iter().take(sent).cloned());
    c.record
        .detail(json!({"prompts_logged": got.len(), "prompts_expected": want.len()}));
    if got == want {
        Ok(())
    } else {
        Err(errored(format!(
            "the stub logged {} prompt(s) {:?}…, expected the persona then {prompts:?}",
            got.len(),
            got.iter()
                .map(|p| p.chars().take(40).collect::<String>())
                .collect::<Vec<_>>()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seq_answers_the_persona_then_each_prompt_with_its_canned_reply() {
        let prompts = vec!["a?".to_owned(), "b?".to_owned()];
        let seq = updates_seq(&prompts);
        let texts: Vec<&str> = seq
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u[0]["content"]["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [PERSONA_ACK, &canned_reply(1, "a?"), &canned_reply(2, "b?")]
        );
        assert!(seq[0][0]["sessionUpdate"] == "agent_message_chunk");
    }

    #[test]
    fn logged_prompts_reads_prompt_frames_only_in_order() {
        let log = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"first"}]}}"#,
            "\n",
            "not json\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"sec"},{"type":"text","text":"ond"}]}}"#,
            "\n",
        );
        assert_eq!(logged_prompts(log.as_bytes()), ["first", "second"]);
    }

    #[test]
    fn the_label_says_it_grades_nothing() {
        assert!(LABEL.starts_with("mechanics check: grades nothing"));
        assert!(LABEL.contains("test double"));
    }
}
