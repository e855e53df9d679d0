//! `journey::smoke`: a MECHANICS CHECK THAT GRADES NOTHING. The product's web server
//! in a scratch world, `studyloop-stub-acp` (a test double, behind the product's
//! `STUDYLOOP_TEST_ACP_CMD` hatch) as the mentor with canned replies, the v1 turn
//! script's prompts sent by the scripted actor through the session socket, and the full
//! bundle plus its redacted summary in the durable root. It proves the pieces compose;
//! no model and no real harness take part, so there is nothing to grade.

use std::time::Duration;

use serde_json::{Value, json};
use studyloop_acceptance::bins;
use studyloop_acceptance::catalogue;
use studyloop_acceptance::lane::LaneFailure;
use studyloop_acceptance::runner::TrialContext;
use studyloop_acceptance::scratch::{Scratch, TestHatch};
use studyloop_acceptance::selection::AuthMode;
use studyloop_acceptance::web_acp::{AcpMentor, WebServer};
use studyloop_actors::{ActorKind, ActorOptions, Budget, CancelToken, factory};
use studyloop_stubs::acp::knobs;

use super::record::Journey;
use super::web::{self, Started, errored};

/// The label every smoke artefact carries.
pub const LABEL: &str = "mechanics check: grades nothing (studyloop-stub-acp, a test double, played the mentor with canned replies; no model, no real harness)";
/// The topic the smoke starts.
const TOPIC: &str = "UAT smoke";
/// An ACP-capable agent name for the start; the hatch replaces its argv with the stub.
const AGENT: &str = "codex";
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

/// Runs the smoke; returns the journey record and how it ended (shutdown included).
pub fn run(ctx: &TrialContext) -> (Journey, Result<(), LaneFailure>) {
    let mut j = Journey::new(ctx.name.as_str(), LABEL);
    j.notes.push(LABEL.to_owned());
    j.facts.harness = Some("studyloop-stub-acp".into());
    j.facts.actor_backend = Some(ActorKind::Scripted.as_str().to_owned());
    let mut scratch = None;
    let mut server = None;
    let result = drive(ctx, &mut j, &mut scratch, &mut server);
    let result = web::shutdown(&mut j, server, scratch, result);
    (j, result)
}

fn drive(
    ctx: &TrialContext,
    j: &mut Journey,
    scratch_slot: &mut Option<Scratch>,
    server_slot: &mut Option<WebServer>,
) -> Result<(), LaneFailure> {
    let script = catalogue::default_turn_script().map_err(errored)?;
    let prompts = script.prompts();
    let stub = bins::path("studyloop-stub-acp").map_err(errored)?;
    j.facts.binary_path = Some(stub.display().to_string());
    let scratch = j.step(
        "scratch",
        "a scrubbed scratch world (own HOME, state dir, sockets)",
        |_| Scratch::create_with(ctx.caller.clone(), AuthMode::Scrubbed).map_err(errored),
    )?;
    let frames_log = scratch.tmp_dir().join("stub-acp-frames.jsonl");
    let env = scratch
        .env()
        .with_test_hatch(TestHatch::AcpCmd, format!("'{}'", stub.display()))
        .with_var(
            knobs::STUB_ACP_PROMPT_UPDATES_SEQ,
            updates_seq(&prompts).to_string(),
        )
        .and_then(|e| e.with_var(knobs::STUB_ACP_LOG, &frames_log))
        .map_err(errored)?;
    let scratch = scratch_slot.insert(scratch);
    let server = j.step(
        "server-start",
        "studyloop web --port 0 in the scratch world",
        |j| web::start_server(j, scratch, &env),
    )?;
    let server = server_slot.insert(server);
    let started = j.step(
        "session-start",
        "POST /api/session/start (transport acp); the stub replaces the agent's argv",
        |j| web::start_session(j, server, TOPIC, AGENT, web::HTTP_TIMEOUT),
    )?;
    let mut mentor = j.step(
        "persona",
        "attach the session socket and send the persona first",
        |j| persona(j, server, &started),
    )?;
    let talked = j.step(
        "conversation",
        "the scripted actor sends the v1 turn script; each canned reply must come back exactly",
        |j| converse(j, &mut mentor, &prompts),
    );
    let ended = j.step(
        "end",
        "`stop` on the socket; state ended; the agent exited",
        |j| web::end_session(j, server, mentor, &started),
    );
    talked?;
    ended?;
    let log = std::fs::read(&frames_log).unwrap_or_default();
    j.attach("stub-acp-frames.jsonl", log.clone());
    j.step(
        "stub-received",
        "the stub's own log shows the persona, then each prompt, in order",
        |j| stub_received(j, &log, &started.persona, &prompts),
    )
}

fn persona(
    j: &mut Journey,
    server: &WebServer,
    started: &Started,
) -> Result<AcpMentor, LaneFailure> {
    let mut mentor =
        AcpMentor::attach(&server.addr, &started.ws_url, TURN_TIMEOUT).map_err(errored)?;
    let reply = mentor.deliver_persona(&started.persona).map_err(errored)?;
    j.detail(json!({"agent": mentor.agent, "reply": reply}));
    if reply == PERSONA_ACK {
        Ok(mentor)
    } else {
        Err(errored(format!(
            "the persona turn answered {reply:?}, expected {PERSONA_ACK:?}"
        )))
    }
}

fn converse(
    j: &mut Journey,
    mentor: &mut AcpMentor,
    prompts: &[String],
) -> Result<(), LaneFailure> {
    let script = catalogue::default_turn_script().map_err(errored)?;
    let options = ActorOptions {
        turn_script: Some(script),
        ..ActorOptions::default()
    };
    let mut actor =
        factory::build(ActorKind::Scripted, &[] as &[(&str, &str)], options).map_err(errored)?;
    let max_turns = u32::try_from(prompts.len()).unwrap_or(u32::MAX);
    let mut budget = Budget::new(max_turns, None).map_err(errored)?;
    let transcript = actor.converse(mentor, &mut budget, &CancelToken::new());
    let got: Vec<String> = transcript
        .turns
        .iter()
        .map(|t| t.mentor_reply.clone())
        .collect();
    let want: Vec<String> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| canned_reply(i + 1, p))
        .collect();
    j.detail(json!({"outcome": transcript.outcome, "turns": got.len(), "error": transcript.error}));
    let exact = got == want;
    let error = transcript.error.clone();
    j.transcript = Some(transcript);
    if let Some(e) = error {
        return Err(errored(format!("the conversation failed: {e}")));
    }
    if exact {
        Ok(())
    } else {
        Err(errored(format!(
            "replies {got:?} differ from the canned {want:?}"
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
    j: &mut Journey,
    log: &[u8],
    persona: &str,
    prompts: &[String],
) -> Result<(), LaneFailure> {
    let got = logged_prompts(log);
    let mut want = vec![persona.to_owned()];
    want.extend(prompts.iter().cloned());
    j.detail(json!({"prompts_logged": got.len(), "prompts_expected": want.len()}));
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
