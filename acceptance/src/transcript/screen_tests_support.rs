//! The recorded replies of the samples (each with what the stub sent), shared by
//! the screen tests and the fidelity cases.

use super::tests::{PROMPTS, sample, sent};
use super::{TurnTrace, mentor_reply};
use crate::fidelity::SourceKind;
use crate::selection::HarnessName;

/// (name, sent, recorded, source) for every recorded grok screen turn.
pub(super) fn recorded_samples() -> Vec<(String, String, String, SourceKind)> {
    let mut out = Vec::new();
    let home = tempfile::tempdir().unwrap();
    let screen_text = std::fs::read_to_string(sample("grok-0.0.34-screen.txt")).unwrap();
    for turn in 1..=3_u64 {
        let t = TurnTrace {
            home: home.path(),
            turn,
            screen: &screen_text,
            prompt: PROMPTS[usize::try_from(turn - 1).unwrap()],
        };
        let got = mentor_reply(HarnessName::Grok, &t).unwrap();
        out.push((
            format!("grok screen turn {turn}"),
            sent(turn),
            got.text,
            got.source,
        ));
    }
    let turns: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(sample("grok-0.0.34-lane-sent.json")).unwrap(),
    )
    .unwrap();
    for t in &turns {
        let turn = t["turn"].as_u64().unwrap();
        let screen_text =
            std::fs::read_to_string(sample(&format!("grok-0.0.34-lane-turn-{turn}.txt"))).unwrap();
        let trace = TurnTrace {
            home: home.path(),
            turn,
            screen: &screen_text,
            prompt: t["prompt"].as_str().unwrap(),
        };
        let got = mentor_reply(HarnessName::Grok, &trace).unwrap();
        out.push((
            format!("grok lane turn {turn}"),
            t["sent"].as_str().unwrap().to_owned(),
            got.text,
            got.source,
        ));
    }
    out
}
